"""One research job: plan → search → note → reflect → search again → write, within its effort's budget.

- plan: the prompt's parts as queries (queries.decomposed), or the LLM's when they are valid;
- search: each query through the search stage as a user's would run (hybrid by default), on the given sites
  alone with `strict_urls`; the URLs given are read first;
- note: each search's best passages, cut short (notes.py): the job keeps notes, not pages;
- reflect: the parts of the question the notes do not cover yet, asked again with the words the best passages
  share (pseudo-relevance feedback), or the LLM's follow-ups when they are valid; a round that notes nothing new
  ends the search;
- write: the rich answer's path (cited, every claim checked), or the extraction's with a schema.

Anytime: the deadline, a cancel, maxCredits or an LLM that fails end the job with what it has, and say why
(`stop_reason`, warnings). With no LLM at all, the report is the evidence: the sources and their key passages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from wisp_text.terms import content_terms

from agent.answers.extraction import PageText
from agent.answers.rich import Question, Rich
from agent.core.outcome import Answer
from agent.core.pages import Extraction
from agent.core.passage import Passage
from agent.core.query import SearchQuery
from agent.core.research import (
    CANCELLED,
    CONVERGED,
    CREDITS,
    DEADLINE,
    DONE,
    ResearchJob,
    ResearchResult,
    ResearchSource,
    Step,
)
from agent.errors import WispError
from agent.pages.webhooks import WebhookSender
from agent.ranking.evidence import bm25_order
from agent.research.budget import EFFORT_BUDGETS, Budget
from agent.research.notes import Notebook, found_passages, salient_terms
from agent.research.queries import QUERIES_SCHEMA, decomposed, fresh, interleaved, key, llm_queries
from agent.research.settings import ResearchSettings
from agent.research.threads import thread_question
from agent.search.service import Search
from agent.upstream.llm import LLMUnavailable

SEARCH_TIMEOUT_S = 30.0  # one search of a job, at most: a slow one must not take the job's whole budget
LLM_STEP_S = 20.0  # a plan's or a follow-up's LLM call, at most
NOTES_IN_PROMPT = 6  # notes a follow-up's prompt shows the LLM, each cut to its first sentence or two
NOTE_IN_PROMPT_CHARS = 240
SNIPPET_CHARS = 400  # of a source's first note, for the surfaces that show one (Sonar's search_results)
READ_PER_URL = 2  # passages of a given URL's page noted
KEY_EVIDENCE = "Key evidence:"  # the heading of the passages a written report ends with
FEEDBACK_TERMS = 3  # words a follow-up takes from the passages its part found


@dataclass(frozen=True)
class Researcher:
    """The research stage, made once at start-up: its settings, the search stage it searches and reads with, and
    the sender of its jobs' webhooks."""

    settings: ResearchSettings
    search: Search
    webhooks: WebhookSender


class Stopped(Exception):
    """The job was told to stop (a cancel) or has spent what it may (maxCredits)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class _Run:
    """One job's progress: what it spent, its steps. Private to the loop, which alone changes it."""

    job: ResearchJob
    budget: Budget
    started: float
    notebook: Notebook
    cancelled: Callable[[], bool]
    on_step: Callable[[Step], None] | None = None
    credits: int = 0
    llm_calls: int = 0
    asked: set[frozenset[str]] = field(default_factory=set)
    searched: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def step(self, kind: str, detail: str, query: str = "", urls: tuple[str, ...] = ()) -> None:
        step = Step(kind, detail, round(time.monotonic() - self.started, 3), query, urls)
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def spend(self, credits: int = 1) -> None:
        """Count a search or an LLM call; Stopped when a cancel came or maxCredits would be passed."""
        if self.cancelled():
            raise Stopped(CANCELLED)
        if self.job.max_credits is not None and self.credits + credits > self.job.max_credits:
            raise Stopped(CREDITS)
        self.credits += credits


