"""Threads of research jobs (Firecrawl's `threadId`): a job that continues a thread gets the thread's earlier
questions and answers, and searches for its question made whole from them. The LLM condenses the turns into one
question (validated: it keeps half the follow-up's words and some of the earlier questions'); without one, a short
follow-up ("and PostgreSQL's?") takes the words of the question before it that it lacks."""

from __future__ import annotations

import json
from collections.abc import Sequence

from wisp_text.terms import content_terms

from agent.core.research import ResearchJob, ResearchResult
from agent.search.chat import standalone_question
from agent.upstream.llm import LLMClient

TURNS_KEPT = 3  # earlier turns a job is given
ANSWER_CHARS = 1500  # of each earlier answer
SHORT_FOLLOW_UP = 6  # content words of a follow-up that cannot stand alone


def turn_of(job: ResearchJob, result: ResearchResult | None) -> tuple[str, str]:
    """One earlier turn: its question, and its answer cut short (the schema's value as JSON)."""
    if result is None:
        return job.prompt, ""
    answer = json.dumps(result.data) if job.schema is not None and result.data is not None else result.text
    return job.prompt, answer[:ANSWER_CHARS]


def history_of(turns: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(turns[-TURNS_KEPT:])


async def thread_question(job: ResearchJob, llm: LLMClient) -> tuple[str, str | None]:
    """The question a follow-up asks, made whole from its thread; a warning when the LLM's could not be used."""
    turns = [(role, text) for question, answer in job.history for role, text in (("user", question),
                                                                                 ("assistant", answer))]
    question, warning = await standalone_question(job.prompt, [*turns, ("user", job.prompt)], llm)
    asked, earlier = set(content_terms(job.prompt)), set(content_terms(" ".join(q for q, _ in job.history)))
    words = set(content_terms(question))
    if warning is None and len(asked & words) >= len(asked) / 2 and earlier & words:
        return question, None
    return _with_earlier_words(job), warning


def _with_earlier_words(job: ResearchJob) -> str:
    words = content_terms(job.prompt)
    if len(words) > SHORT_FOLLOW_UP or not job.history:
        return job.prompt
    earlier = [w for w in dict.fromkeys(content_terms(job.history[-1][0])) if w not in words]
    return f"{job.prompt} {' '.join(earlier)}".strip()
