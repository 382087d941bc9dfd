"""vector mode over a fake index: one result per page with its best chunk, the floor, and the fallbacks."""

import asyncio
from typing import Any

import pytest

from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery, SourceRequest
from agent.core.ratings import Ratings
from agent.upstream.semantic import IndexEmpty, IndexReach, SemanticUnavailable

from ...fake_searxng import FakeSearxng, replaced_search


def chunk(url: str, index: int, score: float, text: str = "", title: str = "") -> dict[str, Any]:
    return {"url": url, "title": title or f"Title of {url}", "text": text or f"chunk {index} of {url}",
            "heading": f"Part {index}", "chunk_index": index, "score": score, "probability": score}


class FakeIndex:
    """semantic-svc's /index/search: `chunks` best first (or `error` raised), every ask recorded; asked with a
    relevance floor of 0.5."""

    index_reach = IndexReach(floor=0.5)

    def __init__(self, chunks: list[dict[str, Any]] | None = None, error: Exception | None = None) -> None:
        self.chunks, self.error = chunks or [], error
        self.asks: list[tuple[str, int, float | None]] = []

    async def index_search(self, query: str, limit: int, floor: float | None, budget_s: float | None = None
                           ) -> list[dict[str, Any]]:
        assert budget_s is not None and budget_s > 0
        self.asks.append((query, limit, floor))
        if self.error:
            raise self.error
        return self.chunks[:limit]


def search(mode: str, index: FakeIndex, fake: FakeSearxng | None = None, **fields: object) -> SearchOutcome:
    fake = fake or FakeSearxng(total=5)
    search = replaced_search(fake.search(vector_floor=0.5), semantic=index)
    services = search.services
    ctx = services.context(30)
    query = SearchQuery(**{"query": "wal checkpoint", "limit": 5, **fields})
    return asyncio.run(search.ranking.modes[mode](query, ctx, services.upstreams))


A, B, C = "https://a.test/wal", "https://b.test/checkpoint", "https://c.test/readers"
CHUNKS = [chunk(A, 2, 0.91, "WAL mode lets readers go on while a writer commits."), chunk(A, 0, 0.88),
          chunk(B, 1, 0.80, title="Checkpoints"), chunk("http://A.test/wal/", 5, 0.70), chunk(C, 0, 0.62)]


def test_one_result_per_page_with_its_best_chunk_in_index_order() -> None:
    index = FakeIndex(CHUNKS)
    fake = FakeSearxng(total=5)
    outcome = search("vector", index, fake)
    hits = outcome.buckets["web"]
    assert [h.url for h in hits] == [A, B, C]  # http://A.test/wal/ is the same page as A
    assert hits[0].content == "WAL mode lets readers go on while a writer commits." and hits[0].engines == ("index",)
    assert hits[1].title == "Checkpoints"
    detail = outcome.details[A]
    assert (detail.score, detail.evidence) == (0.91, "index")
    assert detail.passages == ({"heading": "Part 2", "text": "WAL mode lets readers go on while a writer commits.",
                                "score": 0.91, "probability": 0.91},)
    assert "WAL mode lets readers go on" in outcome.context and outcome.packed[0].url == A
    assert outcome.warnings == () and fake.requests == []  # SearXNG is not asked
    assert index.asks == [("wal checkpoint", 20, None)]  # chunks for 4 per result; the floor gates the query here


def test_the_limit_cuts_the_pages_not_the_chunks() -> None:
    outcome = search("vector", FakeIndex(CHUNKS), limit=2)
    assert [h.url for h in outcome.buckets["web"]] == [A, B] and set(outcome.details) == {A, B}


def test_include_and_exclude_domains_filter_the_index_too() -> None:
    assert [h.url for h in search("vector", FakeIndex(CHUNKS), exclude_domains=["a.test"]).buckets["web"]] == [B, C]
    assert [h.url for h in search("vector", FakeIndex(CHUNKS), include_domains=["b.test"]).buckets["web"]] == [B]


def test_nothing_above_the_floor_is_an_empty_answer_that_says_so() -> None:
    for chunks in ([], [chunk(A, 0, 0.49), chunk(B, 0, 0.3)]):
        outcome = search("vector", FakeIndex(chunks))
        assert outcome.buckets == {"web": []} and outcome.details == {}
        assert outcome.warnings == ("no indexed page reaches the relevance floor (VECTOR_FLOOR 0.5)",)


