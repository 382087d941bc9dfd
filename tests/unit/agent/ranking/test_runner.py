"""The ranked-mode runner with a fake scorer: every decision of the flow, without models."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pytest

from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery, SourceRequest
from agent.core.ratings import Ratings
from agent.ranking.candidates import Candidate
from agent.ranking.recency import RECENCY_NOTE
from agent.ranking.runner import RankSpec, Scored, run_ranked
from agent.ranking.settings import RankingSettings
from agent.upstream.semantic import SemanticUnavailable

from ..fake_searxng import FakeSearxng, FakeSemantic

URL = "https://general.test/{}".format
PAGE = "<html><head><title>Page {n}</title></head><body><article><h1>Page {n}</h1><p>{text}</p></article></body></html>"


@dataclass
class FakeScorer:
    """Scores each candidate's passages by `scores` (by SearXNG rank from 0), the later passages a little less;
    a score in [0, 1] is also its probability of relevance, unless `calibrated` is False."""

    scores: dict[int, float]
    first: dict[int, float] | None = None  # pass 1 by rank, or no pass 1
    failing: set[str] = field(default_factory=set)
    cut: frozenset[int] = frozenset()  # by SearXNG rank from 0: left unscored by the deadline
    seen: list[tuple[Candidate, ...]] = field(default_factory=list)
    calibrated: bool = True

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext):
        if "preliminary" in self.failing:
            raise SemanticUnavailable("down for pass 1")
        if self.first is None:
            return None
        scores = tuple(self.first.get(c.rank - 1, 0.0) for c in candidates)
        return Ratings(scores, scores if self.calibrated else None)

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext):
        self.seen.append(tuple(candidates))
        if "score" in self.failing:
            raise SemanticUnavailable("down for pass 2")
        cut = frozenset(i for i, c in enumerate(candidates) if c.rank - 1 in self.cut)
        return Scored(tuple(tuple(replace(p, score=self.scores[c.rank - 1] - 0.01 * k,
                                          probability=self._probability(self.scores[c.rank - 1] - 0.01 * k))
                                  for k, p in enumerate(c.evidence()))
                            if c.rank - 1 in self.scores and i not in cut else () for i, c in enumerate(candidates)),
                      cut, "scored some" if cut else None)


    def _probability(self, score: float) -> float | None:
        return score if self.calibrated and 0 <= score <= 1 else None


def ranked(scorer: FakeScorer, fake: FakeSearxng | None = None, margin: float = 0.5, fusion_weight: float = 1.0,
           pages: dict[str, str] | None = None, queued_ms: float | None = None, first_pass: bool = True,
           admission: bool = True, floor: float = 0.0, **fields):
    """The runner on `scorer`, which waits for semantic-svc's reranker; with `queued_ms`, an answer of
    semantic-svc's said first that so much model work waits in its lane."""
    query = SearchQuery(**{"query": "q", "limit": 10, "explain": True, **fields})
    searxng = fake or FakeSearxng(total=6, snippets={i: f"snippet {i}" for i in range(6)})
    services = searxng.services(semantic=FakeSemantic(queued_ms=queued_ms or 0.0), pages=pages,
                                semantic_admission=admission)
    spec = RankSpec(pool=6, scorer=scorer, fusion="rrf", weights={"score": fusion_weight},
                    model_kind="rerank")

    async def run() -> SearchOutcome:
        if queued_ms is not None:
            await services.upstreams.semantic.rerank("q", ["a passage"])
        return await run_ranked(query, services.context(30), services.upstreams, spec,
                                RankingSettings(fetch_top=2, rank_first_pass=first_pass, relevance_margin=margin,
                                                relevance_floor=floor))

    return asyncio.run(run())


def urls(outcome) -> list[str]:
    return [h.url for h in outcome.buckets["web"]]


def test_candidates_within_the_margin_survive_in_score_order_and_the_rest_are_explained() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.9, 2: 0.7, 3: 0.5, 4: 0.3, 5: 0.95}))
    assert urls(outcome) == [URL(5), URL(1), URL(2), URL(3)]
    explain = {row.url: row for row in outcome.explain}
    assert explain[URL(0)].decision == "pruned" and explain[URL(0)].reason == (
        "probability 0.20, 0.75 below the top (RELEVANCE_MARGIN 0.5)")
    assert [row.searxng_rank for row in outcome.explain] == [1, 2, 3, 4, 5, 6]  # explain keeps SearXNG's order
    assert outcome.details[URL(5)].score == 0.95 and outcome.details[URL(5)].evidence == "snippet"


