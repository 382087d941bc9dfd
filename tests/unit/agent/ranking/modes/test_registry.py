"""A new ranked mode is one module and one registry line: a toy mode registered here runs end to end through the
one runner (pool, scoring, margin, fusion, details, context) and the search service, and no other module names it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from agent.core.context import SearchContext
from agent.core.query import SearchQuery
from agent.ranking import modes
from agent.ranking.candidates import Candidate
from agent.ranking.runner import RankSpec, Scored
from agent.search.service import prepared, run_search
from agent.upstream.clients import Upstreams

from ...fake_searxng import FakeSearxng


@dataclass(frozen=True)
class ShortestSnippetFirst:
    """The toy's scorer: a shorter snippet scores higher; nothing fetched, no model."""

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> None:
        return None

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        return Scored(tuple(tuple(replace(p, score=-float(len(p.text))) for p in c.snippet())
                            for c in candidates))


def toy_spec(up: Upstreams, query: SearchQuery) -> RankSpec:
    return RankSpec(pool=4, margin=100.0, scorer=ShortestSnippetFirst(), fusion="linear", weights={"score": 1.0},
                    fetch=False)


def test_a_toy_mode_is_one_spec_and_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(modes.MODES, "toy", modes.ranked(toy_spec))
    services = FakeSearxng(total=4, snippets={0: "a long snippet here", 1: "tiny", 2: "mid length", 3: "x"}).services()
    query = prepared(SearchQuery(query="q", limit=3, retrieval_mode="toy"), services.settings)
    outcome = asyncio.run(run_search(query, services))
    assert [h.url for h in outcome.buckets["web"]] == [f"https://general.test/{n}" for n in (3, 1, 2)]
    assert [outcome.details[h.url].score for h in outcome.buckets["web"]] == [-1.0, -4.0, -10.0]
    assert outcome.context.startswith("[1] ") and "searxng" in outcome.timings
