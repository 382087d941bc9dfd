"""The ranked-mode runner, once for every ranked mode: pool → fetch → evidence → score → recency → prune →
fuse → pack → explain. It owns the flow, the deadlines and every fallback; a mode supplies only a `RankSpec`:
its pool size, its fusion, and a `Scorer` (what it scores and how).

Fallbacks, each with a warning (seed 000): the model unable to score in time (failing, or its lane holding more
work than the deadline leaves: admission.py) → the first pass, BM25 and page features over the fetched pages, or
SearXNG's order when no page was fetched; failing on pass 2 after pass 1 → pass 1's snippet scores; a page that
failed to load → its snippet; nothing within the margin → the best candidate alone survives.

Pruning and abstaining read probabilities of relevance (semantic-svc's calibration of each model), so that one
RELEVANCE_MARGIN and one RELEVANCE_FLOOR mean the same whichever model scores; the order is the fusion of the
model's raw scores with the page features. No passage reaching RELEVANCE_FLOOR → the search abstains: no result
is presented (`abstained`), rather than SearXNG's links that answer nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from agent.core.context import SearchContext
from agent.core.outcome import Degradation, ExplainRow, ResultDetail, SearchOutcome
from agent.core.pages import Extraction
from agent.core.passage import Passage
from agent.core.query import SearchQuery
from agent.core.ratings import Ratings
from agent.core.sources import source
from agent.errors import Degraded
from agent.pages.loading import failed_pages
from agent.pages.supplied import supplied_page
from agent.ranking.admission import LaneFull, admit
from agent.ranking.anytime import Partial
from agent.ranking.candidates import Candidate, candidate_pool
from agent.ranking.evidence import bm25_scored
from agent.ranking.features import FEATURES, page_features, prior
from agent.ranking.fusion import FUSIONS, descending, rrf
from agent.ranking.pack import context_text, pack
from agent.ranking.prune import within_margin
from agent.ranking.recency import RECENCY_NOTE, is_time_sensitive, recency_bonus
from agent.ranking.settings import RankingSettings
from agent.retrieval.searxng_results import retrieve_candidates
from agent.upstream.clients import Upstreams

SEARXNG_ORDER = "results keep SearXNG's order"  # how a warning says that nothing could be scored
UNCALIBRATED = ("semantic-svc's model has no relevance calibration: nothing was pruned by RELEVANCE_MARGIN and the "
                "search could not abstain (see semantic-svc's /readyz)")
FIRST_PASS = "ranked by a first pass (BM25 and page features)"  # how a warning says the model was not waited for
# a retrieval mode: the query, the request's context and the upstream clients → the results per bucket
Run = Callable[[SearchQuery, SearchContext, Upstreams], Awaitable[SearchOutcome]]
# the candidate pool of a ranked mode: (query, context, upstreams, pool size, ranked source, the ranked modes'
# settings) → the outcome so far and the ranked source's candidates, best first
Gather = Callable[[SearchQuery, SearchContext, Upstreams, int, str, RankingSettings],
                  Awaitable[tuple[SearchOutcome, tuple[Candidate, ...]]]]


@dataclass(frozen=True)
class Scored:
    """Pass 2's result: each candidate's scored passages, and which candidates the deadline left unscored."""

    passages: tuple[tuple[Passage, ...], ...]  # by candidate; none: not scored
    cut: frozenset[int] = frozenset()  # candidates whose texts the deadline left unscored, every one of them
    note: str | None = None  # the warning of a partial ranking

    @classmethod
    def of(cls, count: int, asked: Sequence[tuple[int, Passage]], partial: Partial) -> Scored:
        """`count` candidates' passages from the scores of the (candidate, passage) pairs asked for."""
        scored: list[list[Passage]] = [[] for _ in range(count)]
        probabilities = partial.probabilities or (None,) * len(partial.scores)
        for (i, passage), score, probability in zip(asked, partial.scores, probabilities, strict=True):
            if score is not None:
                scored[i].append(replace(passage, score=score, probability=probability))
        cut = frozenset(i for i, _ in asked if not scored[i])
        return cls(tuple(tuple(passages) for passages in scored), cut, partial.note())


