"""Choose the probability floor and margin of the ranked modes from what the modes say, on one split.

Each query is asked once with nothing pruned and nothing abstained (RELEVANCE_FLOOR=0, RELEVANCE_MARGIN=1 on the
agent-svc asked): every result's probability of relevance and its passages come back. A floor then abstains on
the queries whose best probability lies below it; a margin keeps the passages within it of the best one. The table
says, for each floor, how many unanswerable queries abstain and how many answerable ones are lost, and for each
margin how often the answer key is still in a kept passage (the context agent-svc would pack, less its
character budget).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from wisp_eval.dataset import Query
from wisp_eval.metrics import contains_answer

FLOORS = [round(0.05 * i, 2) for i in range(4, 17)]
MARGINS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1.0]


@dataclass(frozen=True)
class Seen:
    qid: str
    unanswerable: bool
    answer_keys: tuple[str, ...]
    passages: tuple[tuple[float, str], ...]  # (probability, text) of every result's passages

    @property
    def best(self) -> float:
        return max((p for p, _ in self.passages), default=0.0)

    def answered_within(self, margin: float) -> bool:
        return any(contains_answer(text, self.answer_keys) for p, text in self.passages if self.best - p <= margin)


def collect(client: httpx.Client, agent_url: str, mode: str, queries: list[Query]) -> list[Seen]:
    seen = []
    for query in queries:
        body = client.post(f"{agent_url}/v2/search", json={"query": query.text, "limit": 10,
                                                           "retrieval_mode": mode}).json()
        web = (body.get("data") or {}).get("web") or []
        passages = tuple((float(p["probability"]), str(p.get("text") or "")) for r in web
                         for p in r.get("passages") or [] if isinstance(p.get("probability"), (int, float)))
        seen.append(Seen(query.qid, query.unanswerable, query.answer_keys, passages))
    return seen


def floor_table(seen: list[Seen]) -> list[dict[str, float | int]]:
    """For each floor: unanswerable queries abstained, answerable queries (with an answer key) abstained, and of
    those the ones whose answer was in a passage (lost answers)."""
    answerable = [s for s in seen if not s.unanswerable and s.answer_keys]
    return [{"floor": floor, "unanswerable_abstained": sum(s.best < floor for s in seen if s.unanswerable),
             "unanswerable": sum(s.unanswerable for s in seen),
             "answerable_abstained": sum(s.best < floor for s in answerable),
             "answers_lost": sum(s.best < floor and s.answered_within(1.0) for s in answerable),
             "answerable": len(answerable)} for floor in FLOORS]


def margin_table(seen: list[Seen]) -> list[dict[str, float | int]]:
    answerable = [s for s in seen if not s.unanswerable and s.answer_keys]
    return [{"margin": margin, "answer_in_kept_passage": sum(s.answered_within(margin) for s in answerable),
             "kept_passages": sum(sum(s.best - p <= margin for p, _ in s.passages) for s in answerable),
             "answerable": len(answerable)} for margin in MARGINS]
