"""What the harness evaluates: a retrieval mode of agent-svc, or SearXNG called directly (the raw baseline)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from wisp_eval.dataset import Query
from wisp_eval.metrics import page_key

RAW_SEARXNG = "raw_searxng"


@dataclass
class Answer:
    """One target's answer to one query, reduced to what the metrics need."""

    pages: list[str] = field(default_factory=list)  # host/path of each result, best first
    text: str = ""  # the returned content an agent would read, for answerability
    abstained: bool = False
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    warning: str = ""  # what degraded, as agent-svc said it


class Target(Protocol):
    name: str

    def ask(self, query: Query) -> Answer: ...


class AgentMode:
    """POST /v2/search with one `retrieval_mode` (`vector+rerank`: with `rerank: true`, `hybrid_vector+norerank`:
    with `rerank: false`); answerability reads the packed `context` when the mode returns one, else the result
    descriptions."""

    def __init__(self, mode: str, agent_url: str, client: httpx.Client, limit: int) -> None:
        self.name = mode
        self._mode, _, option = mode.partition("+")
        self._options = {option.removeprefix("no"): not option.startswith("no")} if option else {}
        self._url = agent_url.rstrip("/") + "/v2/search"
        self._client, self._limit = client, limit

    def ask(self, query: Query) -> Answer:
        body = {"query": query.text, "limit": self._limit, "retrieval_mode": self._mode, **self._options}
        started = time.perf_counter()
        try:
            response = self._client.post(self._url, json=body)
            payload = response.json()
        except (httpx.HTTPError, ValueError) as e:
            return Answer(latency_ms=_since(started), error=f"{type(e).__name__}: {e}")
        latency = _since(started)
        if response.status_code != 200 or not payload.get("success"):
            return Answer(latency_ms=latency, error=f"HTTP {response.status_code}: {payload.get('error', '')}")
        web = (payload.get("data") or {}).get("web") or []
        context = payload.get("context")
        return Answer(
            pages=[page_key(r["url"]) for r in web if isinstance(r, dict) and r.get("url")],
            text=context if isinstance(context, str) else "\n".join(_text_of(r) for r in web),
            abstained=bool(payload.get("abstained")) or not web,
            latency_ms=latency,
            timings_ms={k: float(v) for k, v in (payload.get("timings_ms") or {}).items()},
            warning=str(payload.get("warning") or ""),
        )


class RawSearxng:
    """GET /search on SearXNG itself, with the parameters agent-svc's keyword mode sends."""

    name = RAW_SEARXNG

    def __init__(self, searx_url: str, client: httpx.Client, limit: int, language: str = "en-US") -> None:
        self._url = searx_url.rstrip("/") + "/search"
        self._client, self._limit, self._language = client, limit, language

    def ask(self, query: Query) -> Answer:
        params = {"q": query.text, "format": "json", "categories": "general", "language": self._language}
        started = time.perf_counter()
        try:
            response = self._client.get(self._url, params=params)
            response.raise_for_status()
            results = response.json()["results"][: self._limit]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
            return Answer(latency_ms=_since(started), error=f"{type(e).__name__}: {e}")
        return Answer(
            pages=[page_key(r["url"]) for r in results],
            text="\n".join(r.get("content") or "" for r in results),
            abstained=not results,
            latency_ms=_since(started),
        )


def make_targets(modes: list[str], agent_url: str | None, searx_url: str | None, client: httpx.Client,
                 limit: int) -> list[Target]:
    """`raw_searxng` needs searx_url; every other name is a retrieval mode of agent-svc at agent_url."""
    targets: list[Target] = []
    for mode in modes:
        if mode == RAW_SEARXNG:
            if not searx_url:
                raise ValueError(f"mode {RAW_SEARXNG} needs the SearXNG URL (--searx)")
            targets.append(RawSearxng(searx_url, client, limit))
        else:
            if not agent_url:
                raise ValueError(f"mode {mode} needs the agent-svc URL (--agent)")
            targets.append(AgentMode(mode, agent_url, client, limit))
    return targets


def _text_of(result: dict[str, Any]) -> str:
    return str(result.get("description") or result.get("snippet") or "")


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000
