"""Per-client limits: RATE_LIMIT_PER_MIN on the requests that start work, and RANKED_CONCURRENCY_PER_KEY on
the costly ones in flight. A client is an API key, or the caller's address when keyless (auth.py names it).

Their interface, wording and stores are state/limits/ (in the process, or in the Redis of REDIS_URL). The gate
(auth.py) counts the per-minute limit before the body is read; the cap needs the parsed request, so the front
door calls `admit_search` or `admit_costly`, and the gate frees the slot once the response is sent, streamed
ones included.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import Scope

from agent.core.query import SearchQuery
from agent.ranking.modes import MODES
from agent.state.limits import CostlyCap

KEY_CLIENT = "key:"  # the prefix of a client named by its API key (auth.py); a keyless one is "addr:…"
CLIENT = "wisp.client"  # scope keys the gate sets: who calls, and what to free when the response is done
RELEASES = "wisp.releases"
# an MCP session's messages are not counted: the tool calls among them reach /v2 in-process, and are counted there
UNCOUNTED_PATHS = frozenset({"/mcp", "/mcp/"})


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
