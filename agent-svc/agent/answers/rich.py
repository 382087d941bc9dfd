"""search_type "rich": the ranked sources → an answer with inline [n] citations whose every claim is checked
(seed 003's search-type spectrum; seed 000's stage 4). It owns the flow and its fallbacks:

- nothing packed, or the best passage below RICH_ABSTAIN_BELOW (its probability of relevance to the question)
  → abstained, no LLM call;
- the LLM down, erroring, slow past the deadline or returning nothing → the ranked sources, no answer, a
  warning;
- no claim of the LLM's answer supported, or a reply that is no answer (its prompt written back, only sources
  that do not exist cited) → the sources' own sentences closest to the question, cited and checked
  (`extractive.py`; RICH_EXTRACTIVE_FALLBACK), the LLM's reply kept for `explain`, a warning; with the fallback
  off, the LLM's answer as it is, or the ranked sources and no answer;
- semantic-svc unable to check the claims → every claim `supported: false` with a warning.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.answers.claims import Checked, checked
from agent.answers.extraction import ExtractedData, PageText, extract_data
from agent.answers.extractive import extractive_draft
from agent.answers.page_answers import answer_pages
from agent.answers.settings import RichSettings
from agent.answers.structured import structured
from agent.answers.synthesis import Draft, Source, draft, messages, sources_of, without_prompt
from agent.core.context import CpuPool, SearchContext
from agent.core.hits import Hit
from agent.core.outcome import Answer, Cause, CheckedClaim, Citation, Degradation, LLMDraft, SearchOutcome
from agent.core.passage import Passage, snippet_chunk
from agent.core.query import PageAsk
from agent.errors import Degraded
from agent.ranking.pack import pack
from agent.upstream.llm import LLMClient, LLMUnavailable, Reply
from agent.upstream.semantic import SemanticClient


@dataclass(frozen=True)
class Question:
    """What a rich answer reads of the request."""

    text: str
    system_prompt: str | None = None
    output_schema: dict[str, Any] | None = None
    llm_model: str | None = None
    explain: bool = False  # an extractive answer keeps the LLM's draft
    extractive_fallback: bool = True  # RICH_EXTRACTIVE_FALLBACK applies (a research report quotes its sources
    # anyway, under the answer, and its claims join sources, which one sentence of one source cannot)


QUOTED = "the answer is the sources' own sentences closest to the question"


@dataclass(frozen=True)
class Rich:
    """What a rich answer makes: the answer (None when the LLM gave none), the passages the model read (the
    response's context: its [n] are the answer's), and why it fell back, if it did."""

    answer: Answer | None
    packed: tuple[Passage, ...]
    notes: tuple[Degradation, ...] = ()


@dataclass(frozen=True)
class Answers:
    """The answer stage, made once at start-up with its settings and the clients it asks: rich answers, and the
    LLM's reading of pages (the summary, question and json formats, extractions), which read RICH_CONTEXT_CHARS
    of their sources too."""

    settings: RichSettings
    llm: LLMClient
    semantic: SemanticClient

    async def pages(self, outcome: SearchOutcome, asks: tuple[PageAsk, ...], ctx: SearchContext) -> SearchOutcome:
        """The outcome's Documents with what each ask gave for their page."""
        return await answer_pages(outcome, asks, self.settings.rich_context_chars, ctx, self.llm)

    async def extract(self, prompt: str | None, schema: dict[str, Any] | None, system_prompt: str | None,
                      pages: Sequence[PageText], remaining_s: Callable[[], float], pool: CpuPool) -> ExtractedData:
        """What the LLM read in `pages`, as one value valid against `schema`."""
        return await extract_data(prompt, schema, system_prompt, pages, self.settings.rich_context_chars, self.llm,
                                  remaining_s, pool)

    async def rich(self, question: Question, packed: Sequence[Passage], hits: Sequence[Hit], ctx: SearchContext
                     ) -> Rich:
        """The cited, checked answer to `question` from the ranked `packed` passages, or, for a mode without
        passages (keyword), the snippets of its first `hits`."""
        settings = self.settings
        snippets = _snippets(hits, settings.rich_snippet_sources) if not packed else []
        # ranking packed at most PACK_PER_URL passages a page, and a page has one snippet: the budget alone binds
        read = tuple(pack(list(packed) or snippets, settings.rich_context_chars))
        sources = sources_of(read)
        model = question.llm_model or self.llm.model
        if not sources or await self._below_floor(question.text, read, ctx):
            return Rich(_answer(_Judged(Draft("", (), abstained=True), ()), sources, None, model,
                                {"llm": 0.0, "verify": 0.0}), read)
        started = time.perf_counter()
        with ctx.timings.stage("llm"):
            reply, (value, json_failed) = await asyncio.gather(self._reply(question, read, ctx),
                                                                self._json(question, read, ctx))
        llm_ms = (time.perf_counter() - started) * 1000
        failed = (json_failed,) if json_failed else ()
        if isinstance(reply, LLMUnavailable):
            return Rich(None, read, (Degradation("llm_unavailable", f"{reply}: the sources come without an answer"),
                                     *failed))
        written = without_prompt(reply.text, question.text, read)
        answer = draft(written, sources) if written else Draft("", (), abstained=False)
        started = time.perf_counter()
        with ctx.timings.stage("verify"):
            judged = await self._judged(answer, sources, ctx)
            quoted = await self._quoted(question, judged, sources, ctx)
        timings = {"llm": round(llm_ms, 1), "verify": round((time.perf_counter() - started) * 1000, 1)}
        llm = f"the LLM at {self.llm.base_url} ({reply.model})"
        no_answer = _no_answer(written, answer, llm)
        if quoted is not None:
            cause, why = no_answer or ("llm_unsupported", f"{llm} wrote no claim its sources support")
            kept = LLMDraft(reply.text, _claims(judged)) if question.explain else None
            body = _answer(quoted, sources, value, reply.model, timings, extractive=True, llm_draft=kept)
            return Rich(body, read, (*failed, Degradation(cause, f"{why}: {QUOTED}"), *_unchecked(quoted)))
        if no_answer is not None:
            cause, why = no_answer
            return Rich(None, read, (Degradation(cause, f"{why}: the sources come without an answer"), *failed))
        return Rich(_answer(judged, sources, value, reply.model, timings), read, (*failed, *_unchecked(judged)))

    async def _reply(self, question: Question, packed: Sequence[Passage], ctx: SearchContext
                     ) -> Reply | LLMUnavailable:
        chat, budget = messages(question.text, packed, question.system_prompt), ctx.llm_remaining_s()
        try:
            if ctx.on_text:
                return await self.llm.stream(chat, budget, ctx.on_text, model=question.llm_model)
            return await self.llm.complete(chat, budget, model=question.llm_model)
        except LLMUnavailable as e:
            return e

    async def _json(self, question: Question, packed: Sequence[Passage], ctx: SearchContext
                    ) -> tuple[Any, Degradation | None]:
        if question.output_schema is None:
            return None, None
        value, warning = await structured(question.text, packed, question.output_schema, question.system_prompt,
                                          self.llm, ctx.llm_remaining_s, ctx.schemas, question.llm_model)
        return value, Degradation("output_schema", f"output_schema: {warning}") if warning else None

    async def _below_floor(self, question: str, packed: Sequence[Passage], ctx: SearchContext) -> bool:
        """Whether no packed passage is close enough to the question to answer it (semantic-svc down: unknown,
        so the LLM decides)."""
        try:
            ratings = await self.semantic.similarity(question, [p.scored_text for p in packed], ctx.rich_remaining_s())
        except Degraded:
            return False
        best = ratings.best_probability()
        return best is not None and best < self.settings.rich_abstain_below

    async def _judged(self, answer: Draft, sources: Sequence[Source], ctx: SearchContext) -> _Judged:
        return await _checked_or_unchecked(answer, sources, self.settings.support_floor, ctx, self.semantic)

    async def _quoted(self, question: Question, judged: _Judged, sources: Sequence[Source], ctx: SearchContext
                      ) -> _Judged | None:
        """The sources' own sentences as the answer, judged, when the fallback applies to `question` and the
        LLM's answer has claims checked and none supported, or none at all (no abstention); None otherwise, and
        when no sentence of the sources shares a word with the question."""
        if (not (self.settings.rich_extractive_fallback and question.extractive_fallback) or judged.draft.abstained
                or judged.unchecked or any(v.supported for v in judged.verdicts)):
            return None
        quoted = extractive_draft(question.text, sources)
        return await self._judged(quoted, sources, ctx) if quoted.claims else None