async def run_research(job: ResearchJob, researcher: Researcher, cancelled: Callable[[], bool] = lambda: False,
                       on_text: Callable[[str], None] | None = None,
                       on_step: Callable[[Step], None] | None = None) -> ResearchResult:
    """The job's report and sources, within its effort's wall-clock limit; never raises for what it met.
    `on_text` gets the report's text as the LLM writes it, `on_step` each step as it is taken."""
    budget = EFFORT_BUDGETS[job.effort]
    settings = researcher.settings
    run = _Run(job, budget, time.monotonic(), Notebook(max_notes=settings.research_max_notes,
                                                       note_chars=settings.research_note_chars), cancelled, on_step)
    stop = DONE
    try:
        async with asyncio.timeout(budget.wall_s - budget.write_reserve_s):
            stop = await _research(run, researcher)
    except TimeoutError:
        stop = DEADLINE
    except Stopped as e:
        stop = e.reason
    if cancelled():  # told to stop after its last step: it stops before writing
        stop = CANCELLED
    run.step("stop", stop)
    result = await _written(run, researcher, stop, on_text)
    run.step("end", f"{len(result.sources)} sources")  # when the report was written: the job's own time
    result = replace(result, steps=tuple(run.steps))
    # a cancel that came while the report was written still ends the job as cancelled, with the report as its
    # partial result: a client whose DELETE was accepted reads a cancelled job
    return replace(result, stop_reason=CANCELLED) if cancelled() else result


async def _research(run: _Run, researcher: Researcher) -> str:
    if run.job.history:
        llm = researcher.search.services.upstreams.llm
        question, warning = await thread_question(run.job, llm)
        run.llm_calls += 1 if llm.base_url else 0
        run.warnings += [warning] if warning else []
        run.job = replace(run.job, prompt=question)
        run.step("plan", f"turn {run.job.turn} of its thread, asked as: {question}")
    if run.job.urls:
        await _read_given(run, researcher)
    queries = await _planned(run, researcher)
    for round_ in range(run.budget.rounds):
        added = 0
        for query in queries[:run.budget.queries]:
            added += await _searched(run, researcher, query, round_)
        if not added:
            return CONVERGED
        if round_ + 1 == run.budget.rounds:
            break
        queries = await _follow_ups(run, researcher)
        if not queries:
            return CONVERGED
    return DONE


async def _planned(run: _Run, researcher: Researcher) -> list[str]:
    """The first round's queries: the whole prompt, then its own parts (clauses, the sides of a comparison) in
    turn with the LLM's valid queries, so that a poor plan cannot crowd out a part of the question."""
    prompt = run.job.prompt
    parts = decomposed(prompt)
    ask = (f"Question: {prompt}\n\nWrite up to {run.budget.queries} short web search queries that together find "
           'what the question needs, one for each part of it. Answer with JSON: {"queries": ["...", "..."]}')
    planned = await _llm_queries(run, researcher, ask, prompt)
    queries = fresh([*parts[:1], *interleaved(parts[1:], planned)], run.asked)
    run.step("plan", "; ".join(queries[:run.budget.queries]) + ("" if planned else " (from the question's parts)"))
    return queries


async def _follow_ups(run: _Run, researcher: Researcher) -> list[str]:
    """The next round's queries: each part of the question that no note covers yet (or the question again), with
    the words that its own search's and the whole question's best passages add (pseudo-relevance feedback: how a
    bridge question's second hop is found), in turn with the LLM's valid follow-ups."""
    prompt, notebook = run.job.prompt, run.notebook
    shown = "\n".join(f"- {p.text[:NOTE_IN_PROMPT_CHARS]}" for p in notebook.for_report()[:NOTES_IN_PROMPT])
    ask = (f"Question: {prompt}\n\nNotes so far:\n{shown}\n\nWhat is still missing to answer the question? Write up "
           f"to {run.budget.queries} new web search queries for it. Answer with JSON: "
           '{"queries": ["...", "..."]}')
    suggested = await _llm_queries(run, researcher, ask, f"{prompt}\n{notebook.text()}")
    parts = decomposed(prompt)
    # the whole question is asked again only when it has no parts of its own
    missing = [part for part in parts[1:] or parts if not notebook.covers(part)] or parts[:1]
    known, noted = content_terms(prompt), notebook.for_report()
    expanded = []
    for part in missing:
        found = notebook.found_by({q for q in run.searched if q.startswith(part)} | {parts[0]})
        expanded.append(" ".join([part, *salient_terms(found, known, FEEDBACK_TERMS, noted)]))
    queries = fresh(interleaved(expanded, suggested), run.asked)
    run.step("reflect", f"missing: {'; '.join(missing)}; next: {'; '.join(queries[:run.budget.queries]) or 'none'}")
    return queries


