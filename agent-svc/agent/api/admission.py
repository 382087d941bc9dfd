"""Per-client limits: RATE_LIMIT_PER_MIN on the requests that start work, and RANKED_CONCURRENCY_PER_KEY on
the costly ones in flight. A client is an API key, or the caller's address when keyless (auth.py names it).

Both are in-process: several replicas each count alone (the README says how to route a key to one replica).
The gate (auth.py) counts the per-minute limit before the body is read; the cap needs the parsed request, so
handlers call `admit_search` or `admit_costly`, and the gate frees the slot once the response is sent,
streamed ones included.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import UTC, datetime

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

Clock = Callable[[], float]


class _Window:
    __slots__ = ("count", "ends")

    def __init__(self, ends: float) -> None:
        self.ends = ends
        self.count = 0


class RateLimiter:
    """A fixed one-minute window per client, opened by its first request, as Firecrawl's own limiter counts
    (so its 429 wording fits): `per_minute` requests, then 429s until the window ends."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic, wall_clock: Clock = time.time) -> None:
        self.per_minute = per_minute
        self._clock, self._wall_clock = clock, wall_clock
        self._windows: dict[str, _Window] = {}
        self._next_sweep = clock() + WINDOW_S

    def hit(self, client: str) -> RateLimited | None:
        """Count one request of `client`; the 429 to answer when it is over the limit, else None."""
        now = self._clock()
        window = self._windows.get(client)
        if window is None or now >= window.ends:
            self._sweep(now)
            window = self._windows[client] = _Window(now + WINDOW_S)
        window.count += 1
        if window.count <= self.per_minute:
            return None
        wait = max(1, math.ceil(window.ends - now))
        resets = datetime.fromtimestamp(self._wall_clock() + (window.ends - now), UTC).isoformat(timespec="seconds")
        return RateLimited(f"Rate limit exceeded. Consumed (req/min): {window.count}, Remaining (req/min): 0. "
                           f"Please retry after {wait}s, resets at {resets}", wait)

    def _sweep(self, now: float) -> None:
        """Forget ended windows, at most once a minute: memory stays bounded by the clients of one minute."""
        if now < self._next_sweep:
            return
        self._windows = {client: w for client, w in self._windows.items() if w.ends > now}
        self._next_sweep = now + WINDOW_S


class ConcurrencyCap:
    """At most `per_client` costly requests of one client at once; one more is a 429 (not a queue: a queue
    would hold the client's connection while its own requests use the CPU)."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._running: dict[str, int] = {}

    def take(self, client: str) -> Callable[[], None]:
        """Take a slot of `client`'s; returns what frees it. Raises RateLimited when all are taken."""
        running = self._running.get(client, 0)
        if running >= self.per_client:
            raise RateLimited(
                f"Rate limit exceeded. Concurrent ranked or rich requests: {running}, allowed: {self.per_client}. "
                f"Please retry after {COSTLY_RETRY_AFTER_S}s, or when one of them has finished",
                COSTLY_RETRY_AFTER_S)
        self._running[client] = running + 1
        return lambda: self._release(client)

    def _release(self, client: str) -> None:
        running = self._running[client] - 1
        if running:
            self._running[client] = running
        else:
            del self._running[client]


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


def admit_search(request: Request, query: SearchQuery) -> None:
    """Hold one of the client's costly slots for a costly search until its response is sent; 429 when none."""
    if is_costly(query):
        admit_costly(request)


def admit_costly(request: Request) -> None:
    """Hold one of the client's costly slots until the response is sent (the gate frees it); 429 when none
    is free. Nothing to do when RANKED_CONCURRENCY_PER_KEY is 0."""
    cap: ConcurrencyCap | None = request.app.state.costly_cap
    if cap is not None:
        request.scope[RELEASES].append(cap.take(request.scope[CLIENT]))
