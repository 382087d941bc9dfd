"""One search from the internal query to the results per bucket: pick the mode and the search type, bound
them by the request's timeout.

The search types are a registry like the modes: `fast` returns the mode's results as they are, `rich` adds
a cited answer (rich.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from typing import TypeVar

from agent import metrics
from agent.answers.rich import rich
from agent.config import Settings
from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.errors import BadRequest, SearchTimeout
from agent.ranking.features import FEATURES
from agent.ranking.fusion import FUSIONS
from agent.ranking.modes import MODES
from agent.search.documents import attach_documents
from agent.services import Services
from agent.upstream.clients import Upstreams

T = TypeVar("T")
SearchType = Callable[[SearchOutcome, SearchQuery, SearchContext, Upstreams], Awaitable[SearchOutcome]]


async def _fast(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
    return outcome


SEARCH_TYPES: dict[str, SearchType] = {"fast": _fast, "rich": rich}
DEFAULT_RICH_MODE = "hybrid"  # a rich answer wants page passages; the service default is keyword for the SDKs


async def run_search(query: SearchQuery, services: Services, on_text: Callable[[str], None] | None = None
                     ) -> SearchOutcome:
    """Run a `prepared` query's retrieval mode and search type within its `timeout`; the outcome carries the
    stage timings. `on_text` gets a rich answer's text as the model writes it."""
    metrics.note_mode(query.retrieval_mode)
    mode, search_type = MODES[query.retrieval_mode], SEARCH_TYPES[query.search_type]
    ctx, up = services.context(query.timeout_ms / 1000, on_text, query.cache_use), services.upstreams
    try:
        async with asyncio.timeout(query.timeout_ms / 1000):
            outcome = await mode.run(query, ctx, up)
            outcome = await search_type(await attach_documents(outcome, query, ctx, up), query, ctx, up)
    except TimeoutError:
        message = f"the search did not finish within the request's timeout of {query.timeout_ms} ms"
        raise SearchTimeout(message) from None
    finally:
        metrics.observe_stages(query.retrieval_mode, ctx.timings)
    metrics.degraded(outcome.degradations)
    if services.settings.index_organic:
        services.ingest.in_background(p for p in outcome.pages.values() if p.extracted is not None)
    return replace(outcome, timings=ctx.timings.as_dict())


def prepared(query: SearchQuery, settings: Settings, field: str = "query") -> SearchQuery:
    """The query with the service's defaults filled in; a 400 for a mode or search type no registry holds, or
    for a query (the request's `field`) past MAX_QUERY_CHARS or domains past MAX_DOMAINS, whichever API it came
    through (checked before a streamed answer starts, so that it is a plain 400)."""
    if len(query.query) > settings.max_query_chars:
        raise BadRequest(f"{field} has {len(query.query)} characters; at most {settings.max_query_chars} are "
                         "accepted")
    if (domains := max(len(query.include_domains), len(query.exclude_domains))) > settings.max_domains:
        raise BadRequest(f"{domains} domains to include or exclude; at most {settings.max_domains} are accepted")
    if not query.search_type:
        query = replace(query, search_type=settings.default_search_type)
    if not query.retrieval_mode:
        default = DEFAULT_RICH_MODE if query.search_type == "rich" else settings.default_retrieval_mode
        query = replace(query, retrieval_mode=default)
    _known(MODES, query.retrieval_mode, "retrieval_mode")
    _known(SEARCH_TYPES, query.search_type, "search_type")
    return query


def check_names(settings: Settings) -> None:
    """A ValueError naming the setting when a setting names no registered mode, search type, fusion or page
    feature: checked where the app is made, so that a typo fails the start, not the first request."""
    _registered(settings.default_retrieval_mode, MODES, "DEFAULT_RETRIEVAL_MODE")
    _registered(settings.default_search_type, SEARCH_TYPES, "DEFAULT_SEARCH_TYPE")
    for name in ("semantic_fusion", "hybrid_fusion"):
        _registered(getattr(settings, name), FUSIONS, name.upper())
    for name in ("semantic_fusion_weights", "hybrid_fusion_weights"):
        for feature in getattr(settings, name):
            _registered(feature, FEATURES, f"{name.upper()} key")


def _registered(name: str, registry: Collection[str], setting: str) -> None:
    if name not in registry:
        raise ValueError(f"{setting} {name!r} is not registered; available: {', '.join(registry)}")


def _known(registry: dict[str, T], name: str, field: str) -> T:
    if name not in registry:
        raise BadRequest(f"unknown {field} {name!r}; available: {', '.join(registry)}")
    return registry[name]
