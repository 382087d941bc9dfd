"""Reranking backends behind one interface: `rank(query, passages, models)` → one relevance score per passage.

Each backend says how its model work merges with other requests' by what it asks of `models`:
- cross-encoder: sentence-transformers CrossEncoder (ms-marco-MiniLM-L6-v2, bge-reranker-v2-m3, …) and
- flag-reranker: FlagEmbedding's FlagReranker score (query, passage) pairs, merged across requests into one
  predict call;
- bi-encoder-hybrid: 0.5·z(BM25) + 0.5·z(embedder cosine), the best second pass measured without
  cross-encoder weights (../shared/reference/models-offline.md §5.2). Its query and passages go through the
  embedder's merged (and cached) batches; BM25 and the blend are per request, a few milliseconds of numpy. No
  PyPI package ships real cross-encoder weights, so this is the offline default, and /models says so: never
  random weights pretending to rank.

`RERANKERS` is the registry: the only place backend names live (`runtime.check_backends` refuses others when the
app is created).
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from wisp_text.bm25 import bm25_scores

from semantic.config import Settings
from semantic.errors import ModelUnavailable
from semantic.models.embedders import (
    Embedder,
    Encoded,
    Kind,
    resolve_model,
    torch_device,
    truncated_indices,
)

log = logging.getLogger(__name__)

CROSS_ENCODER_MAX_TOKENS = 512


@dataclass
class Scored:
    scores: list[float]
    truncated: list[int] = field(default_factory=list)  # passages cut to the model's input limit
    # scores that mean the same in every call, which relevance is calibrated on; None: `scores` do
    absolute: list[float] | None = None


class Models(Protocol):
    """Where a reranker has its model work done: the runtime's lane, or at once (`DirectModels`)."""

    async def embed(self, texts: list[str], kind: Kind) -> Encoded: ...

    async def run(self, work: Callable[[list[Any]], Sequence[Any]], items: list[Any],
                  batch_key: Hashable) -> list[Any]: ...


class Reranker(Protocol):
    name: str
    backend: str
    is_cross_encoder: bool

    async def rank(self, query: str, passages: list[str], models: Models) -> Scored: ...

    def score(self, query: str, passages: list[str]) -> Scored: ...


