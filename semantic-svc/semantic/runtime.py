"""The loaded models of one process and the scoring operations on them: embed, similarity, rerank.

Models load in the background after start-up, so /healthz answers at once and /readyz tells when the
models are there (or why they are not).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from semantic.batching import ModelLane
from semantic.config import Settings
from semantic.embedders import Embedder, Encoded, Kind, ModelUnavailable, load_embedder
from semantic.errors import NotReady
from semantic.rerankers import Reranker, load_reranker
from semantic.vector_store import VectorStore

log = logging.getLogger(__name__)


@dataclass
class Ranked:
    scores: list[float]
    order: list[int]  # passage indices, best first
    truncated: list[int] = field(default_factory=list)


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.lane = ModelLane(settings.max_pending, settings.batch_size * 4)
        self.store = VectorStore(settings.qdrant_url, settings.qdrant_path)
        # embedded Qdrant is not meant for concurrent callers: one thread serializes every store call
        self.store_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant")
        self.embedder: Embedder | None = None
        self.reranker: Reranker | None = None
        self.rerank_warning: str | None = None
        self.load_error: str | None = None

    def load_in_background(self) -> None:
        threading.Thread(target=self._load, name="model-loader", daemon=True).start()

    def _load(self) -> None:
        try:
            embedder = load_embedder(self.settings)
            reranker, warning = load_reranker(self.settings, embedder)
        except Exception as e:  # any failure must reach /readyz, not end this thread silently
            self.load_error = str(e) if isinstance(e, ModelUnavailable) else f"{type(e).__name__}: {e}"
            log.exception("models not loaded")
            return
        # published together: /readyz says ready only once both can serve
        self.reranker, self.rerank_warning = reranker, warning
        self.embedder = embedder

    async def close(self) -> None:
        await self.lane.close()
        self.store_thread.shutdown(wait=True)
        self.store.close()

    def ready_embedder(self) -> Embedder:
        if self.embedder is None:
            raise NotReady(self.load_error or "the models are still loading; retry shortly")
        return self.embedder

    async def embed(self, texts: list[str], kind: Kind) -> Encoded:
        """Encode through the lane, merged with other requests' texts of the same kind."""
        embedder = self.ready_embedder()

        def encode_each(items: list[str]) -> list[tuple]:
            encoded = embedder.encode(items, kind)
            truncated = set(encoded.truncated)
            sparse = encoded.sparse or [None] * len(items)
            return [(encoded.dense[i], sparse[i], i in truncated) for i in range(len(items))]

        rows = await self.lane.run(encode_each, texts, batch_key=("embed", kind))
        return Encoded(
            dense=np.vstack([r[0] for r in rows]),
            sparse=[r[1] for r in rows] if embedder.has_sparse else None,
            truncated=[i for i, r in enumerate(rows) if r[2]],
        )

    async def similarity(self, query: str, passages: list[str]) -> list[float]:
        """Cosine of each passage to the query (both normalized, so a dot product)."""
        query_vector, encoded = await asyncio.gather(self.embed([query], "query"), self.embed(passages, "passage"))
        return [float(s) for s in encoded.dense @ query_vector.dense[0]]

    async def rerank(self, query: str, passages: list[str]) -> Ranked:
        self.ready_embedder()
        reranker = self.reranker
        assert reranker is not None  # loaded together with the embedder
        [scored] = await self.lane.run(lambda items: [reranker.score(*items[0])], [(query, passages)])
        order = sorted(range(len(passages)), key=lambda i: scored.scores[i], reverse=True)
        return Ranked(scored.scores, order, scored.truncated)
