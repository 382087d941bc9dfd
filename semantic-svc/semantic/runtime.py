"""The loaded models of one process and the scoring operations on them: embed, similarity, rerank.

Models load in the background after start-up, so /healthz answers at once and /readyz tells when the
models are there (or why they are not); with CALIBRATE, they are timed on a calibration batch before they are
published. Every embedding goes through the cache, and what it misses through the model lane, merged with other
requests' texts of the same kind.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from semantic.config import Settings
from semantic.errors import ModelUnavailable, NotReady
from semantic.kinds import Priority, SpeedKind
from semantic.lane.batching import ModelLane
from semantic.lane.embed_cache import EmbeddingCache
from semantic.lane.speed import SpeedMeter
from semantic.models.calibration import Calibration, calibrate
from semantic.models.embedders import EMBEDDERS, Embedder, Encoded, EncodedText, Kind, load_embedder
from semantic.models.rerankers import RERANKERS, Reranker, load_reranker
from semantic.relevance.calibrated import SHIPPED_PAIRS, Calibrated, Pairs, calibrated, cosine_pairs, grouped_pairs
from semantic.store.vector_store import VectorStore

log = logging.getLogger(__name__)


@dataclass
class Ranked:
    scores: list[float]
    order: list[int]  # passage indices, best first
    truncated: list[int] = field(default_factory=list)
    probabilities: list[float] | None = None  # of relevance; None without a calibration


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.speed = SpeedMeter()
        self.lane = ModelLane(settings.max_pending, settings.max_batch_texts, settings.max_batch_chars,
                              settings.max_wait_s, speed=self.speed)
        self.cache = EmbeddingCache(settings.embed_cache_size)
        self.store = VectorStore(settings.qdrant_url, settings.qdrant_path)
        # embedded Qdrant is not meant for concurrent callers: one thread serializes every store call
        self.store_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qdrant")
        self.embedder: Embedder | None = None
        self.similarity_embedder: Embedder | None = None  # SIMILARITY_MODEL's; None: the embedder serves /similarity
        self.reranker: Reranker | None = None
        self.rerank_warning: str | None = None
        self.calibration: Calibration | None = None
        self.relevance: dict[str, Calibrated] = {}  # by role: embedder, similarity, reranker
        self.relevance_error: str | None = None
        self.load_error: str | None = None

    def load_in_background(self) -> None:
        threading.Thread(target=self._load, name="model-loader", daemon=True).start()

    def _load(self) -> None:
        try:
            _transformers_logs_join_ours()
            embedder = load_embedder(self.settings)
            similarity_settings = self.settings.similarity_embedder()
            similarity = None if similarity_settings is None else load_embedder(similarity_settings)
            reranker, warning = load_reranker(self.settings, embedder)
            calibration = self._calibrate(embedder, reranker, similarity) if self.settings.calibrate else None
            relevance = self._relevance(embedder, reranker, similarity) if self.settings.relevance_calibration else {}
        except Exception as e:  # any failure must reach /readyz, not end this thread silently
            self.load_error = str(e) if isinstance(e, ModelUnavailable) else f"{type(e).__name__}: {e}"
            log.exception("models not loaded")
            return
        # published together: /readyz says ready only once both can serve
        self.reranker, self.rerank_warning, self.calibration = reranker, warning, calibration
        self.relevance = relevance
        self.similarity_embedder = similarity
        self.embedder = embedder

    def _calibrate(self, embedder: Embedder, reranker: Reranker, similarity: Embedder | None = None) -> Calibration:
        """Time the models before anyone else uses them; seed the speed with it, and say once if it is too slow."""
        settings = self.settings
        calibration = calibrate(embedder, reranker, settings.chunk_chars, settings.pipeline_deadline_s,
                                settings.rank_deadline_share, similarity=similarity)
        for kind, timed in (("rerank", calibration.rerank), ("embed", calibration.similarity)):
            self.speed.calibrate(kind, timed.ms, timed.chars, timed.texts)
        log.info("calibrated in %.1f s: %s", calibration.seconds, calibration.estimates)
        for warning in calibration.warnings():
            log.warning(warning)
        return calibration

    def _relevance(self, embedder: Embedder, reranker: Reranker, similarity: Embedder | None
                   ) -> dict[str, Calibrated]:
        """Each role's relevance calibration; none (and a warning) when it cannot be fitted: the models still
        serve, without probabilities."""
        settings = self.settings
        try:
            pairs = Pairs.load(Path(settings.relevance_pairs) if settings.relevance_pairs else SHIPPED_PAIRS)
            cache = Path(settings.relevance_cache)
            roles = {"embedder": embedder_calibration("embedder", embedder, settings, pairs, cache)}
            similarity_settings = settings.similarity_embedder()
            roles["similarity"] = (roles["embedder"] if similarity is None or similarity_settings is None else
                                   embedder_calibration("similarity", similarity, similarity_settings, pairs, cache))
            if reranker.is_cross_encoder:
                roles["reranker"] = calibrated("reranker", f"{reranker.backend}|{reranker.name}", reranker.name,
                                               grouped_pairs(lambda q, ps: reranker.score(q, ps).scores), pairs,
                                               cache)
            else:  # the blend's relevance is its embedder's cosine (rerankers.BiEncoderHybridReranker)
                roles["reranker"] = replace(roles["embedder"], role="reranker", model=reranker.name)
            return roles
        except (OSError, ValueError, IndexError) as e:
            self.relevance_error = f"the relevance calibration failed ({type(e).__name__}: {e})"
            log.error(self.relevance_error)
            return {}

    def probabilities(self, role: str, scores: list[float]) -> list[float] | None:
        """`scores` of the model in `role` as probabilities of relevance; None when it has no calibration."""
        calibration = self.relevance.get(role)
        return None if calibration is None else calibration.probabilities(scores)

    @property
    def warnings(self) -> list[str]:
        """What degrades with these models: a reranker standing in for the configured one, a stage too slow, a
        model without a relevance calibration or with one that tells little."""
        return ([self.rerank_warning] if self.rerank_warning else []) + (
            self.calibration.warnings() if self.calibration else []) + self._relevance_warnings()

    def _relevance_warnings(self) -> list[str]:
        if self.embedder is None:
            return []
        if not self.relevance:
            why = self.relevance_error or "RELEVANCE_CALIBRATION is off"
            return [f"no model has a relevance calibration ({why}): probabilities are null, so agent-svc neither "
                    "prunes by its floors nor abstains"]
        warnings = {c.warning() for c in self.relevance.values()} - {None}
        return sorted(w for w in warnings if w)

    async def close(self) -> None:
        await self.lane.close()
        self.store_thread.shutdown(wait=True)
        self.store.close()

    def ready_embedder(self) -> Embedder:
        if self.embedder is None:
            raise NotReady(self.load_error or "the models are still loading; retry shortly")
        return self.embedder

    def ready_similarity_embedder(self) -> Embedder:
        """The embedder that serves /similarity: SIMILARITY_MODEL's, or the embedder."""
        embedder = self.ready_embedder()
        return self.similarity_embedder or embedder

    async def embed(self, texts: list[str], kind: Kind, priority: Priority = "interactive",
                    timed_as: SpeedKind | None = "embed") -> Encoded:
        """EMBED_MODEL's encoding of `texts` (for /embed, the index and the offline reranker)."""
        if timed_as == "embed" and self.similarity_embedder is not None:
            timed_as = None  # "embed" is what agent-svc plans pass 2 (/similarity) with: another model's speed
        return await self._encode(self.ready_embedder(), "embedder", texts, kind, priority, timed_as)

    async def similarity(self, query: str, passages: list[str]) -> list[float]:
        """Cosine of each passage to the query (both normalized, so a dot product), by the similarity embedder."""
        embedder = self.ready_similarity_embedder()
        role = "embedder" if embedder is self.embedder else "similarity"
        query_vector, encoded = await asyncio.gather(
            self._encode(embedder, role, [query], "query", "interactive", "embed"),
            self._encode(embedder, role, passages, "passage", "interactive", "embed"))
        return [float(s) for s in encoded.dense @ query_vector.dense[0]]

    async def _encode(self, embedder: Embedder, role: str, texts: list[str], kind: Kind, priority: Priority,
                      timed_as: SpeedKind | None) -> Encoded:
        """Encode from the cache, and what it lacks through the lane, merged with other requests' texts of the same
        embedder, kind and priority. `role` keeps two embedders apart in both, even two of one model."""

        def encode_distinct(items: list[str]) -> list[EncodedText]:
            # concurrent requests often bring the same chunk (one page, two modes): the model reads it once
            distinct = list(dict.fromkeys(items))
            rows = dict(zip(distinct, embedder.encode(distinct, kind).rows(), strict=True))
            return [rows[t] for t in items]

        model = f"{role}: {embedder.name}"
        cached = [self.cache.get(model, kind, t) for t in texts]
        missing = [t for t, row in zip(texts, cached, strict=True) if row is None]
        computed = await self.lane.run(encode_distinct, missing, ("embed", role, kind), priority, timed_as)
        encoded = dict(zip(missing, computed, strict=True))
        for text, row in encoded.items():
            self.cache.put(model, kind, text, row)
        rows = [encoded[t] if row is None else row for t, row in zip(texts, cached, strict=True)]
        return Encoded.of_rows(rows, embedder.has_sparse)

    async def rerank(self, query: str, passages: list[str]) -> Ranked:
        self.ready_embedder()
        reranker = self.reranker
        assert reranker is not None  # loaded together with the embedder
        scored = await reranker.rank(query, passages, _RerankModels(self))
        order = sorted(range(len(passages)), key=lambda i: scored.scores[i], reverse=True)
        return Ranked(scored.scores, order, scored.truncated,
                      self.probabilities("reranker", scored.absolute or scored.scores))


