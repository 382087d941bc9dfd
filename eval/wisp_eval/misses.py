"""Why a ranked mode's context lacks the answer: each answerable query asked with `explain`, and the first stage
that lost its answer page (one judged 3), in pipeline order:

- answered: an answer key is in the packed context;
- not a candidate: no answer page among SearXNG's candidates (retrieval, not ranking);
- not fetched: an answer page was a candidate but not among those fetched (only its snippet was scored);
- fetch failed: fetched, but its content could not be read;
- pruned: fetched and scored, but pruned (below the margin, or the search abstained);
- not packed: kept, but the passage holding the answer was not scored or not packed (the shortlist, the
  per-page limit, the 10,000-character budget).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import httpx

from wisp_eval.dataset import Query
from wisp_eval.metrics import contains_answer, page_key

STAGES = ("answered", "not a candidate", "not fetched", "fetch failed", "pruned", "not packed")


@dataclass(frozen=True)
class Miss:
    qid: str
    stage: str


def classify(client: httpx.Client, agent_url: str, mode: str, queries: list[Query],
             qrels: dict[str, dict[str, int]]) -> list[Miss]:
    misses = []
    for query in (q for q in queries if q.answer_keys and not q.unanswerable):
        body = client.post(f"{agent_url}/v2/search", json={"query": query.text, "limit": 10, "retrieval_mode": mode,
                                                           "explain": True}).json()
        answer_pages = {page for page, grade in qrels.get(query.qid, {}).items() if grade >= 3}
        misses.append(Miss(query.qid, _stage(body, query, answer_pages)))
    return misses


def _stage(body: dict, query: Query, answer_pages: set[str]) -> str:
    if contains_answer(str(body.get("context") or ""), query.answer_keys):
        return "answered"
    rows = [r for r in body.get("explain") or [] if page_key(r["url"]) in answer_pages]
    if not rows:
        return "not a candidate"
    if all(r.get("fetch") is None for r in rows):
        return "not fetched"
    fetched = [r for r in rows if r.get("fetch") is not None]
    if all(r["fetch"] != "ok" for r in fetched):
        return "fetch failed"
    if all(r["decision"] != "kept" for r in fetched if r["fetch"] == "ok"):
        return "pruned"
    return "not packed"


def counts(misses: list[Miss]) -> dict[str, int]:
    seen = Counter(m.stage for m in misses)
    return {stage: seen.get(stage, 0) for stage in STAGES}