def test_without_a_calibration_no_floor_can_judge_and_every_page_is_an_answer() -> None:
    chunks = [{**chunk(A, 0, 0.49), "probability": None}, {**chunk(B, 0, 0.3), "probability": None}]
    outcome = search("vector", FakeIndex(chunks))
    assert [h.url for h in outcome.buckets["web"]] == [A, B]


def test_an_on_topic_query_keeps_the_pages_its_lexical_side_found_below_the_floor() -> None:
    outcome = search("vector", FakeIndex([chunk(B, 0, 0.42), chunk(A, 0, 0.91)]))
    assert [h.url for h in outcome.buckets["web"]] == [B, A]  # the index's order; the best cosine clears the floor


@pytest.mark.parametrize("error", [SemanticUnavailable("semantic-svc is unreachable at http://semantic.test"),
                                   IndexEmpty("the index is empty: fill it with POST /v2/crawl")])
def test_an_index_that_cannot_answer_gives_searxngs_keyword_results(error: Exception) -> None:
    outcome = search("vector", FakeIndex(error=error), limit=3)
    assert [h.url for h in outcome.buckets["web"]] == [f"https://general.test/{n}" for n in range(3)]
    assert outcome.warnings == (f"the vector index could not answer ({error}): keyword results from SearXNG instead",)
    assert outcome.details == {}


def test_other_sources_come_back_empty_with_a_warning() -> None:
    sources = [SourceRequest("web"), SourceRequest("news"), SourceRequest("images")]
    outcome = search("vector", FakeIndex(CHUNKS), sources=sources)
    assert [h.url for h in outcome.buckets["web"]] == [A, B, C]
    assert outcome.buckets["news"] == [] and outcome.buckets["images"] == []
    assert outcome.warnings == ("the vector index holds web pages only: news, images came back empty",)


def test_a_time_filter_cannot_apply_and_says_so() -> None:
    outcome = search("vector", FakeIndex(CHUNKS), tbs="qdr:w")
    assert [h.url for h in outcome.buckets["web"]] == [A, B, C]
    assert outcome.warnings == ("the vector index keeps no dates: tbs was not applied",)
    per_source = search("vector", FakeIndex(CHUNKS), sources=[SourceRequest("web", tbs="qdr:d")])
    assert per_source.warnings == ("the vector index keeps no dates: tbs was not applied",)


def test_the_index_order_stands_even_where_a_lower_cosine_leads() -> None:
    # the index fuses its cosine with its lexical side: its order, not the cosine shown, is the answer's
    fused = [chunk(C, 0, 0.62), chunk(A, 2, 0.91), chunk(B, 1, 0.80)]
    outcome = search("vector", FakeIndex(fused))
    assert [h.url for h in outcome.buckets["web"]] == [C, A, B]
    assert [outcome.details[u].score for u in (C, A, B)] == [0.62, 0.91, 0.80]


class FakeIndexAndReranker(FakeIndex):
    """The index, and a reranker that scores a text by how often it says "writer"."""

    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        super().__init__(chunks)
        self.reranked: list[list[str]] = []

    def pace(self, kind: str) -> float | None:
        return None

    def lane_wait_s(self) -> float:
        return 0.0

    async def rerank(self, query: str, texts: list[str], budget_s: float) -> Ratings:
        self.reranked.append(texts)
        return Ratings(tuple(float(t.count("writer")) for t in texts), tuple(t.count("writer") / 2 for t in texts))


def test_with_rerank_the_reranker_scores_the_indexs_chunks_and_nothing_is_fetched() -> None:
    index = FakeIndexAndReranker([chunk(B, 1, 0.80, "Checkpoints move pages."),
                                  chunk(C, 0, 0.62, "A writer, a writer."),
                                  chunk(A, 2, 0.91, "WAL mode lets readers go on while a writer commits.")])
    fake = FakeSearxng(total=5)
    outcome = search("vector", index, fake, rerank=True)
    assert index.reranked and all(len(batch) <= 3 for batch in index.reranked)  # the three chunks, no page
    assert outcome.buckets["web"][0].url == C and outcome.details[C].score == 2.0
    assert fake.requests == []  # nothing asked of SearXNG, no page fetched
