"""The retrieval modes of /v2/search, one module each, found through one registry.

A mode takes the query and the request's context and returns the results per bucket in final order.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent.context import SearchContext, SearchOutcome
from agent.errors import NotImplementedYet
from agent.modes import hybrid, keyword, semantic
from agent.query import SearchQuery

Mode = Callable[[SearchQuery, SearchContext], Awaitable[SearchOutcome]]

MODES: dict[str, Mode] = {"keyword": keyword.run, "semantic": semantic.run, "hybrid": hybrid.run}


def get_mode(name: str) -> Mode:
    if name in MODES:
        return MODES[name]
    raise NotImplementedYet(
        f"retrieval_mode {name!r} is not implemented yet; available: {', '.join(MODES)}"
    )