async def _llm_queries(run: _Run, researcher: Researcher, ask: str, about: str) -> list[str]:
    """The LLM's valid queries for `ask`, or [] when none are valid, the LLM fails, or the budget has no call
    left."""
    llm = researcher.search.services.answers.llm
    if not llm.base_url or run.llm_calls >= run.budget.llm_calls:
        return []
    run.spend()
    run.llm_calls += 1
    try:
        reply = await llm.complete([{"role": "user", "content": ask}], LLM_STEP_S, schema=QUERIES_SCHEMA)
    except LLMUnavailable as e:
        run.warnings.append(f"a planning step fell back to the question's own words: {e}")
        return []
    return llm_queries(reply.text, about, run.asked)


async def _searched(run: _Run, researcher: Researcher, query: str, round_: int) -> int:
    """Search `query` as a user's search runs, and note what it found; the new notes' number."""
    run.spend()
    run.asked.add(key(query))
    run.searched.append(query)
    search, job = researcher.search, run.job
    sites = [urlsplit(url).hostname or "" for url in job.urls] if job.strict_urls else []
    request = SearchQuery(query=search.query_limit(query), limit=run.budget.results,
                          retrieval_mode=job.retrieval_mode, timeout_ms=round(SEARCH_TIMEOUT_S * 1000),
                          include_domains=[s for s in dict.fromkeys(sites) if s], exhaustive=True)
    try:
        outcome = await search.run(search.prepared(request))
    except WispError as e:
        run.warnings.append(f"the search {query!r} failed: {e.message}")
        run.step("search", f"{query} → failed", query)
        return 0
    run.notebook, added = run.notebook.noted(found_passages(outcome), query, round_)
    noted = tuple(dict.fromkeys(p.url for p in run.notebook.found_by({query})))
    run.step("search", f"{query} → {len(outcome.buckets.get('web', []))} results, {added} new notes", query, noted)
    return added


async def _read_given(run: _Run, researcher: Researcher) -> None:
    """Note the best passages of the URLs given, read through the page loader (its cache and SSRF guard)."""
    services = researcher.search.services
    ctx = services.context(SEARCH_TIMEOUT_S)
    # chunked by the extraction worker, as ranking's pages are, not on the event loop
    how = Extraction(main_only=True, chunk_chars=researcher.settings.research_note_chars)
    pages = await ctx.load_pages(list(run.job.urls), how, time.monotonic() + SEARCH_TIMEOUT_S)
    read = 0
    for url, page in pages.items():
        if page.extracted is None:
            run.warnings.append(f"{url} could not be read")
            continue
        passages = [Passage(url, page.extracted.title, chunk) for chunk in page.extracted.chunks]
        for i in bm25_order(run.job.prompt, passages)[:READ_PER_URL]:
            run.notebook, added = run.notebook.noted([passages[i]], url, 0)
            read += added
    run.step("read", f"{len(pages)} pages given, {read} notes")


