"""One search from the internal query to the results per bucket: pick the mode and the search type, bound
them by the request's timeout, and assemble the outcome once from what each stage made.

The search types are a registry like the modes: `fast` returns the mode's results as they are, `rich` adds
a cited answer (answers/rich.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, replace
from typing import TypeVar

from agent import metrics
from agent.answers.rich import Answers, Question, Rich
from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import source
from agent.errors import BadRequest, SearchTimeout
from agent.ranking.modes import MODES
from agent.ranking.pack import context_text
from agent.ranking.stage import Ranking
from agent.search.documents import attach_documents
from agent.search.settings import SearchSettings
from agent.services import Services

T = TypeVar("T")
# a search type: the mode's outcome, the query and its context, the answer stage → what it adds (None: nothing)
SearchType = Callable[[SearchOutcome, SearchQuery, SearchContext, Answers], Awaitable[Rich | None]]


async def _fast(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext, answers: Answers) -> None:
    return None


async def _rich(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext, answers: Answers) -> Rich:
    question = Question(query.query, query.system_prompt, query.output_schema, query.llm_model, query.explain)
    hits = [h for name, bucket in outcome.buckets.items() if source(name).ranked for h in bucket]
    return await answers.rich(question, outcome.packed, hits, ctx)


SEARCH_TYPES: dict[str, SearchType] = {"fast": _fast, "rich": _rich}
DEFAULT_RICH_MODE = "hybrid"  # a rich answer wants page passages; the service default is keyword for the SDKs


@dataclass(frozen=True)
class Search:
    """The search stage, made once at start-up: its settings, the ranking stage (every mode bound to its own
    settings), and the services."""

    settings: SearchSettings
    ranking: Ranking
    services: Services

    def prepared(self, query: SearchQuery, field: str = "query") -> SearchQuery:
        """The query with the service's defaults filled in; a 400 for a mode or search type no registry holds,
        or for a query (the request's `field`) past MAX_QUERY_CHARS or domains past MAX_DOMAINS, whichever API
        it came through (checked before a streamed answer starts, so that it is a plain 400)."""
        settings = self.settings
        if len(query.query) > settings.max_query_chars:
            raise BadRequest(f"{field} has {len(query.query)} characters; at most {settings.max_query_chars} are "
                             "accepted")
        if (domains := max(len(query.include_domains), len(query.exclude_domains))) > settings.max_domains:
            raise BadRequest(f"{domains} domains to include or exclude; at most {settings.max_domains} are "
                             "accepted")
        if not query.search_type:
            query = replace(query, search_type=settings.default_search_type)
        if not query.retrieval_mode:
            default = DEFAULT_RICH_MODE if query.search_type == "rich" else settings.default_retrieval_mode
            query = replace(query, retrieval_mode=default)
        _known(MODES, query.retrieval_mode, "retrieval_mode")
        _known(SEARCH_TYPES, query.search_type, "search_type")
        return query

    def query_limit(self, text: str) -> str:
        """`text` cut to MAX_QUERY_CHARS: a prompt searched as a query."""
        return text[:self.settings.max_query_chars]

    async def run(self, query: SearchQuery, on_text: Callable[[str], None] | None = None) -> SearchOutcome:
        """Run a `prepared` query's retrieval mode and search type within its `timeout`; the outcome carries the
        stage timings. `on_text` gets a rich answer's text as the model writes it."""
        metrics.note_mode(query.retrieval_mode)
        services = self.services
        run, search_type = self.ranking.modes[query.retrieval_mode], SEARCH_TYPES[query.search_type]
        ctx = services.context(query.timeout_ms / 1000, on_text, query.cache_use)
        try:
            async with asyncio.timeout(query.timeout_ms / 1000):
                found = await attach_documents(await run(query, ctx, services.upstreams), query, ctx,
                                               services.answers)
                rich = await search_type(found, query, ctx, services.answers)
        except TimeoutError:
            message = f"the search did not finish within the request's timeout of {query.timeout_ms} ms"
            raise SearchTimeout(message) from None
        finally:
            metrics.observe_stages(query.retrieval_mode, ctx.timings)
        outcome = _outcome(found, rich, ctx)
        metrics.degraded(outcome.degradations)
        if self.settings.index_organic:
            services.ingest.in_background(p for p in outcome.pages.values() if p.extracted is not None)
        return outcome

    async def similar(self, seed_url: str, limit: int, timeout_ms: int) -> tuple[SearchOutcome, SearchQuery]:
        """POST /v2/similar: the pages most like `seed_url` (ranking/similar.py)."""
        ctx = self.services.context(timeout_ms / 1000)
        return await self.ranking.similar(seed_url, limit, timeout_ms, ctx, self.services.upstreams)


def check_defaults(settings: SearchSettings) -> None:
    """A ValueError naming the setting when a default names no registered mode or search type: checked where
    the app is made, so that a typo fails the start, not the first request (a fusion's name is checked where it
    is read: ranking/fusion.py)."""
    _registered(settings.default_retrieval_mode, MODES, "DEFAULT_RETRIEVAL_MODE")
    _registered(settings.default_search_type, SEARCH_TYPES, "DEFAULT_SEARCH_TYPE")


def _outcome(found: SearchOutcome, rich: Rich | None, ctx: SearchContext) -> SearchOutcome:
    """The response's outcome: the mode's results with their Documents, and a rich answer's, if any."""
    timings = ctx.timings.as_dict()
    if rich is None:
        return replace(found, timings=timings)
    return replace(found.warned(*rich.notes), answer=rich.answer, packed=rich.packed,
                   context=context_text(list(rich.packed)), timings=timings)


def _registered(name: str, registry: Collection[str], setting: str) -> None:
    if name not in registry:
        raise ValueError(f"{setting} {name!r} is not registered; available: {', '.join(registry)}")


def _known(registry: dict[str, T], name: str, field: str) -> T:
    if name not in registry:
        raise BadRequest(f"unknown {field} {name!r}; available: {', '.join(registry)}")
    return registry[name]
