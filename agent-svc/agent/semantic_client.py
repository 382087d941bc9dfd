"""The client of semantic-svc: similarity and rerank scores, with failures turned into one exception.

A ranked mode degrades to SearXNG's order when semantic-svc is down or slow (seed 000), so every failure
here, whatever its cause, is `SemanticUnavailable` with a message that names it.
"""

from __future__ import annotations

import httpx

from agent.errors import Degraded


class SemanticUnavailable(Degraded):
    pass


class SemanticClient:
    def __init__(self, base_url: str, http: httpx.AsyncClient, timeout_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self._http, self._timeout_s = http, timeout_s

    async def similarity(self, query: str, passages: list[str], budget_s: float | None = None) -> list[float]:
        """Cosine of each passage to the query."""
        return await self._scores("/similarity", query, passages, budget_s)

    async def rerank(self, query: str, passages: list[str], budget_s: float | None = None) -> list[float]:
        """One relevance score per passage."""
        return await self._scores("/rerank", query, passages, budget_s)

    async def _scores(self, path: str, query: str, passages: list[str], budget_s: float | None) -> list[float]:
        body = await self._post(path, {"query": query, "passages": passages}, budget_s)
        scores = body.get("scores") if isinstance(body, dict) else None
        if not isinstance(scores, list) or len(scores) != len(passages) \
                or not all(isinstance(s, (int, float)) for s in scores):
            raise SemanticUnavailable(f"semantic-svc answered {path} without one score per passage")
        return [float(s) for s in scores]

    async def _post(self, path: str, body: dict, budget_s: float | None) -> object:
        timeout = min(self._timeout_s, budget_s) if budget_s is not None else self._timeout_s
        try:
            response = await self._http.post(self.base_url + path, json=body, timeout=max(timeout, 0.05))
        except httpx.TimeoutException:
            raise SemanticUnavailable(f"semantic-svc did not answer {path} within {timeout:.1f} s") from None
        except httpx.HTTPError as e:
            raise SemanticUnavailable(f"semantic-svc is unreachable at {self.base_url}: {type(e).__name__}") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code != 200:
            error = payload.get("error") if isinstance(payload, dict) else None
            raise SemanticUnavailable(f"semantic-svc answered {path} with HTTP {response.status_code}: "
                                      f"{error or response.text[:200]}")
        return payload
