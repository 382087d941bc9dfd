from agent.core.outcome import SearchOutcome
from agent.ranking.runner import FIRST_PASS

from ...fake_searxng import FakeSemantic
from .test_hybrid import PAGES, URL, searches


def semantic(scorer: FakeSemantic, **settings) -> SearchOutcome:
    return searches(scorer, PAGES, "semantic", **settings)()


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


def test_a_lane_that_would_answer_one_pass_in_time_but_not_two_is_not_asked() -> None:
    scorer = FakeSemantic(queued_ms=5000)  # before each pass: one such wait fits in the 8 s deadline, two do not
    search = searches(scorer, PAGES, "semantic")
    search()  # asked: nothing was known of the lane yet
    asked = len(scorer.calls)
    outcome = search()
    assert len(scorer.calls) == asked
    assert "5.0 s of work queued before each of its 2 passes" in outcome.warnings[-1]
    assert outcome.warnings[-1].endswith(FIRST_PASS) and outcome.buckets["web"][0].url in (URL(0), URL(1))