@dataclass(frozen=True)
class _Judged:
    """A draft with its claims' verdicts, and the warning when they could not be checked."""

    draft: Draft
    verdicts: tuple[Checked, ...]
    unchecked: Degradation | None = None


async def _checked_or_unchecked(answer: Draft, sources: Sequence[Source], floor: float, ctx: SearchContext,
                                semantic: SemanticClient) -> _Judged:
    try:
        return _Judged(answer, await checked(answer.claims, sources, floor, ctx, semantic))
    except Degraded as e:
        unchecked = tuple(Checked(c, supported=False, score=None, reason=f"it could not be checked ({e})")
                          for c in answer.claims)
        return _Judged(answer, unchecked, Degradation("claims_unchecked", f"claims could not be checked ({e}): none "
                                                      "is marked supported"))


def _unchecked(judged: _Judged) -> tuple[Degradation, ...]:
    return (judged.unchecked,) if judged.unchecked else ()


def _no_answer(written: str, answer: Draft, llm: str) -> tuple[Cause, str] | None:
    """Why the LLM's reply is no answer at all (its prompt written back, only sources that do not exist cited),
    as a degradation's cause and the start of its warning; None when it is one."""
    if not written:
        return "llm_echo", f"{llm} wrote back its prompt instead of an answer"
    if not answer.abstained and not answer.text:
        return "llm_citations", f"{llm} cited only sources that do not exist"
    return None


def _snippets(hits: Sequence[Hit], count: int) -> list[Passage]:
    hits = hits[:count]
    return [Passage(h.url, h.title, chunk, score=-rank) for rank, h in enumerate(hits)
            if (chunk := snippet_chunk(h.title, h.content))]


def _claims(judged: _Judged) -> tuple[CheckedClaim, ...]:
    return tuple(CheckedClaim(v.claim.text, tuple(v.claim.citations), v.supported, v.score, v.reason)
                 for v in judged.verdicts)


def _answer(judged: _Judged, sources: Sequence[Source], value: Any, model: str, timings: dict[str, float],
            extractive: bool = False, llm_draft: LLMDraft | None = None) -> Answer:
    answer = judged.draft
    cited = {n for v in judged.verdicts for n in v.claim.citations}
    return Answer(
        text=answer.text if not answer.abstained else "The sources found do not answer this question.",
        citations=tuple(Citation(s.number, s.url, s.title) for s in sources if s.number in cited),
        claims=_claims(judged), abstained=answer.abstained, json=value, model=model, timings_ms=timings,
        extractive=extractive, llm_draft=llm_draft)
