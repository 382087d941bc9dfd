"""Run every query through every target, interleaved, and score each answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from wisp_eval.dataset import Query
from wisp_eval.metrics import contains_answer, ndcg_at_k, success_at_k
from wisp_eval.targets import Answer, Target


@dataclass
class Row:
    """One query answered by one target: the per-query record of the JSON report."""

    qid: str
    category: str
    query: str
    mode: str
    order: int  # this target's turn for this query (order rotates from query to query)
    pages: list[str]
    grades: list[int]
    ndcg: float | None  # None: the query has no relevant judgment (unanswerable or unjudged)
    success: bool | None
    answerable: bool | None  # None: the query has no answer key, or is unanswerable
    abstained: bool
    unanswerable: bool
    latency_ms: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    warning: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int, Query, list[Row]], None]


def evaluate(queries: list[Query], qrels: dict[str, dict[str, int]], targets: list[Target], k: int = 5,
             progress: Progress | None = None) -> list[Row]:
    """Ask each query of every target; the order of targets rotates per query so that a slow moment of
    a shared upstream falls on every target alike."""
    rows: list[Row] = []
    for i, query in enumerate(queries):
        shift = i % len(targets)
        turn = targets[shift:] + targets[:shift]
        answered = [score(query, qrels.get(query.qid, {}), t.name, position, t.ask(query), k)
                    for position, t in enumerate(turn)]
        rows += answered
        if progress:
            progress(i + 1, len(queries), query, answered)
    return rows


def score(query: Query, judged: dict[str, int], mode: str, order: int, answer: Answer, k: int) -> Row:
    """A failed request scores as an answer with nothing in it: the failure is the mode's."""
    has_judgments = bool(judged) and not query.unanswerable
    ndcg = ndcg_at_k(answer.pages, judged, k) if has_judgments else None
    answerable = None
    if query.answer_keys and not query.unanswerable:
        answerable = contains_answer(answer.text, query.answer_keys)
    return Row(
        qid=query.qid, category=query.category, query=query.text, mode=mode, order=order,
        pages=answer.pages[:k], grades=[judged.get(p, 0) for p in answer.pages[:k]],
        ndcg=ndcg, success=success_at_k(answer.pages, judged, k) if ndcg is not None else None,
        answerable=answerable, abstained=answer.abstained, unanswerable=query.unanswerable,
        latency_ms=answer.latency_ms, timings_ms=answer.timings_ms, error=answer.error, warning=answer.warning,
    )