def test_fusion_weight_keeps_searxng_order_among_the_kept() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.9, 2: 0.7, 3: 0.5, 4: 0.3, 5: 0.95}), fusion_weight=0.0)
    assert urls(outcome) == [URL(1), URL(2), URL(3), URL(5)]


def test_each_result_says_what_orders_it_beside_its_relevance() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.9, 2: 0.7, 3: 0.5, 4: 0.3, 5: 0.95}), fusion_weight=0.0)
    rank_scores = [outcome.details[url].rank_score for url in urls(outcome)]
    assert rank_scores == sorted(rank_scores, reverse=True) and None not in rank_scores
    scores = [outcome.details[url].score for url in urls(outcome)]
    assert scores != sorted(scores, reverse=True)  # relevance alone would order them otherwise: the fusion decides
    explain = {row.url: row for row in outcome.explain}
    assert explain[URL(1)].rank_score == round(outcome.details[URL(1)].rank_score, 4)


def test_the_best_candidate_survives_even_alone() -> None:
    outcome = ranked(FakeScorer({0: 0.9, 1: 0.5}), margin=0.1)
    assert urls(outcome) == [URL(0)]
    reasons = {row.url: row.reason for row in outcome.explain}
    assert reasons[URL(2)] == "no passage was scored"


def test_every_candidate_offers_its_evidence_fetched_pages_their_chunks_the_rest_their_snippets() -> None:
    pages = {URL(n): PAGE.format(n=n, text=f"Body of page {n}. " * 30) for n in range(6)}
    scorer = FakeScorer({n: 0.5 for n in range(6)}, first={4: 0.9, 5: 0.8})
    outcome = ranked(scorer, pages=pages)
    [seen] = scorer.seen
    # pass 1 fused with SearXNG's rank fetches SearXNG's first and pass 1's first
    assert [c.has_content for c in seen] == [True, False, False, False, True, False]
    assert seen[4].evidence()[0].text.startswith("Body of page 4.") and seen[1].evidence()[0].text == "snippet 1"
    assert {URL(4): "page", URL(1): "snippet"} == {u: outcome.details[u].evidence for u in (URL(4), URL(1))}
    assert outcome.context.startswith("[1] ")


def test_pass_one_failing_keeps_searxng_order() -> None:
    outcome = ranked(FakeScorer({0: 0.1}, first={}, failing={"preliminary"}))
    assert urls(outcome) == [URL(n) for n in range(6)]
    assert outcome.warnings[-1] == "semantic-svc failed (down for pass 1): results keep SearXNG's order"
    assert outcome.details == {} and outcome.context == ""


def test_pass_two_failing_falls_back_to_pass_one() -> None:
    outcome = ranked(FakeScorer({}, first={3: 0.9, 1: 0.8}, failing={"score"}), margin=0.3)
    assert urls(outcome) == [URL(3), URL(1)]
    assert "semantic-svc failed on page content (down for pass 2): ranked by snippets alone" in outcome.warnings


def test_pass_two_failing_without_a_pass_one_or_a_fetched_page_keeps_searxng_order() -> None:
    outcome = ranked(FakeScorer({}, failing={"score"}))
    assert urls(outcome) == [URL(n) for n in range(6)]
    assert outcome.warnings[-1] == "semantic-svc failed (down for pass 2): results keep SearXNG's order"


# SearXNG's first two are fetched; the second is the one about the query, and no snippet names its words
FETCHED = {URL(0): PAGE.format(n=0, text="Nothing of interest here. " * 20),
           URL(1): PAGE.format(n=1, text="A checkpoint moves the WAL back into the SQLite database. " * 10)}
FIRST_PASS = [URL(1), URL(0), URL(2), URL(3), URL(4), URL(5)]  # BM25 alone; the ties keep SearXNG's order


def test_pass_two_failing_ranks_the_fetched_pages_by_the_first_pass_not_in_searxng_order() -> None:
    outcome = ranked(FakeScorer({}, failing={"score"}), pages=FETCHED, query="sqlite checkpoint")
    assert urls(outcome) == FIRST_PASS
    assert outcome.warnings[-1] == ("semantic-svc failed (down for pass 2): ranked by a first pass (BM25 and page "
                                    "features)")
    explain = {row.url: row for row in outcome.explain}
    assert {row.reason for row in outcome.explain} == {"first pass (BM25)"} and explain[URL(1)].score > 0
    assert outcome.details[URL(1)].evidence == "page" and "checkpoint" in outcome.context


