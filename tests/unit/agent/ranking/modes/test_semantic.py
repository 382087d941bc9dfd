import asyncio

from agent.core.query import SearchQuery

from ...fake_searxng import FakeSearxng, FakeSemantic
from .test_hybrid import PAGES, URL


def semantic(scorer: FakeSemantic, **settings):
    fake = FakeSearxng(total=5, snippets={3: "squash commits with an interactive rebase", 4: "unrelated"})
    search = fake.search(semantic=scorer, pages=PAGES, fetch_top=3, chunk_chars=200, **settings)
    services = search.services
    ctx = services.context(30)
    query = SearchQuery("squash git commits", limit=5, retrieval_mode="semantic", explain=True)
    return asyncio.run(search.ranking.modes["semantic"](query, ctx, services.upstreams))


def test_pass_one_scores_snippets_and_pass_two_the_best_chunks_and_the_other_snippets() -> None:
    scorer = FakeSemantic()
    outcome = semantic(scorer, semantic_chunks_per_page=1)
    [(first, snippets), (second, evidence)] = scorer.calls
    assert first == second == "/similarity" and len(snippets) == 5
    assert sum("Squash git commits" in p for p in evidence) == 2  # one chunk a page
    assert len(evidence) == 5 and any(p.endswith("\nunrelated") for p in evidence)
    assert [row.pass1_score is not None for row in outcome.explain] == [True] * 5


def test_chunks_per_page_bounds_what_the_embedder_reads() -> None:
    scorer = FakeSemantic()
    semantic(scorer, semantic_chunks_per_page=2)
    assert sum("Squash git commits" in p for p in scorer.calls[1][1]) == 4


def test_pass_two_failing_ranks_by_snippets() -> None:
    class SecondCallFails(FakeSemantic):
        async def handle(self, request):
            if self.calls:
                self.failing = {"/similarity"}
            return await super().handle(request)

    outcome = semantic(SecondCallFails())
    assert any("ranked by snippets alone" in w for w in outcome.warnings)
    assert outcome.buckets["web"][0].url == URL(3)  # its snippet holds the query's words
