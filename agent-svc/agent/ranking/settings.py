"""What every ranked mode shares (a mode's own tunables live in its module, ranking/modes/)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar, cast

from pydantic import Field

from agent.core.section import Section

S = TypeVar("S", bound=Section)


# `wisp_eval floors` on the dev split (every third query held out), hybrid mode: the highest floor that abstains
# on no dev query whose results held its answer (3 of its 5 unanswerable abstain; 0.4 gets 4, losing 2 of 24
# answers), and the smallest margin that keeps every answer a margin of 1 keeps (24 of 37): docs/evaluation.md
RELEVANCE_FLOOR = 0.35
RELEVANCE_MARGIN = 0.4


class RankingSettings(Section):
    """What every ranked mode shares: the deadline, what is fetched and how it is chunked, packed, fused."""

    pipeline_deadline_s: float = Field(
        8.0, gt=0, description="Deadline of a ranked search from its start (the request's timeout when smaller)"
    )
    rank_reserve_s: float = Field(1.5, ge=0, description="Time kept for ranking when fetching stops")
    fetch_top: int = Field(8, ge=0, le=12, description="Candidates fetched and extracted in the ranked modes")
    rank_max_bytes: int = Field(
        1_000_000, ge=10_000, description="ranked modes: how much of a page's HTML is extracted for ranking "
        "(about 1.5 s per MB); Documents always get the whole page")
    chunk_chars: int = Field(1200, ge=200, le=8000, description="Chunk size, in characters")
    pack_chars: int = Field(10_000, ge=500, description="Budget of the packed context, in characters")
    pack_per_url: int = Field(3, ge=1, description="Most passages of one page in the packed context")
    recency_weight: float = Field(0.5, ge=0, description="For time-sensitive queries: what a fresh page gains, as a "
                                  "share of the spread of the candidates' scores")
    relevance_floor: float = Field(
        RELEVANCE_FLOOR, ge=0, le=1, description="hybrid and semantic modes: abstain (no result, `abstained: true` "
        "and a warning) when no passage's probability of relevance reaches this (semantic-svc calibrates each "
        "model's scores into probabilities, so one floor means the same for every model)")
    relevance_margin: float = Field(
        RELEVANCE_MARGIN, ge=0, le=1, description="hybrid and semantic modes: keep results, and pack passages, "
        "whose probability of relevance lies within this of the best one's")
    rrf_k: int = Field(10, ge=1, le=1000, description="k of reciprocal rank fusion (1/(k+rank)): small pools (about 20 "
                       "candidates) want a smaller k than the usual 60, which keeps the top ranks decisive")
    reformulate: bool = Field(False, description="Also search a keyword form of question-like queries")
    rank_first_pass: bool = Field(
        True, description="When semantic-svc cannot score in time (it failed, or its model lane holds more work "
        "than the deadline leaves: SEMANTIC_ADMISSION), rank the fetched pages by BM25 and page features (the "
        "first pass); false: SearXNG's order")


class ModeSettings:
    """Every registered mode's own settings (its `Section`), by type: a mode reads its own and names the one it
    borrows (vector and hybrid_vector score with hybrid's)."""

    def __init__(self, sections: Iterable[Section]) -> None:
        self._by_type = {type(section): section for section in sections}

    def of(self, kind: type[S]) -> S:
        return cast(S, self._by_type[kind])

    def __iter__(self) -> Iterator[Section]:
        return iter(self._by_type.values())