def test_pass_one_failing_still_fetches_and_ranks_by_the_first_pass_without_asking_again() -> None:
    scorer = FakeScorer({n: 0.5 for n in range(6)}, first={}, failing={"preliminary"})
    outcome = ranked(scorer, pages=FETCHED, query="sqlite checkpoint")
    assert urls(outcome) == FIRST_PASS and not scorer.seen
    assert outcome.warnings[-1] == ("semantic-svc failed (down for pass 1): ranked by a first pass (BM25 and page "
                                    "features)")


def test_a_lane_that_would_not_reach_the_texts_before_the_deadline_is_not_asked() -> None:
    scorer = FakeScorer({n: 0.5 for n in range(6)})
    outcome = ranked(scorer, pages=FETCHED, query="sqlite checkpoint", queued_ms=9000)  # the deadline is 8 s
    assert urls(outcome) == FIRST_PASS and not scorer.seen
    assert outcome.warnings[-1].startswith("semantic-svc's model lane would not reach this search's texts in time "
                                           "(9.0 s of work queued, 7.")
    assert outcome.warnings[-1].endswith("s left to score): ranked by a first pass (BM25 and page features)")


def test_a_lane_that_will_reach_the_texts_in_time_is_waited_for() -> None:
    scorer = FakeScorer({n: 0.5 for n in range(6)})
    outcome = ranked(scorer, pages=FETCHED, query="sqlite checkpoint", queued_ms=5000)
    assert scorer.seen and not any("first pass" in w for w in outcome.warnings)


def test_with_the_first_pass_off_the_model_failing_keeps_searxng_order_though_pages_were_fetched() -> None:
    outcome = ranked(FakeScorer({}, failing={"score"}), pages=FETCHED, query="sqlite checkpoint", first_pass=False)
    assert urls(outcome) == [URL(n) for n in range(6)]
    assert outcome.warnings[-1] == "semantic-svc failed (down for pass 2): results keep SearXNG's order"


def test_with_the_first_pass_off_a_search_the_lane_would_not_reach_keeps_searxng_order_at_once() -> None:
    scorer = FakeScorer({n: 0.5 for n in range(6)})
    outcome = ranked(scorer, pages=FETCHED, query="sqlite checkpoint", queued_ms=60_000, first_pass=False)
    assert not scorer.seen and urls(outcome) == [URL(n) for n in range(6)]
    assert outcome.warnings[-1].endswith("left to score): results keep SearXNG's order")


def test_without_admission_every_search_waits_for_the_model_whatever_its_queue() -> None:
    scorer = FakeScorer({n: 0.5 for n in range(6)})
    ranked(scorer, pages=FETCHED, query="sqlite checkpoint", queued_ms=60_000, admission=False)
    assert scorer.seen


def test_recency_lifts_the_fresher_page_and_all_its_passages() -> None:
    # the fake SearXNG dates result n on 2026-01-(n+1): result 5 is the freshest
    plain = ranked(FakeScorer({n: 0.5 for n in range(6)}), query="sqlite release")
    recent = ranked(FakeScorer({n: 0.5 for n in range(6)}), query="latest sqlite release")
    assert RECENCY_NOTE not in plain.warnings and RECENCY_NOTE in recent.warnings
    assert urls(recent)[0] == URL(5) and urls(plain)[0] == URL(0)
    assert recent.details[URL(5)].score > recent.details[URL(0)].score > 0.5


def test_a_ranked_mode_asked_for_news_only_ranks_nothing_and_adds_no_web_bucket() -> None:
    scorer = FakeScorer({0: 1.0})
    outcome = ranked(scorer, sources=[SourceRequest("news")], limit=3)
    assert list(outcome.buckets) == ["news"] and len(outcome.buckets["news"]) == 3 and not scorer.seen


def test_other_buckets_keep_searxng_order_beside_the_ranked_one() -> None:
    outcome = ranked(FakeScorer({1: 0.9, 0: 0.1}), sources=[SourceRequest("web"), SourceRequest("news")], limit=2)
    assert urls(outcome) == [URL(1)] and [h.url for h in outcome.buckets["news"]] == [
        "https://news.test/0", "https://news.test/1"]


