"""scrapeOptions.formats that need the LLM, per returned page: `summary`, `{type: "json", schema, prompt}`
and `{type: "question", question}` (Firecrawl's per-item `answer`). Every page's asks run concurrently within
the rich deadline; a failed ask leaves its key out and says why in the warning, never fails the search."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from wisp_text.chunking import Chunk

from agent.answers.schemas import checked_schema
from agent.answers.structured import structured
from agent.core.context import SearchContext
from agent.core.formats import PAGE_ASK_KINDS
from agent.core.outcome import Degradation, SearchOutcome
from agent.core.passage import Passage
from agent.core.query import PageAsk
from agent.errors import BadRequest
from agent.upstream.llm import LLMClient, LLMUnavailable

AT_ONCE = 4  # asks sent to the LLM server together (it queues the rest anyway)


MAX_PROMPT_CHARS = 2000


def page_ask(item: dict[str, Any]) -> PageAsk:
    """A format object as an ask; a 400 naming what is wrong with it."""
    kind = item["type"]
    if kind == "summary":
        return PageAsk("summary")
    if kind == "question":
        question = item.get("question")
        if not isinstance(question, str) or not question.strip() or len(question) > MAX_PROMPT_CHARS:
            raise BadRequest(f"a question format needs `question`, a string of 1–{MAX_PROMPT_CHARS} characters")
        return PageAsk("question", prompt=question)
    schema, prompt = item.get("schema"), item.get("prompt")  # neither: the page's data as a JSON object, as upstream
    if prompt is not None and not isinstance(prompt, str):
        raise BadRequest("a json format's `prompt` must be a string")
    if isinstance(prompt, str) and len(prompt) > MAX_PROMPT_CHARS:
        raise BadRequest(f"a json format's `prompt` is longer than {MAX_PROMPT_CHARS} characters")
    return PageAsk("json", checked_schema(schema, "a json format's `schema`") if schema is not None else None,
                   prompt if isinstance(prompt, str) else None)


async def answer_pages(outcome: SearchOutcome, asks: tuple[PageAsk, ...], page_chars: int, ctx: SearchContext,
                       llm: LLMClient) -> SearchOutcome:
    """The outcome's Documents with what each ask gave for their page."""
    pages = {url: page.extracted.markdown for url in outcome.documents
             if (page := outcome.pages.get(url)) is not None and page.extracted is not None}
    jobs = [(url, ask) for url in pages for ask in asks]
    at_once = asyncio.Semaphore(AT_ONCE)

    async def bounded(ask: PageAsk, url: str) -> tuple[Any, str | None]:
        async with at_once:
            return await _ask(ask, url, pages[url][:page_chars], ctx, llm)

    results = await asyncio.gather(*(bounded(ask, url) for url, ask in jobs))
    documents = {url: dict(doc) for url, doc in outcome.documents.items()}
    failures = []
    for (url, ask), (value, problem) in zip(jobs, results, strict=True):
        if problem is None:
            documents[url][PAGE_ASK_KINDS[ask.kind]] = value
        else:
            failures.append(f"{url} {ask.kind}: {problem}")
    failed = Degradation("page_formats", f"{len(failures)} page formats failed: {'; '.join(failures[:3])}") \
        if failures else None
    return replace(outcome, documents=documents).warned(failed)


async def _ask(ask: PageAsk, url: str, text: str, ctx: SearchContext, llm: LLMClient) -> tuple[Any, str | None]:
    remaining = ctx.llm_remaining_s
    if ask.kind == "json":
        page = [Passage(url, "", Chunk(0, text, ""))]
        schema = ask.schema or {"type": "object"}
        return await structured(ask.prompt or "Extract the page's data.", page, schema, None, llm, remaining,
                                ctx.schemas)
    instruction = ("Summarize this page in at most three sentences." if ask.kind == "summary"
                   else f"Answer from this page only, in at most three sentences: {ask.prompt}")
    try:
        reply = await llm.complete([{"role": "user", "content": f"{instruction}\n\nPage ({url}):\n{text}"}],
                                   remaining())
    except LLMUnavailable as e:
        return None, str(e)
    return reply.text, None