@dataclass(frozen=True)
class _RerankModels:
    """The runtime as a reranker uses it (its `Models`): interactive, and timed as reranking, whether the reranker
    scores pairs or embeds its query and passages."""

    runtime: Runtime

    async def embed(self, texts: list[str], kind: Kind) -> Encoded:
        return await self.runtime.embed(texts, kind, timed_as="rerank")

    async def run(self, work: Callable[[list[Any]], Sequence[Any]], items: list[Any],
                  batch_key: Hashable) -> list[Any]:
        return await self.runtime.lane.run(work, items, batch_key, timed_as="rerank")


def embedder_calibration(role: str, embedder: Embedder, settings: Settings, pairs: Pairs, cache: Path
                          ) -> Calibrated:
    """`settings`: the embedder's own (its prefixes change its scores)."""
    key = f"{embedder.backend}|{embedder.name}|{settings.embed_query_prefix}|{settings.embed_passage_prefix}"
    return calibrated(role, key, embedder.name, cosine_pairs(lambda texts, kind: embedder.encode(texts, kind).dense),
                      pairs, cache)


def check_backends(settings: Settings) -> None:
    """Refuse a backend that no registry holds, naming the variable and the choices (ValueError), so that a typo
    stops the service as it starts rather than when the models load."""
    for variable, backend, registry in (("EMBED_BACKEND", settings.embed_backend, EMBEDDERS),
                                        ("SIMILARITY_BACKEND", settings.similarity_backend, EMBEDDERS),
                                        ("RERANK_BACKEND", settings.rerank_backend, RERANKERS)):
        if backend != "auto" and backend not in registry:
            raise ValueError(f"{variable}={backend!r} is not a backend; use auto or one of {', '.join(registry)}")


def _transformers_logs_join_ours() -> None:
    """transformers writes through a handler of its own (a tokenizer's notice of a long text, say): its lines go
    through the service's log instead, in its format. Imported here, off start-up: transformers takes seconds."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_default_handler()
    transformers_logging.enable_propagation()
