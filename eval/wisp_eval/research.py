"""Research jobs against one hybrid search, on the multi-hop set (multihop.py), in one run.

Each question goes, in a rotating order, to one hybrid search (POST /v2/search, `limit` results) and to a research
job on each agent-svc under test (one per LLM: none, the test LLM, a poor planner), started and polled through
Tavily's /research as tavily-python does (`model` auto: the default effort). Per answer:
- all-hops: every hop has one of its gold pages among the sources (the search's results, the job's sources);
- hop recall: the share of hops that do;
- answer found: an answer key in the text (the search's packed context or descriptions, the job's content);
- time, and for a job its LLM calls (GET /v2/agent/{id}'s `llmCalls`: the same job).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from wisp_eval.dataset import Query
from wisp_eval.metrics import contains_answer, page_key
from wisp_eval.multihop import MultiHopQuestion
from wisp_eval.targets import AgentMode

HYBRID = "hybrid search"
POLL_S = 1.0


@dataclass
class Outcome:
    """What one system gave for one question, before scoring."""

    pages: list[str] = field(default_factory=list)
    text: str = ""
    seconds: float = 0.0
    status: str = "completed"
    llm_calls: int | None = None
    error: str | None = None
    warning: str = ""


@dataclass
class Row:
    qid: str
    kind: str
    split: str
    system: str
    order: int
    all_hops: bool
    hop_recall: float
    answer_found: bool
    seconds: float
    status: str
    llm_calls: int | None
    pages: list[str]
    error: str | None
    warning: str


class HybridSearch:
    """One hybrid search, as the baseline: what a single query returns."""

    name = HYBRID

    def __init__(self, agent_url: str, client: httpx.Client, limit: int) -> None:
        self._mode = AgentMode("hybrid", agent_url, client, limit)

    def ask(self, question: MultiHopQuestion) -> Outcome:
        answer = self._mode.ask(Query(question.qid, question.kind, question.text, question.answer_keys))
        return Outcome(answer.pages, answer.text, answer.latency_ms / 1000, "error" if answer.error else "completed",
                       error=answer.error, warning=answer.warning)


class ResearchJobs:
    """A research job through Tavily's POST /research, polled with GET /research/{id} until it ends."""

    def __init__(self, name: str, agent_url: str, client: httpx.Client, timeout_s: float) -> None:
        self.name, self._url, self._client, self._timeout_s = name, agent_url.rstrip("/"), client, timeout_s

    def ask(self, question: MultiHopQuestion) -> Outcome:
        started = time.monotonic()
        try:
            request_id = self._client.post(f"{self._url}/research",
                                           json={"input": question.text, "model": "auto"}).json()["request_id"]
            status = self._poll(request_id, started)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
            return Outcome(seconds=time.monotonic() - started, status="error", error=f"{type(e).__name__}: {e}")
        seconds = time.monotonic() - started
        details = self._client.get(f"{self._url}/v2/agent/{request_id}").json()
        return Outcome([page_key(s["url"]) for s in status.get("sources") or []], _text(status.get("content")),
                       seconds, status["status"], details.get("llmCalls"), status.get("error"),
                       str(status.get("warning") or ""))

    def _poll(self, request_id: str, started: float) -> dict[str, Any]:
        while True:
            status = self._client.get(f"{self._url}/research/{request_id}").json()
            if status.get("status") not in ("pending", "in_progress"):
                return status
            if time.monotonic() - started > self._timeout_s:
                return {"status": "timed out", "error": f"still running after {self._timeout_s:.0f} s"}
            time.sleep(POLL_S)


class System:
    name: str

    def ask(self, question: MultiHopQuestion) -> Outcome: ...


Progress = Callable[[int, int, MultiHopQuestion, list[Row]], None]


def evaluate(questions: list[MultiHopQuestion], systems: list[System], progress: Progress | None = None
             ) -> list[Row]:
    """Every question to every system, the order rotating per question so that a slow moment falls on all."""
    rows: list[Row] = []
    for i, question in enumerate(questions):
        shift = i % len(systems)
        turn = systems[shift:] + systems[:shift]
        answered = [score(question, s.name, order, s.ask(question)) for order, s in enumerate(turn)]
        rows += answered
        if progress:
            progress(i + 1, len(questions), question, answered)
    return rows


def score(question: MultiHopQuestion, system: str, order: int, outcome: Outcome) -> Row:
    found = set(outcome.pages)
    covered = [any(page in found for page in hop.pages) for hop in question.hops]
    return Row(question.qid, question.kind, question.split, system, order, all(covered), sum(covered) / len(covered),
               contains_answer(outcome.text, question.answer_keys), round(outcome.seconds, 2), outcome.status,
               outcome.llm_calls, outcome.pages, outcome.error, outcome.warning)


def summarize(rows: list[Row]) -> list[dict[str, Any]]:
    """Per split and system: the recalls, answers found, completed jobs, times and LLM calls."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.split, row.system), []).append(row)
    summary = []
    for (split, system), group in sorted(groups.items()):
        seconds = [r.seconds for r in group]
        calls = [r.llm_calls for r in group if r.llm_calls is not None]
        summary.append({
            "split": split, "system": system, "questions": len(group),
            "all_hops_recall": _mean([r.all_hops for r in group]), "hop_recall": _mean([r.hop_recall for r in group]),
            "answer_found": _mean([r.answer_found for r in group]),
            "completed": sum(r.status == "completed" for r in group),
            "p50_s": round(statistics.median(seconds), 1), "max_s": round(max(seconds), 1),
            "llm_calls_mean": round(statistics.mean(calls), 1) if calls else None})
    for entry in summary:
        base = next((s for s in summary if s["split"] == entry["split"] and s["system"] == HYBRID), None)
        entry["all_hops_vs_hybrid"] = (round(entry["all_hops_recall"] / base["all_hops_recall"], 2)
                                       if base and base["all_hops_recall"] else None)
    return summary


def table(summary: list[dict[str, Any]]) -> str:
    columns = ["split", "system", "questions", "all_hops_recall", "all_hops_vs_hybrid", "hop_recall", "answer_found",
               "completed", "p50_s", "max_s", "llm_calls_mean"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join("" if s[c] is None else str(s[c]) for c in columns) + " |" for s in summary]
    return "\n".join(lines)


def as_dicts(rows: list[Row]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "" if content is None else str(content)


def _mean(values: list[float] | list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0
