"""A small web for research jobs: a SearXNG that answers each query from a corpus by BM25 (as the offline web's
engine does, stopwords dropped), the pages themselves, and an OpenAI-compatible LLM scripted by what it is asked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
from wisp_text.bm25 import bm25_scores
from wisp_text.terms import content_terms

from ..answers.test_rich import _chunks
from ..fake_searxng import FakeSearxng

ZEPHYR, FALCON, CATS = "https://docs.test/zephyr", "https://docs.test/falcon", "https://docs.test/cats"
CORPUS = {
    ZEPHYR: ("Zephyr storage", "The Zephyr database keeps its journal in the wal directory. That directory is created "
                               "by Falcon, a command-line tool shipped with it."),
    FALCON: ("Falcon history", "Falcon was written by Ada Quill in 2019 as a small maintenance utility."),
    CATS: ("Cats", "Cats purr and sleep in the sun all day long, whatever the weather outside."),
}
PAGES = {url: f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{text}</p></article>"
              "</body></html>" for url, (title, text) in CORPUS.items()}
# a bridge question: the first page names the tool, the second its author
QUESTION = "Who wrote the tool that creates the Zephyr database wal directory?"


class CorpusSearxng(FakeSearxng):
    """SearXNG's JSON for each query: the corpus's pages that share a content word with it, best first."""

    def __init__(self, slow: Callable[[str], bool] = lambda query: False, delay_s: float = 0.0) -> None:
        super().__init__(delay_s=delay_s)
        self.slow, self.asked = slow, []

    @property
    def queries(self) -> list[str]:
        """Each query searched, once (SearXNG is asked for several pages of one), in order."""
        return list(dict.fromkeys(self.asked))

    async def handle(self, request: httpx.Request) -> httpx.Response:
        query = request.url.params.get("q", "")
        self.asked += [query] if query else []
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.slow(query):
            return httpx.Response(504, json={"error": "too slow"})
        urls = list(CORPUS)
        scores = bm25_scores(" ".join(content_terms(query)), [f"{CORPUS[u][0]} {CORPUS[u][1]}" for u in urls])
        ranked = [u for s, u in sorted(zip(scores, urls, strict=True), key=lambda pair: -pair[0]) if s > 0]
        results = [{"url": u, "title": CORPUS[u][0], "content": CORPUS[u][1][:80]} for u in ranked]
        return httpx.Response(200, json={"results": results if int(request.url.params.get("pageno", 1)) == 1 else [],
                                         "unresponsive_engines": []})


class ScriptedLLM:
    """/v1/chat/completions: `plan` for a request that asks for search queries, `data` for one constrained to
    another schema (an extraction), `answer` for the rest (streamed when asked); the requests it got, in order."""

    def __init__(self, plan: str = "", answer: str = "", data: str = "{}") -> None:
        self.plan, self.answer, self.data, self.requests = plan, answer, data, []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        schema = (body.get("response_format") or {}).get("schema") or {}
        reply = (self.plan if "queries" in schema.get("properties", {}) else self.data if schema else self.answer)
        if body.get("stream"):
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=_chunks(reply, body))
        return httpx.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}]})

    def asked_for_queries(self) -> int:
        return sum("queries" in json.dumps(r.get("response_format") or {}) for r in self.requests)
