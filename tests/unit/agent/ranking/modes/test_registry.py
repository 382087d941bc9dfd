"""A new ranked mode is one module and one registry line: a toy mode registered here, with a tunable of its own,
runs end to end through the one runner (pool, scoring, margin, fusion, details, context) and the search service;
its tunable is read from the environment with every other setting, and no other module names it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest
from pydantic import Field

from agent.config import Settings
from agent.core.context import SearchContext
from agent.core.query import SearchQuery
from agent.core.section import Section
from agent.ranking import modes
from agent.ranking.candidates import Candidate
from agent.ranking.runner import RankSpec, Scored
from agent.ranking.settings import ModeSettings
from agent.upstream.clients import Upstreams

from ...fake_searxng import FakeSearxng


class ToySettings(Section):
    """The toy mode's own tunable."""

    toy_length_weight: float = Field(1.0, gt=0, description="toy mode: score lost per character of snippet")


@dataclass(frozen=True)
class ShortestSnippetFirst:
    """The toy's scorer: a shorter snippet scores higher; nothing fetched, no model."""

    weight: float

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> None:
        return None

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        return Scored(tuple(tuple(replace(p, score=-self.weight * len(p.text)) for p in c.snippet())
                            for c in candidates))


def toy_spec(settings: ModeSettings, up: Upstreams, query: SearchQuery) -> RankSpec:
    scorer = ShortestSnippetFirst(settings.of(ToySettings).toy_length_weight)
    return RankSpec(pool=4, scorer=scorer, fusion="linear", weights={"score": 1.0}, fetch=False)


def test_a_toy_mode_with_a_tunable_is_one_module_and_one_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(modes.MODES, "toy", modes.ranked(toy_spec, ToySettings))  # the one line
    monkeypatch.setenv("TOY_LENGTH_WEIGHT", "2")
    fake = FakeSearxng(total=4, snippets={0: "a long snippet here", 1: "tiny", 2: "mid length", 3: "x"})
    search = fake.search()
    outcome = asyncio.run(search.run(search.prepared(SearchQuery(query="q", limit=3, retrieval_mode="toy"))))
    assert [h.url for h in outcome.buckets["web"]] == [f"https://general.test/{n}" for n in (3, 1, 2)]
    assert [outcome.details[h.url].score for h in outcome.buckets["web"]] == [-2.0, -8.0, -20.0]
    assert outcome.context.startswith("[1] ") and "searxng" in outcome.timings
    assert ToySettings in Settings.sections()  # so docs/configuration.md must document TOY_LENGTH_WEIGHT
    assert Settings.of(toy_length_weight=3.0).modes.of(ToySettings).toy_length_weight == 3.0


def test_each_mode_declares_its_tunables_in_its_own_module() -> None:
    settings = Settings.of(shortlist=12, semantic_pool=7)
    for name, mode in modes.MODES.items():
        if mode.settings is not None:
            assert mode.settings.__module__ == f"agent.ranking.modes.{name}"
    hybrid, semantic = modes.MODES["hybrid"].settings, modes.MODES["semantic"].settings
    assert hybrid is not None and semantic is not None
    assert (settings.modes.of(hybrid).shortlist, settings.modes.of(semantic).semantic_pool) == (12, 7)
