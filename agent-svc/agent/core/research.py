"""A research job as the APIs ask for it (api/firecrawl/agent_wire.py), its store keeps it and research/ runs
it, and what it ends with: a cited report (or the schema's data), its sources, and why it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent.core.webhook import Webhook

# why a job stopped; the first two end a job that did all it meant to, the others cut it short (a partial result)
DONE, CONVERGED = "done", "converged"
DEADLINE, CREDITS, CANCELLED, ERROR = "deadline", "max_credits", "cancelled", "error"
CUT_SHORT = (DEADLINE, CREDITS, CANCELLED, ERROR)


@dataclass(frozen=True)
class ResearchJob:
    prompt: str
    urls: tuple[str, ...] = ()  # pages read first; with `strict_urls`, the only sites searched
    schema: dict[str, Any] | None = None  # checked; the report is then the data it describes
    effort: str = "medium"
    max_credits: int | None = None  # searches and LLM calls the job may spend; None: the effort's budget alone
    strict_urls: bool = False
    mode: str = "extract"  # Firecrawl's: the answer in `data`, or "chat": as a reply in `message`
    retrieval_mode: str = "hybrid"
    model: str = "wisp-research"
    system_prompt: str | None = None
    citation_format: str = "numbered"  # Tavily's: how its surface shows the report's citations
    webhook: Webhook | None = None  # where its events are delivered, each through the SSRF guard
    thread_id: str = ""  # the thread it continues (its first job's id); "" for a thread's first job
    turn: int = 1
    history: tuple[tuple[str, str], ...] = ()  # the thread's earlier questions and answers, oldest first


@dataclass(frozen=True)
class Step:
    """One step of a job, for its trace: what it did and when, seconds from the job's start."""

    kind: str  # plan | search | read | reflect | stop | write (as it starts) | end (the report written)
    detail: str
    at_s: float
    query: str = ""  # a search's query
    urls: tuple[str, ...] = ()  # the pages a search or a read noted


@dataclass(frozen=True)
class ResearchSource:
    url: str
    title: str
    snippet: str = ""  # its first note's text, cut short


@dataclass(frozen=True)
class ResearchResult:
    text: str  # the report with [n] citations of `sources`, or the evidence when no answer could be written
    sources: tuple[ResearchSource, ...]
    stop_reason: str
    data: Any = None  # the schema's value, when the job had a schema and it was read
    claims: tuple[dict[str, Any], ...] = ()  # the report's claims as checked: {text, citations, supported, score}
    credits_used: int = 0
    llm_calls: int = 0
    warnings: tuple[str, ...] = ()
    steps: tuple[Step, ...] = field(default_factory=tuple)
    error: str | None = None  # what failed it (a bug; with a schema, no valid value): what the client is told

    @property
    def cut_short(self) -> bool:
        return self.stop_reason in CUT_SHORT