class Scorer(Protocol):
    """A ranked mode's scoring strategy."""

    async def preliminary(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Ratings | None:
        """Pass 1, before fetching: one score per candidate (from its snippet) to choose what to fetch;
        None to fetch in SearXNG's order. Raises Degraded when it cannot score."""
        ...

    async def score(self, query: str, candidates: Sequence[Candidate], ctx: SearchContext) -> Scored:
        """Pass 2: for each candidate, its passages with their scores, as many as the deadline allows (anytime.py).
        Every candidate offers its evidence, page or snippet, on one scale. Raises Degraded when it could score
        nothing."""
        ...


@dataclass(frozen=True)
class RankSpec:
    pool: int  # SearXNG candidates ranked
    scorer: Scorer
    fusion: str = "rrf"  # a name in fusion.FUSIONS
    weights: Mapping[str, float] = field(default_factory=lambda: {"score": 0.5})  # of features.FEATURES
    gather: Gather = candidate_pool  # where the candidates come from: SearXNG by default
    fetch: bool = True  # fetch the best candidates' pages to score them; False: score what was gathered
    recency: bool = True  # fresher pages gain for time-sensitive queries (off where the source keeps no dates)
    # prune by RELEVANCE_MARGIN and abstain below RELEVANCE_FLOOR, both probabilities of relevance; False where
    # the source's own floor decided what is an answer (the vector index's)
    by_relevance: bool = True
    model_kind: str | None = None  # the semantic-svc call its scorer waits for ("rerank", "embed"); None: no model
    model_passes: int = 1  # the passes that wait for it: 2 when pass 1 asks the model too


@dataclass(frozen=True)
class Judged:
    """A candidate as the runner decided it."""

    candidate: Candidate
    passages: tuple[Passage, ...] = ()  # scored, best first
    preliminary: float | None = None
    kept: bool = False
    reason: str = "not ranked"
    features: Mapping[str, float] = field(default_factory=dict)
    fused: float | None = None  # the spec's fusion of its features: what the final order sorts by

    @property
    def score(self) -> float | None:
        return self.passages[0].score if self.passages else None

    @property
    def probability(self) -> float | None:
        """Its most relevant passage's probability of relevance; None when no passage has one."""
        return max((p.probability for p in self.passages if p.probability is not None), default=None)


async def run_ranked(query: SearchQuery, ctx: SearchContext, up: Upstreams, spec: RankSpec,
                     settings: RankingSettings) -> SearchOutcome:
    """Rank the first requested source that ranks (web); other buckets keep SearXNG's order."""
    ranked = next((s.type for s in query.sources if source(s.type).ranked), None)
    if ranked is None:
        return (await retrieve_candidates(query, ctx, up)).limited(query.limit)
    return await _ranked(query, ctx, up, spec, settings, ranked)


async def _ranked(query: SearchQuery, ctx: SearchContext, up: Upstreams, spec: RankSpec, settings: RankingSettings,
                  ranked: str) -> SearchOutcome:
    outcome, candidates = await spec.gather(query, ctx, up, spec.pool, ranked, settings)
    if not candidates:
        return _finish(outcome, query, ranked, (), (), ctx, settings)
    unasked: Degraded | None = None  # why pass 1 could not have the model: pass 2 does not ask it either
    try:
        _admit(spec, query.query, ctx, up, settings, spec.model_passes)
        preliminary = await spec.scorer.preliminary(query.query, candidates, ctx)
    except Degraded as e:
        if not settings.rank_first_pass:
            return _searxng_order(outcome, query, ranked, candidates, ctx, settings, _why(e))
        preliminary, unasked = None, e
    if spec.fetch:
        candidates, failed = await _fetch(candidates, preliminary, query, ctx, settings)
        outcome = outcome.warned(failed)
    if unasked is not None:
        return _unranked(outcome, query, ranked, candidates, ctx, settings, spec, unasked)
    try:
        _admit(spec, query.query, ctx, up, settings, 1)
        scored = await spec.scorer.score(query.query, candidates, ctx)
    except Degraded as e:
        if preliminary is None:
            return _unranked(outcome, query, ranked, candidates, ctx, settings, spec, e)
        outcome = outcome.warned(Degradation("snippet_scores", f"semantic-svc failed on page content ({e}): "
                                               "ranked by snippets alone"))
        scored = Scored(((),) * len(candidates), frozenset(range(len(candidates))))
    if scored.note:
        outcome = outcome.warned(Degradation("partial_scores", scored.note))
    judged = [Judged(c, tuple(sorted(passages, key=lambda p: p.score, reverse=True)),
                     preliminary.scores[i] if preliminary else None)
              for i, (c, passages) in enumerate(zip(candidates, scored.passages, strict=True))]
    judged, unscored = _placed_unscored(judged, scored.cut, preliminary)
    by_relevance = spec.by_relevance and not query.exhaustive
    margin = settings.relevance_margin if by_relevance else math.inf
    if by_relevance and not scored.cut and (best := _best_probability(judged)) is not None \
            and best < settings.relevance_floor:
        return _abstained(outcome, query, ranked, judged, ctx, settings, best)
    if spec.recency and is_time_sensitive(query.query, query.tbs) and settings.recency_weight > 0:
        judged = _weighed_by_recency(judged, settings.recency_weight)
        outcome = outcome.warned(RECENCY_NOTE)
    if by_relevance and _best_probability(judged) is None and any(j.passages for j in judged):
        outcome = outcome.warned(Degradation("uncalibrated", UNCALIBRATED))
    judged = _with_features(query.query, _pruned(judged, margin))
    in_order, judged = _in_final_order(judged, spec, settings.rrf_k)
    return _finish(outcome, query, ranked, [j for j in in_order if j.kept] + unscored, judged + unscored, ctx,
                   settings, margin)


async def _fetch(candidates: tuple[Candidate, ...], preliminary: Ratings | None, query: SearchQuery,
                 ctx: SearchContext, settings: RankingSettings) -> tuple[tuple[Candidate, ...], str | None]:
    """The first FETCH_TOP (or the request's `fetch_top`) candidates by pass 1, with their pages, and every
    candidate whose source supplied its page's text, with that text (not fetched, not counted in FETCH_TOP)."""
    # pass 1 chooses by its score fused with SearXNG's rank: on thin snippets the score alone left pages SearXNG
    # had right unfetched (measured on the dev set), and only fetched pages can prove themselves
    order = (rrf({"score": list(preliminary.scores), "prior": prior(candidates)}, {"score": 0.5}, settings.rrf_k)
             if preliminary else range(len(candidates)))
    # when formats will want these pages as Documents, one extraction serves ranking and the Documents both
    how = Extraction(document=bool(query.scrape_formats) and query.main_content_only,
                     chunk_chars=settings.chunk_chars, max_bytes=settings.rank_max_bytes)
    supplied = {c.url: page for c in candidates if (page := supplied_page(c.hit, how)) is not None}
    top = [candidates[i] for i in order if candidates[i].url not in supplied]
    fetched = await ctx.load_pages([c.url for c in top[: query.fetch_top if query.fetch_top is not None
                                                      else settings.fetch_top]], how)
    pages = {**fetched, **supplied}
    with_pages = tuple(replace(c, page=pages[c.url]) if c.url in pages else c for c in candidates)
    return with_pages, failed_pages(fetched)


def _placed_unscored(judged: list[Judged], cut: frozenset[int], preliminary: Ratings | None
                     ) -> tuple[list[Judged], list[Judged]]:
    """Candidates the deadline left unscored: with pass 1, ranked among the scored by their snippet's pass-1
    score (the same scale: what pass 2 would have scored without the page); without, after every scored
    candidate in SearXNG's order. Returns (to rank, to append)."""
    if preliminary is not None:
        probabilities = preliminary.probabilities or (None,) * len(preliminary)
        return [replace(j, passages=tuple(replace(p, score=preliminary.scores[i], probability=probabilities[i])
                                          for p in j.candidate.snippet()))
                if i in cut else j for i, j in enumerate(judged)], []
    return ([j for i, j in enumerate(judged) if i not in cut],
            [replace(j, kept=True, reason="not scored before the deadline: SearXNG order")
             for i, j in enumerate(judged) if i in cut])


def _weighed_by_recency(judged: list[Judged], weight: float) -> list[Judged]:
    """Each page's passages, and so the page, gain the page's freshness bonus: `weight` times the spread of the
    passages' scores (whatever scale the model scores on; when they all tie, any bonus only breaks the tie)."""
    scale = weight * (_spread([p.score for j in judged for p in j.passages]) or 1.0)

    def weighed(j: Judged) -> Judged:
        bonus = recency_bonus(j.candidate.published, scale)
        return replace(j, passages=tuple(replace(p, score=p.score + bonus) for p in j.passages))

    return [weighed(j) for j in judged]


def _spread(values: list[float]) -> float:
    return max(values) - min(values) if values else 0.0


def _best_probability(judged: Sequence[Judged]) -> float | None:
    return max((j.probability for j in judged if j.probability is not None), default=None)


def _pruned(judged: list[Judged], margin: float) -> list[Judged]:
    """Candidates whose probability of relevance lies within `margin` of the best one's are kept, and those
    without one (no calibration, or a snippet score standing in); a candidate without a score is pruned."""
    top = _best_probability(judged)
    return [replace(j, reason="no passage was scored") if j.score is None else
            replace(j, kept=True, reason="kept (no probability of relevance to prune by)")
            if top is None or j.probability is None else
            replace(j, kept=within_margin([top, j.probability], margin)[1],
                    reason=f"probability {j.probability:.2f}, {top - j.probability:.2f} below the top "
                           f"(RELEVANCE_MARGIN {margin})")
            for j in judged]


def _abstained(outcome: SearchOutcome, query: SearchQuery, ranked: str, judged: list[Judged], ctx: SearchContext,
               settings: RankingSettings, best: float) -> SearchOutcome:
    """No result presented: not one passage is likely enough to be relevant to answer the query."""
    floor = settings.relevance_floor
    below = [replace(j, reason=f"below the relevance floor (probability {j.probability:.2f} < {floor})"
                     if j.probability is not None else "below the relevance floor") for j in judged]
    note = Degradation("abstained", f"no passage reaches the relevance floor (best probability {best:.2f}, "
                                    f"RELEVANCE_FLOOR {floor}): nothing found answers the query, so no result is "
                                    "presented")
    return replace(_finish(outcome.warned(note), query, ranked, (), below, ctx, settings), abstained=True)


def _with_features(query: str, judged: list[Judged]) -> list[Judged]:
    """The scored candidates with their page features (features.py), computed over all of them."""
    scored = [j for j in judged if j.score is not None]
    columns = page_features(query, [j.candidate for j in scored], [j.score or 0.0 for j in scored],
                            [j.preliminary or 0.0 for j in scored])
    by_url = {j.candidate.url: {name: columns[name][i] for name in FEATURES} for i, j in enumerate(scored)}
    return [replace(j, features=by_url.get(j.candidate.url, {})) for j in judged]


def _fused(judged: list[Judged], spec: RankSpec, rrf_k: int) -> list[Judged]:
    """The scored candidates in final order, each with its fused value: the spec's fusion of their features
    (z-scored over every scored candidate, so that the order does not depend on how many the margin kept)."""
    scored = [j for j in judged if j.score is not None]
    columns = {name: [j.features[name] for j in scored] for name in FEATURES}
    values = FUSIONS[spec.fusion](columns, spec.weights, rrf_k)
    return [replace(scored[i], fused=values[i]) for i in descending(values)]


def _in_final_order(judged: list[Judged], spec: RankSpec, rrf_k: int) -> tuple[list[Judged], list[Judged]]:
    """(the scored candidates in final order, every candidate in its own order), each scored one with its fused
    value."""
    in_order = _fused(judged, spec, rrf_k)
    fused = {j.candidate.url: j for j in in_order}
    return in_order, [fused.get(j.candidate.url, j) for j in judged]


def _admit(spec: RankSpec, query: str, ctx: SearchContext, up: Upstreams, settings: RankingSettings,
           passes: int) -> None:
    """Raises LaneFull when the spec's scorer waits for the model, `passes` times yet, and the model's lane would
    not reach its first texts (chunks at most CHUNK_CHARS long) before the scoring deadline (SEMANTIC_ADMISSION)."""
    if spec.model_kind is not None:
        admit(up.semantic.lane_wait_s(), up.semantic.pace(spec.model_kind), settings.chunk_chars + len(query),
              ctx.scoring_deadline() - time.monotonic(), passes)


def _why(failure: Degraded) -> str:
    """What a warning says of the model scoring nothing."""
    return str(failure) if isinstance(failure, LaneFull) else f"semantic-svc failed ({failure})"


def _unranked(outcome: SearchOutcome, query: SearchQuery, ranked: str, candidates: Sequence[Candidate],
              ctx: SearchContext, settings: RankingSettings, spec: RankSpec, failure: Degraded) -> SearchOutcome:
    """The degraded outcome when the model scored nothing: the first pass when a page was fetched, else
    SearXNG's order."""
    if settings.rank_first_pass and any(c.has_content for c in candidates):
        return _first_pass(outcome, query, ranked, candidates, ctx, settings, spec, _why(failure))
    return _searxng_order(outcome, query, ranked, candidates, ctx, settings, _why(failure))


def _first_pass(outcome: SearchOutcome, query: SearchQuery, ranked: str, candidates: Sequence[Candidate],
                ctx: SearchContext, settings: RankingSettings, spec: RankSpec, cause: str) -> SearchOutcome:
    """Every candidate's evidence scored by BM25 (as many of its best passages as packing takes of a page), in
    the spec's fusion of their page features; nothing pruned, since BM25 gives no probability of relevance; and
    why."""
    with ctx.timings.stage("first_pass"):
        evidence = bm25_scored(query.query, [c.evidence() for c in candidates], settings.pack_per_url)
        judged = _with_features(query.query, [
            Judged(c, passages, kept=bool(passages), reason="first pass (BM25)" if passages else "no passage to score")
            for c, passages in zip(candidates, evidence, strict=True)])
        in_order, judged = _in_final_order(judged, spec, settings.rrf_k)
    warned = outcome.warned(Degradation("first_pass", f"{cause}: {FIRST_PASS}"))
    return _finish(warned, query, ranked, in_order, judged, ctx, settings)


def _searxng_order(outcome: SearchOutcome, query: SearchQuery, ranked: str, candidates: Sequence[Candidate],
                   ctx: SearchContext, settings: RankingSettings, cause: str) -> SearchOutcome:
    """The degraded outcome when nothing could be scored: SearXNG's order, nothing pruned, and why."""
    judged = [Judged(c, kept=True, reason="SearXNG order (no scores)") for c in candidates]
    unscored = Degradation("searxng_order", f"{cause}: {SEARXNG_ORDER}")
    return _finish(outcome.warned(unscored), query, ranked, judged, judged, ctx, settings)


def _finish(outcome: SearchOutcome, query: SearchQuery, ranked: str, in_order: Sequence[Judged],
            judged: Sequence[Judged], ctx: SearchContext, settings: RankingSettings, margin: float = math.inf
            ) -> SearchOutcome:
    """The kept candidates (best first) become the ranked bucket; their passages whose probability of relevance
    lies within `margin` of the best one's (or that have none) are packed into the context."""
    kept = list(in_order)[: query.limit]
    top = _best_probability(judged) or 0.0
    shown = {j.candidate.url: tuple(p for p in j.passages if p.probability is None or top - p.probability <= margin)
             for j in kept}
    with ctx.timings.stage("pack"):
        packed = pack([p for passages in shown.values() for p in passages], settings.pack_chars,
                      settings.pack_per_url)
    details = {j.candidate.url: ResultDetail(j.score, j.candidate.evidence_kind,
                                             tuple(p.as_json() for p in shown[j.candidate.url]), j.fused,
                                             j.probability)
               for j in kept if j.score is not None}
    limited = outcome.limited(query.limit)
    pages = {j.candidate.url: j.candidate.page for j in judged if j.candidate.page is not None}
    return replace(limited, buckets={**limited.buckets, ranked: [j.candidate.hit for j in kept]}, details=details,
                   context=context_text(packed), packed=tuple(packed),
                   explain=tuple(_explain_row(j) for j in judged) if query.explain else None, pages=pages)


def _explain_row(judged: Judged) -> ExplainRow:
    candidate, page = judged.candidate, judged.candidate.page
    return ExplainRow(
        url=candidate.url, title=candidate.title, searxng_rank=candidate.rank,
        fetch=None if page is None else "supplied" if page.fetched.supplied else (
            "ok" if page.extracted else str(page.error)),
        content_chars=len(page.extracted.markdown) if page and page.extracted else 0,
        pass1_score=_rounded(judged.preliminary), score=_rounded(judged.score), rank_score=_rounded(judged.fused),
        decision="kept" if judged.kept else "pruned", reason=judged.reason,
        features={name: round(value, 4) for name, value in judged.features.items()}, probability=judged.probability,
        found_by=candidate.hit.found_by)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