@pytest.mark.parametrize("limit", [1, 2])
def test_the_limit_cuts_the_ranked_bucket(limit: int) -> None:
    assert len(urls(ranked(FakeScorer({n: 0.5 for n in range(6)}), limit=limit))) == limit


def test_passages_below_the_margin_are_not_packed_or_shown() -> None:
    pages = {URL(0): PAGE.format(n=0, text="Relevant words. " * 200)}  # several chunks
    outcome = ranked(FakeScorer({0: 0.5}, first={0: 1.0}), pages=pages, margin=0.015)
    shown = outcome.details[URL(0)].passages
    assert [p["score"] for p in shown] == [0.5, 0.49]
    assert outcome.context.count("\n[1] ") == 1  # the third chunk, 0.02 below, stays out of the context


def test_without_pass_one_candidates_the_deadline_left_unscored_follow_the_scored_in_searxng_order() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.9, 2: 0.7, 3: 0.5, 4: 0.3, 5: 0.95}, cut=frozenset({0, 3})))
    # scored: 5, 1, 2 within the margin (4 is 0.65 below); unscored 0 and 3 come after them, in SearXNG's order
    assert urls(outcome) == [URL(5), URL(1), URL(2), URL(0), URL(3)]
    assert "scored some" in outcome.warnings
    explain = {row.url: row for row in outcome.explain}
    assert explain[URL(3)].decision == "kept" and explain[URL(3)].score is None
    assert explain[URL(3)].reason == "not scored before the deadline: SearXNG order"
    assert URL(3) not in outcome.details


def test_with_pass_one_a_candidate_left_unscored_ranks_by_its_snippets_pass_one_score() -> None:
    scorer = FakeScorer({0: 0.2, 1: 0.9, 2: 0.7}, first={0: 0.3, 1: 0.4, 2: 0.5, 3: 0.8, 4: 0.1, 5: 0.1},
                        cut=frozenset({3}))
    outcome = ranked(scorer, margin=0.3)
    assert urls(outcome)[:3] == [URL(1), URL(3), URL(2)]
    assert outcome.details[URL(3)].score == 0.8 and outcome.details[URL(3)].evidence == "snippet"


def test_nothing_likely_enough_to_be_relevant_abstains_with_no_result_presented() -> None:
    outcome = ranked(FakeScorer({n: 0.3 + 0.05 * n for n in range(6)}), floor=0.6)
    assert outcome.abstained is True and urls(outcome) == [] and outcome.context == "" and outcome.details == {}
    assert any("no passage reaches the relevance floor (best probability 0.55, RELEVANCE_FLOOR 0.6)" in w
               for w in outcome.warnings)
    assert "abstained" in outcome.degradations
    assert {row.decision for row in outcome.explain} == {"pruned"}
    assert all(row.reason.startswith("below the relevance floor") for row in outcome.explain)


def test_one_passage_over_the_floor_answers_and_the_margin_prunes_by_probability() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.65, 2: 0.4}), floor=0.6, margin=0.3)
    assert outcome.abstained is False and urls(outcome) == [URL(1), URL(2)]
    assert outcome.details[URL(1)].probability == 0.65


def test_a_model_without_a_calibration_prunes_nothing_abstains_never_and_says_so() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.9, 2: 0.1}, calibrated=False), floor=0.99, margin=0.1)
    assert outcome.abstained is False and urls(outcome)[:3] == [URL(1), URL(0), URL(2)]
    assert any("no relevance calibration" in w for w in outcome.warnings)


def test_passages_the_deadline_left_to_pass_one_carry_its_probability() -> None:
    scorer = FakeScorer({0: 0.3}, first={0: 0.2, 1: 0.9}, cut=frozenset({1}))
    outcome = ranked(scorer, floor=0.6, margin=0.5)
    assert outcome.abstained is False and urls(outcome)[0] == URL(1)
    assert outcome.details[URL(1)].probability == 0.9


def test_an_exhaustive_search_keeps_every_scored_result_and_never_abstains() -> None:
    outcome = ranked(FakeScorer({0: 0.2, 1: 0.3, 2: 0.1}), floor=0.9, margin=0.05, exhaustive=True)
    assert outcome.abstained is False and urls(outcome)[:3] == [URL(1), URL(0), URL(2)]
