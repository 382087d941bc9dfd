"""Per-client limits: RATE_LIMIT_PER_MIN on the requests that start work, and RANKED_CONCURRENCY_PER_KEY on
the costly ones in flight. A client is an API key, or the caller's address when keyless (auth.py names it).

This module is their interface and wording; limits_memory.py counts in the process (one replica), and
limits_redis.py in the Redis of REDIS_URL (every replica together, the process's count while Redis is down).
The gate (auth.py) counts the per-minute limit before the body is read; the cap needs the parsed request, so
handlers call `admit_search` or `admit_costly`, and the gate frees the slot once the response is sent,
streamed ones included.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from starlette.requests import Request
from starlette.types import Scope

from agent.core.query import SearchQuery
from agent.errors import RateLimited
from agent.ranking.modes import MODES

WINDOW_S = 60.0
KEY_CLIENT = "key:"  # the prefix of a client named by its API key (auth.py); a keyless one is "addr:…"
CLIENT = "wisp.client"  # scope keys the gate sets: who calls, and what to free when the response is done
RELEASES = "wisp.releases"
# an MCP session's messages are not counted: the tool calls among them reach /v2 in-process, and are counted there
UNCOUNTED_PATHS = frozenset({"/mcp", "/mcp/"})
COSTLY_RETRY_AFTER_S = 1  # a costly request takes about 0.5 to 8 s: a second later a slot is likely free

Release = Callable[[], Awaitable[None]]


class PerMinuteLimit(Protocol):
    async def hit(self, client: str) -> RateLimited | None:
        """Count one request of `client`; the 429 to answer when it is over the limit, else None."""


class CostlyCap(Protocol):
    async def take(self, client: str) -> Release:
        """Take a slot of `client`'s; returns what frees it. Raises RateLimited when all are taken."""


class SharedStore(Protocol):
    """Where limits are counted when it is not the process: its state for /readyz, and its connections."""

    async def warning(self) -> str | None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Limits:
    """What a service limits (None: no such limit), and the store they share, if any."""

    per_minute: PerMinuteLimit | None = None
    costly: CostlyCap | None = None
    store: SharedStore | None = field(default=None, repr=False)

    async def warnings(self) -> list[str]:
        """What /readyz says of the limits: why they are counted per process when they should not be."""
        found = await self.store.warning() if self.store else None
        return [found] if found else []

    async def close(self) -> None:
        if self.store:
            await self.store.close()


def over_per_minute(consumed: int, reset_in_s: float, wall_now: float) -> RateLimited:
    """The 429 of a client past its per-minute limit, as Firecrawl's limiter words it (its SDKs show it)."""
    wait = max(1, math.ceil(reset_in_s))
    resets = datetime.fromtimestamp(wall_now + reset_in_s, UTC).isoformat(timespec="seconds")
    return RateLimited(f"Rate limit exceeded. Consumed (req/min): {consumed}, Remaining (req/min): 0. "
                       f"Please retry after {wait}s, resets at {resets}", wait)


def over_cap(running: int, allowed: int) -> RateLimited:
    """The 429 of a client with all its costly slots taken."""
    return RateLimited(f"Rate limit exceeded. Concurrent ranked or rich requests: {running}, allowed: {allowed}. "
                       f"Please retry after {COSTLY_RETRY_AFTER_S}s, or when one of them has finished",
                       COSTLY_RETRY_AFTER_S)


def caller(scope: Scope) -> str:
    """The client a keyless request counts as: its address."""
    return f"addr:{scope['client'][0]}" if scope.get("client") else "addr:unknown"


def starts_work(scope: Scope) -> bool:
    """Whether a request starts work, which the per-minute limit and the usage count: the POSTs, MCP's excepted."""
    return scope.get("method") == "POST" and scope["path"] not in UNCOUNTED_PATHS


def is_costly(query: SearchQuery) -> bool:
    """A costly mode (its registry entry says), reranking, rich answers, and pages fetched for Documents or
    per-page answers: they use the extraction workers, semantic-svc's model or the LLM, up to seconds of CPU
    each. The query must be `prepared` (its mode filled in)."""
    return (MODES[query.retrieval_mode].costly or query.rerank or query.search_type == "rich"
            or bool(query.scrape_formats) or bool(query.page_asks))


async def admit_search(request: Request, query: SearchQuery) -> None:
    """Hold one of the client's costly slots for a costly search until its response is sent; 429 when none."""
    if is_costly(query):
        await admit_costly(request)


async def admit_costly(request: Request) -> None:
    """Hold one of the client's costly slots until the response is sent (the gate frees it); 429 when none
    is free. Nothing to do when RANKED_CONCURRENCY_PER_KEY is 0."""
    cap: CostlyCap | None = request.app.state.limits.costly
    if cap is not None:
        request.scope[RELEASES].append(await cap.take(request.scope[CLIENT]))
