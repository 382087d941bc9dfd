"""search_type "rich": the ranked sources → an answer with inline [n] citations whose every claim is checked
(seed 003's search-type spectrum; seed 000's stage 4). It owns the flow and its fallbacks:

- nothing packed, or the best passage below RICH_ABSTAIN_BELOW (cosine to the question) → abstained, no LLM call;
- the LLM down, erroring, slow past the deadline, returning nothing or writing back its prompt → the ranked
  sources, no answer, a warning;
- semantic-svc unable to check the claims → every claim `supported: false` with a warning.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agent.answers.claims import Checked, checked
from agent.answers.structured import structured
from agent.answers.synthesis import Draft, Source, draft, messages, sources_of, without_prompt
from agent.core.context import SearchContext
from agent.core.outcome import Answer, CheckedClaim, Citation, Degradation, SearchOutcome
from agent.core.passage import Passage, snippet_chunk
from agent.core.query import SearchQuery
from agent.core.sources import source
from agent.errors import Degraded
from agent.ranking.pack import context_text, pack
from agent.upstream.clients import Upstreams
from agent.upstream.llm import LLMUnavailable, Reply


async def rich(outcome: SearchOutcome, query: SearchQuery, ctx: SearchContext, up: Upstreams) -> SearchOutcome:
    settings = up.settings
    snippets = _snippets(outcome, settings.rich_snippet_sources) if not outcome.packed else []
    packed = pack(list(outcome.packed) or snippets, settings.rich_context_chars, settings.pack_per_url)
    # the context returned is what the model read, so that its [n] are the answer's
    outcome = replace(outcome, context=context_text(packed), packed=tuple(packed))
    sources = sources_of(packed)
    if not sources or await _below_floor(query.query, packed, settings.rich_abstain_below, ctx, up):
        return replace(outcome, answer=_answer(Draft("", (), abstained=True), (), sources, None,
                                               query.llm_model or settings.llm_model, {"llm": 0.0, "verify": 0.0}))
    with ctx.timings.stage("llm"):
        reply, (value, json_failed) = await asyncio.gather(_reply(query, packed, ctx, up),
                                                            _json(query, packed, ctx, up))
    if isinstance(reply, LLMUnavailable):
        return outcome.warned(Degradation("llm_unavailable", f"{reply}: the sources come without an answer"),
                                json_failed)
    written = without_prompt(reply.text, query.query, packed)
    if not written:
        return outcome.warned(Degradation("llm_echo", f"the LLM at {up.llm.base_url} ({reply.model}) wrote back "
                                            "its prompt instead of an answer: the sources come without an answer"),
                                json_failed)
    answer = draft(written, sources)
    if not answer.abstained and not answer.text:
        return outcome.warned(Degradation("llm_citations", f"the LLM at {up.llm.base_url} ({reply.model}) cited "
                                            "only sources that do not exist: the sources come without an answer"),
                                json_failed)
    with ctx.timings.stage("verify"):
        verdicts, unchecked = await _verdicts(answer, sources, settings.support_floor, ctx, up)
    stages = ctx.timings.as_dict()
    body = _answer(answer, verdicts, sources, value, reply.model, {"llm": stages["llm"], "verify": stages["verify"]})
    return replace(outcome.warned(json_failed, unchecked), answer=body)


async def _reply(query: SearchQuery, packed: Sequence[Passage], ctx: SearchContext, up: Upstreams
                 ) -> Reply | LLMUnavailable:
    chat, budget, llm = messages(query.query, packed, query.system_prompt), ctx.llm_remaining_s(), up.llm
    try:
        if ctx.on_text:
            return await llm.stream(chat, budget, ctx.on_text, model=query.llm_model)
        return await llm.complete(chat, budget, model=query.llm_model)
    except LLMUnavailable as e:
        return e


async def _json(query: SearchQuery, packed: Sequence[Passage], ctx: SearchContext, up: Upstreams
                ) -> tuple[Any, Degradation | None]:
    if query.output_schema is None:
        return None, None
    value, warning = await structured(query.query, packed, query.output_schema, query.system_prompt,
                                      up.llm, ctx.llm_remaining_s, ctx.schemas, query.llm_model)
    return value, Degradation("output_schema", f"output_schema: {warning}") if warning else None


async def _below_floor(question: str, packed: Sequence[Passage], floor: float, ctx: SearchContext,
                       up: Upstreams) -> bool:
    """Whether no packed passage is close enough to the question to answer it (semantic-svc down: unknown,
    so the LLM decides)."""
    try:
        scores = await up.semantic.similarity(question, [p.scored_text for p in packed], ctx.rich_remaining_s())
    except Degraded:
        return False
    return max(scores, default=0.0) < floor


async def _verdicts(answer: Draft, sources: Sequence[Source], floor: float, ctx: SearchContext, up: Upstreams
                    ) -> tuple[tuple[Checked, ...], Degradation | None]:
    try:
        return await checked(answer.claims, sources, floor, ctx, up.semantic), None
    except Degraded as e:
        unchecked = tuple(Checked(c, supported=False, score=None, reason=f"it could not be checked ({e})")
                          for c in answer.claims)
        return unchecked, Degradation("claims_unchecked", f"claims could not be checked ({e}): none is marked "
                                      "supported")


def _snippets(outcome: SearchOutcome, count: int) -> list[Passage]:
    hits = [h for name, bucket in outcome.buckets.items() if source(name).ranked for h in bucket][:count]
    return [Passage(h.url, h.title, chunk, score=-rank) for rank, h in enumerate(hits)
            if (chunk := snippet_chunk(h.title, h.content))]


def _answer(answer: Draft, verdicts: Sequence[Checked], sources: Sequence[Source], value: Any, model: str,
            timings: dict[str, float]) -> Answer:
    cited = {n for v in verdicts for n in v.claim.citations}
    return Answer(
        text=answer.text if not answer.abstained else "The sources found do not answer this question.",
        citations=tuple(Citation(s.number, s.url, s.title) for s in sources if s.number in cited),
        claims=tuple(CheckedClaim(v.claim.text, tuple(v.claim.citations), v.supported, v.score, v.reason)
                     for v in verdicts),
        abstained=answer.abstained, json=value, model=model, timings_ms=timings)
