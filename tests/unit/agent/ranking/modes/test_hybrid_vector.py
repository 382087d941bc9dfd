"""hybrid_vector over a fake SearXNG and a fake index: rank fusion with URL de-duplication, either side failing."""

import asyncio

import pytest

from agent.config import Settings
from agent.core.query import SearchQuery, SourceRequest
from agent.errors import UpstreamError
from agent.ranking.modes import hybrid_vector
from agent.ranking.settings import RankingSettings
from agent.upstream.semantic import IndexEmpty, SemanticUnavailable

from ...fake_searxng import FakeSearxng, replaced_search
from .test_vector import FakeIndex, chunk, search

SEARX = "https://general.test/{}".format
INDEXED = "https://indexed.test/a"
BOTH = "http://general.test/1/"  # SearXNG's second result, as the index spells it
CHUNKS = [chunk(BOTH, 3, 0.9, "The index's best chunk of the page both sides found."), chunk(INDEXED, 0, 0.8)]


def urls(outcome) -> list[str]:
    return [h.url for h in outcome.buckets["web"]]


def test_a_page_both_sides_found_is_one_result_carrying_the_indexs_chunk() -> None:
    outcome = search("hybrid_vector", FakeIndex(CHUNKS), FakeSearxng(total=3), rerank=False)
    # rank fusion: found by both, then SearXNG's first, the index's second, SearXNG's third
    assert urls(outcome) == [BOTH, SEARX(0), INDEXED, SEARX(2)]
    both = outcome.buckets["web"][0]
    assert both.content == "The index's best chunk of the page both sides found." and both.engines[0] == "index"
    # every result's score is its fused score, the one that orders them; its evidence says where its text came from
    scores = [outcome.details[url].score for url in urls(outcome)]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 4
    assert [outcome.details[url].evidence for url in urls(outcome)] == ["index", "snippet", "index", "snippet"]
    assert outcome.details[BOTH].passages[0]["text"] == both.content
    assert [p.url for p in outcome.packed][:1] == [BOTH] and both.content in outcome.context
    assert outcome.warnings == ()


def test_the_limit_applies_after_fusion_and_details_follow_it() -> None:
    outcome = search("hybrid_vector", FakeIndex(CHUNKS), FakeSearxng(total=3), limit=2, rerank=False)
    assert urls(outcome) == [BOTH, SEARX(0)] and set(outcome.details) == {BOTH, SEARX(0)}
    assert {p.url for p in outcome.packed} == {BOTH, SEARX(0)}  # the context holds only the pages shown


def test_the_index_weight_moves_the_fusion() -> None:
    fake = FakeSearxng(total=3)
    search = replaced_search(fake.search(hybrid_vector_index_weight=0.0), semantic=FakeIndex(CHUNKS))
    services = search.services
    ctx = services.context(30)
    query = SearchQuery("wal checkpoint", limit=5, rerank=False)
    outcome = asyncio.run(search.ranking.modes["hybrid_vector"](query, ctx, services.upstreams))
    assert urls(outcome) == [SEARX(0), BOTH, SEARX(2), INDEXED]  # weight 0: SearXNG's order, the index's pages last


@pytest.mark.parametrize("error", [SemanticUnavailable("semantic-svc did not answer /index/search within 1.0 s"),
                                   IndexEmpty("the index is empty: fill it with POST /v2/crawl")])
def test_the_index_failing_leaves_searxngs_results_with_a_warning(error: Exception) -> None:
    outcome = search("hybrid_vector", FakeIndex(error=error), FakeSearxng(total=3), rerank=False)
    assert urls(outcome) == [SEARX(n) for n in range(3)]
    assert {d.evidence for d in outcome.details.values()} == {"snippet"}
    assert outcome.warnings == (f"the vector index could not answer ({error}): SearXNG's results alone",)


def test_searxng_failing_leaves_the_indexs_results_with_a_warning() -> None:
    outcome = search("hybrid_vector", FakeIndex(CHUNKS), FakeSearxng(failing={1}), rerank=False)
    assert urls(outcome) == [BOTH, INDEXED] and set(outcome.details) == {BOTH, INDEXED}
    [warning] = outcome.warnings
    assert warning.startswith("SearXNG failed (") and warning.endswith("): results from the vector index alone")


def test_both_sides_failing_raises_searxngs_error() -> None:
    with pytest.raises(UpstreamError):
        search("hybrid_vector", FakeIndex(error=SemanticUnavailable("down")), FakeSearxng(failing={1}), rerank=False)


def test_a_bug_on_either_side_is_not_taken_for_a_degradation() -> None:
    with pytest.raises(ZeroDivisionError):
        search("hybrid_vector", FakeIndex(error=ZeroDivisionError()), FakeSearxng(total=3), rerank=False)


def test_other_sources_keep_searxngs_results() -> None:
    outcome = search("hybrid_vector", FakeIndex(CHUNKS), FakeSearxng(total=3),
                     sources=[SourceRequest("web"), SourceRequest("news")], rerank=False)
    assert urls(outcome) == [BOTH, SEARX(0), INDEXED, SEARX(2)]
    assert [h.url for h in outcome.buckets["news"]] == [f"https://news.test/{n}" for n in range(3)]


def test_without_web_the_index_is_not_asked() -> None:
    index = FakeIndex(CHUNKS)
    outcome = search("hybrid_vector", index, FakeSearxng(total=3), sources=[SourceRequest("news")], rerank=False)
    assert [h.url for h in outcome.buckets["news"]] == [f"https://news.test/{n}" for n in range(3)]
    assert index.asks == []


def test_the_ranked_pool_is_the_merged_order() -> None:
    search = replaced_search(FakeSearxng(total=3).search(), semantic=FakeIndex(CHUNKS))
    services = search.services
    ctx = services.context(30)
    _, candidates = asyncio.run(hybrid_vector.merged_pool(SearchQuery("wal", limit=5), ctx, services.upstreams, 3,
                                                          "web", RankingSettings(), index_weight=1.0))
    assert [(c.hit.url, c.rank) for c in candidates] == [(BOTH, 1), (SEARX(0), 2), (INDEXED, 3), (SEARX(2), 4)]
    settings = Settings.of(hybrid_vector_index_weight=0.25).modes
    gather = hybrid_vector.spec(settings, services.upstreams, SearchQuery("wal", limit=5)).gather
    assert gather.func is hybrid_vector.merged_pool and gather.keywords == {"index_weight": 0.25}