async def _written(run: _Run, researcher: Researcher, stop: str, on_text: Callable[[str], None] | None
                   ) -> ResearchResult:
    """The report from the notes (the cited answer, or the schema's data), within what is left of the wall-clock
    limit; the evidence itself when no answer can be written."""
    passages = _in_report_order(run.notebook.for_report())
    remaining_s = max(run.budget.wall_s - (time.monotonic() - run.started), 1.0)
    if not passages:
        run.warnings.append("the searches found nothing to note")
        return _result(run, stop, "", ())
    if stop == CANCELLED:
        return _evidence_result(run, stop, passages)
    answers, services = researcher.search.services.answers, researcher.search.services
    ctx = services.context(remaining_s, on_text)
    run.step("write", f"from {len(passages)} notes")
    if run.job.schema is not None:
        deadline = time.monotonic() + remaining_s
        pages = [PageText(s.url, s.title, "\n\n".join(p.text for p in passages if p.url == s.url))
                 for s in _sources(passages)]
        extracted = await answers.extract(run.job.prompt, run.job.schema, run.job.system_prompt, pages,
                                          lambda: deadline - time.monotonic(), ctx.schemas)
        run.llm_calls += 1 if answers.llm.base_url else 0
        run.warnings += extracted.warnings
        error = None if extracted.value is not None else (
            f"no value valid against the schema was read from the notes: {extracted.error or 'the LLM gave none'}")
        return replace(_evidence_result(run, stop, passages), data=extracted.value, error=error)
    rich = await answers.rich(Question(run.job.prompt, run.job.system_prompt, extractive_fallback=False), passages,
                              (), ctx)
    run.llm_calls += 1 if answers.llm.base_url else 0
    return _from_rich(run, stop, rich, passages)


def _from_rich(run: _Run, stop: str, rich: Rich, noted: list[Passage]) -> ResearchResult:
    """The cited answer, its sources numbered as it cites them and then every other page the job noted (what it
    consulted), and under it each source's key passage (KEY_EVIDENCE): a small LLM's few sentences lose what
    the notes found, the passages keep it; the evidence of every note when no answer was written."""
    run.warnings += [note.warning for note in rich.notes]
    answer = rich.answer
    if answer is None or answer.abstained or not answer.text:
        if answer is not None and answer.abstained:
            run.warnings.append("the notes are too far from the question for an answer: the evidence comes instead")
        return _evidence_result(run, stop, noted)
    sources = _sources([*rich.packed, *noted])
    return replace(_result(run, stop, f"{answer.text}\n\n{key_evidence(sources)}", sources), claims=_claims(answer))


def _result(run: _Run, stop: str, text: str, sources: tuple[ResearchSource, ...]) -> ResearchResult:
    return ResearchResult(text, sources, stop, credits_used=run.credits, llm_calls=run.llm_calls,
                          warnings=tuple(dict.fromkeys(run.warnings)), steps=tuple(run.steps))


def _in_report_order(passages: Sequence[Passage]) -> list[Passage]:
    """The notes scored by their place, so that packing (which sorts by score) keeps the report's order: scores
    of different searches do not compare."""
    return [replace(p, score=float(len(passages) - i)) for i, p in enumerate(passages)]


def _sources(passages: Sequence[Passage]) -> tuple[ResearchSource, ...]:
    """The pages of `passages`, numbered in order as the report cites them ([1] the first)."""
    first: dict[str, Passage] = {}
    for passage in passages:
        first.setdefault(passage.url, passage)
    return tuple(ResearchSource(url, p.title, p.text[:SNIPPET_CHARS]) for url, p in first.items())


def _evidence_result(run: _Run, stop: str, passages: Sequence[Passage]) -> ResearchResult:
    """The notes as the report (`_evidence`), and their pages as its sources."""
    sources = _sources(passages)
    return _result(run, stop, _evidence(passages, sources), sources)


def _evidence(passages: Sequence[Passage], sources: tuple[ResearchSource, ...]) -> str:
    """The notes as a report without an LLM: each source and its key passages, cited by number."""
    numbers = {s.url: n for n, s in enumerate(sources, 1)}
    lines = ["Evidence found (no answer was written from it):"]
    for source in sources:
        lines.append(f"\n[{numbers[source.url]}] {source.title or source.url} ({source.url})")
        lines += [f"> {p.text}" for p in passages if p.url == source.url]
    return "\n".join(lines)


def key_evidence(sources: Sequence[ResearchSource]) -> str:
    """Each source's key passage (its first note, cut short), cited by its number: what a report ends with."""
    lines = [KEY_EVIDENCE]
    for n, source in enumerate(sources, 1):
        lines += [f"\n[{n}] {source.title or source.url} ({source.url})", f"> {source.snippet}"]
    return "\n".join(lines)


def _claims(answer: Answer) -> tuple[dict[str, object], ...]:
    return tuple({"text": c.text, "citations": list(c.citations), "supported": c.supported, "score": c.score,
                  "reason": c.reason} for c in answer.claims)