class DirectModels:
    """Model work done at once on the calling thread, for one request alone (benchmarks, tests)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embedder = embedder

    async def embed(self, texts: list[str], kind: Kind) -> Encoded:
        assert self._embedder is not None, "this reranker embeds nothing"
        return self._embedder.encode(texts, kind)

    async def run(self, work: Callable[[list[Any]], Sequence[Any]], items: list[Any],
                  batch_key: Hashable) -> list[Any]:
        return list(work(items))


class _Backend(ABC):
    _direct: DirectModels

    @abstractmethod
    async def rank(self, query: str, passages: list[str], models: Models) -> Scored: ...

    def score(self, query: str, passages: list[str]) -> Scored:
        """`rank` without a lane: the scores of one request, computed on the calling thread."""
        return asyncio.run(self.rank(query, passages, self._direct))


@dataclass(frozen=True)
class _PairScore:
    score: float
    truncated: bool


class _PairReranker(_Backend):
    """A cross-encoder: reads each (query, passage) pair whole; pairs of concurrent requests share one call."""

    is_cross_encoder = True
    _direct = DirectModels()

    def __init__(self, name: str, backend: str, tokenizer: Any, batch_size: int) -> None:
        self.name, self.backend = name, backend
        self._tokenizer, self._batch_size = tokenizer, batch_size

    async def rank(self, query: str, passages: list[str], models: Models) -> Scored:
        rows = await models.run(self._score_pairs, [(query, p) for p in passages], (self.backend, self.name))
        return Scored([r.score for r in rows], [i for i, r in enumerate(rows) if r.truncated])

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> list[_PairScore]:
        truncated = set(truncated_indices(self._tokenizer, [f"{q} {p}" for q, p in pairs], CROSS_ENCODER_MAX_TOKENS))
        return [_PairScore(float(s), i in truncated) for i, s in enumerate(self._predict(pairs))]

    @abstractmethod
    def _predict(self, pairs: list[tuple[str, str]]) -> list[float]: ...


class CrossEncoderReranker(_PairReranker):
    def __init__(self, settings: Settings) -> None:
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(resolve_model(settings.rerank_model), device=torch_device(settings.model_device),
                                       max_length=CROSS_ENCODER_MAX_TOKENS)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load cross-encoder {settings.rerank_model!r}: {e}") from e
        architectures = getattr(self._model.model.config, "architectures", None) or []
        if not any(a.endswith("ForSequenceClassification") for a in architectures):
            raise ModelUnavailable(f"{settings.rerank_model!r} is not a cross-encoder ({architectures}): "
                                   "its scoring head would be random")
        super().__init__(settings.rerank_model, "cross-encoder", self._model.tokenizer, settings.batch_size)

    def _predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = self._model.predict(pairs, batch_size=self._batch_size, show_progress_bar=False,
                                     convert_to_numpy=True)
        return np.asarray(scores).reshape(-1).tolist()


class FlagRerankerReranker(_PairReranker):
    def __init__(self, settings: Settings) -> None:
        try:
            from FlagEmbedding import FlagReranker
        except ImportError as e:
            raise ModelUnavailable(f"the flag-reranker backend needs FlagEmbedding: {e}") from e
        try:
            device = torch_device(settings.model_device)
            self._model = FlagReranker(resolve_model(settings.rerank_model), use_fp16=device == "cuda", devices=device)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load reranker {settings.rerank_model!r}: {e}") from e
        super().__init__(settings.rerank_model, "flag-reranker", self._model.tokenizer, settings.batch_size)

    def _predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = self._model.compute_score([list(pair) for pair in pairs], batch_size=self._batch_size,
                                           max_length=CROSS_ENCODER_MAX_TOKENS)
        return scores if isinstance(scores, list) else [scores]  # one pair gives a bare float


class BiEncoderHybridReranker(_Backend):
    """BM25 finds the passage that states the answer, the embedder the one on topic; z-scores blend them."""

    is_cross_encoder = False

    def __init__(self, embedder: Embedder) -> None:
        self.name = f"BM25 + {embedder.name} cosine"
        self.backend = "bi-encoder-hybrid"
        self._direct = DirectModels(embedder)

    async def rank(self, query: str, passages: list[str], models: Models) -> Scored:
        query_vector, encoded = await asyncio.gather(models.embed([query], "query"), models.embed(passages, "passage"))
        cosine = encoded.dense @ query_vector.dense[0]
        blended = 0.5 * _z(np.asarray(bm25_scores(query, passages))) + 0.5 * _z(cosine)
        # the blend is z-scored within the call: its best passage scores high whatever it says, so relevance is
        # read from the cosine (BM25 term coverage added nothing on the calibration set: AUC 0.73 against 0.74)
        return Scored([float(s) for s in blended], encoded.truncated, [float(c) for c in cosine])


RERANKERS: dict[str, Callable[[Settings, Embedder], Reranker]] = {
    "cross-encoder": lambda settings, _: CrossEncoderReranker(settings),
    "flag-reranker": lambda settings, _: FlagRerankerReranker(settings),
    "bi-encoder-hybrid": lambda _, embedder: BiEncoderHybridReranker(embedder),
}


def load_reranker(settings: Settings, embedder: Embedder) -> tuple[Reranker, str | None]:
    """The configured reranker, or the bi-encoder hybrid with the reason it stands in."""
    backend = settings.rerank_backend
    if backend == "bi-encoder-hybrid":
        return BiEncoderHybridReranker(embedder), None
    if not settings.rerank_model:
        return BiEncoderHybridReranker(embedder), (
            "no cross-encoder is configured (RERANK_MODEL is empty): /rerank blends BM25 with the embedder's cosine")
    if backend == "auto":
        backend = "cross-encoder"
    try:
        log.info("loading reranker %s with %s", settings.rerank_model, backend)
        return RERANKERS[backend](settings, embedder), None
    except ModelUnavailable as e:
        warning = f"RERANK_MODEL could not be used ({e}): /rerank blends BM25 with the embedder's cosine instead"
        log.error(warning)
        return BiEncoderHybridReranker(embedder), warning


def _z(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / (values.std() + 1e-9)
