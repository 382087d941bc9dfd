"""The client of semantic-svc: similarity and rerank scores and the vector index, with failures turned into
one exception.

A ranked mode degrades to its first pass when semantic-svc is down or slow (seed 000), so every failure
here, whatever its cause, is `SemanticUnavailable` with a message that names it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from wisp_obs.requests import id_header

from agent.core.ratings import Ratings
from agent.errors import Degraded
from agent.upstream.lane import LaneWait
from agent.upstream.settings import VECTOR_FLOOR

_LEAST_WAIT_S = 0.05  # shorter than this, no answer could come back
_LANE_KINDS = {"/rerank": "rerank", "/similarity": "embed"}  # the calls that queue for the model, by kind of work


class SemanticUnavailable(Degraded):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # semantic-svc's HTTP status, when it answered

    @property
    def busy(self) -> bool:
        """semantic-svc refused the job because its model queue is full: worth another try later."""
        return self.status == 503


class IndexEmpty(SemanticUnavailable):
    """The vector index holds no collection yet: nothing was crawled."""


@dataclass(frozen=True)
class IndexReach:
    """How the vector index is asked: chunks per result wanted (a page's chunks crowd the nearest ones), and the
    probability of relevance a query's best chunk must reach for the index to hold an answer (VECTOR_FLOOR)."""

    chunks_per_result: int = 4
    floor: float = VECTOR_FLOOR


class SemanticClient:
    def __init__(self, base_url: str, http: httpx.AsyncClient, timeout_s: float, collection: str = "",
                 index_reach: IndexReach = IndexReach(), admission: bool = True) -> None:
        self.base_url = base_url.rstrip("/")
        self._http, self._timeout_s = http, timeout_s
        self._collection = {"collection": collection} if collection else {}  # empty: semantic-svc's default
        self.index_reach = index_reach
        self._ms_per_kchar: dict[str, float] = {}  # by kind of model call, as semantic-svc last measured it
        self._lane, self._admission = LaneWait(), admission

    def pace(self, kind: str) -> float | None:
        """semantic-svc's model milliseconds per 1,000 characters for `kind` ("rerank" or "embed"), from its last
        answer; None until one said."""
        return self._ms_per_kchar.get(kind)

    def lane_wait_s(self) -> float:
        """Seconds a model call sent now would wait in semantic-svc's model lane (upstream/lane.py); 0 without
        admission (SEMANTIC_ADMISSION=false), when searches wait for the model whatever its queue."""
        return self._lane.wait_s() if self._admission else 0.0

    async def models(self) -> dict[str, Any]:
        """semantic-svc's /models: which models run, their measured speed per kind, and its warnings; the speeds
        become this client's pace until an answer reports newer ones."""
        body = _mapping(await self._request("GET", "/models", None, None), "/models")
        speeds = body.get("speed")
        for kind, speed in speeds.items() if isinstance(speeds, dict) else ():
            if kind not in self._ms_per_kchar and isinstance(speed, dict):
                self._learn_pace({**speed, "kind": kind})
        return body

    async def similarity(self, query: str, passages: list[str], budget_s: float | None = None) -> Ratings:
        """Cosine of each passage to the query, with its probability of relevance."""
        return await self._scores("/similarity", query, passages, budget_s)

    async def rerank(self, query: str, passages: list[str], budget_s: float | None = None) -> Ratings:
        """One relevance score per passage, with its probability of relevance."""
        return await self._scores("/rerank", query, passages, budget_s)

    async def index_upsert(self, documents: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
        """Store documents ({url, title, text, metadata}) in the index; unchanged ones are skipped there.
        `timeout_s` replaces SEMANTIC_TIMEOUT_S: a long page is many chunks to embed."""
        return _mapping(await self._request("POST", "/index/upsert", {"documents": documents, **self._collection},
                                            None, timeout_s),
                        "/index/upsert")

    async def index_search(self, query: str, limit: int, floor: float | None, budget_s: float | None = None
                           ) -> list[dict[str, Any]]:
        """The index's chunks nearest to the query, best first, each with its probability of relevance (None
        without a calibration), none below `floor` (a probability)."""
        ask = {"query": query, "limit": limit, "probability_threshold": floor, **self._collection}
        body = _mapping(await self._post("/index/search", ask, budget_s), "/index/search")
        results = body.get("results")
        if not isinstance(results, list) or not all(isinstance(r, dict) and isinstance(r.get("url"), str)
                                                    and isinstance(r.get("score"), (int, float)) for r in results):
            raise SemanticUnavailable("semantic-svc answered /index/search without a list of scored chunks")
        return results

    async def index_delete(self, url: str | None = None, host: str | None = None) -> int:
        target = {"url": url} if url is not None else {"host": host}
        body = _mapping(await self._post("/index/delete", {**target, **self._collection}, None), "/index/delete")
        return int(body.get("deleted_chunks") or 0)

    async def index_stats(self) -> dict[str, Any]:
        path = f"/index/stats?{urlencode(self._collection)}" if self._collection else "/index/stats"
        return _mapping(await self._request("GET", path, None, None), "/index/stats")

    async def _scores(self, path: str, query: str, passages: list[str], budget_s: float | None) -> Ratings:
        body = await self._post(path, {"query": query, "passages": passages}, budget_s)
        scores = body.get("scores") if isinstance(body, dict) else None
        if not isinstance(scores, list) or len(scores) != len(passages) \
                or not all(isinstance(s, (int, float)) for s in scores):
            raise SemanticUnavailable(f"semantic-svc answered {path} without one score per passage")
        self._learn_pace(body.get("speed"))
        return Ratings(tuple(float(s) for s in scores), _probabilities(body.get("probabilities"), len(scores)))

    def _learn_pace(self, speed: object) -> None:
        if isinstance(speed, dict) and isinstance(kind := speed.get("kind"), str) \
                and isinstance(ms := speed.get("ms_per_kchar"), (int, float)) and ms > 0:
            self._ms_per_kchar[kind] = float(ms)
        if isinstance(speed, dict) and isinstance(queued := speed.get("queued_ms"), (int, float)):
            self._lane.reported(float(queued))

    async def _post(self, path: str, body: dict, budget_s: float | None) -> object:
        with self._lane.sending(self._model_ms(path, body)):
            return await self._request("POST", path, body, budget_s)

    def _model_ms(self, path: str, body: dict) -> float:
        """The model time a call to `path` needs at the pace last reported (0 for a call that asks no model): a
        reranker reads the query with each passage, an embedder once."""
        kind = _LANE_KINDS.get(path)
        pace = self.pace(kind) if kind else None
        if pace is None:
            return 0.0
        passages = body["passages"]
        query_chars = len(body["query"]) * (len(passages) if kind == "rerank" else 1)
        return (query_chars + sum(map(len, passages))) * pace / 1000

    async def _request(self, method: str, path: str, body: dict | None, budget_s: float | None,
                       timeout_s: float | None = None) -> object:
        timeout = timeout_s or self._timeout_s
        timeout = min(timeout, budget_s) if budget_s is not None else timeout
        if timeout < _LEAST_WAIT_S:  # semantic-svc is not to blame for a deadline the earlier stages spent
            raise SemanticUnavailable(f"no time was left before the search's deadline to ask semantic-svc {path}")
        try:
            # the request's id goes along, so that semantic-svc's log lines carry it too
            response = await self._http.request(method, self.base_url + path, json=body, timeout=timeout,
                                                headers=id_header())
        except httpx.TimeoutException:
            raise SemanticUnavailable(f"semantic-svc did not answer {path} within {timeout:.1f} s") from None
        except httpx.HTTPError as e:
            raise SemanticUnavailable(f"semantic-svc is unreachable at {self.base_url}: {type(e).__name__}") from None
        try:
            payload = response.json()
        except (ValueError, RecursionError):  # not JSON, a number past 4,300 digits, or nested past the stack
            payload = None
        if response.status_code == 404 and path.startswith(("/index/search", "/index/delete", "/index/stats")):
            raise IndexEmpty("the index is empty: fill it with POST /v2/crawl")
        if response.status_code != 200:
            error = payload.get("error") if isinstance(payload, dict) else None
            raise SemanticUnavailable(f"semantic-svc answered {path} with HTTP {response.status_code}: "
                                      f"{error or response.text[:200]}", response.status_code)
        return payload


def _probabilities(values: object, count: int) -> tuple[float, ...] | None:
    """semantic-svc's probabilities of relevance; None when its model has no calibration (or one that says
    nothing usable: a probability outside [0, 1] is not one)."""
    if not isinstance(values, list) or len(values) != count \
            or not all(isinstance(p, (int, float)) and 0 <= p <= 1 for p in values):
        return None
    return tuple(float(p) for p in values)


def _mapping(payload: object, path: str) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise SemanticUnavailable(f"semantic-svc answered {path} with something other than a JSON object")
    return payload
