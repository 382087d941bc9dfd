"""Reranking backends behind one interface: `score(query, passages)` → one relevance score per passage.

- cross-encoder: sentence-transformers CrossEncoder (ms-marco-MiniLM-L6-v2, bge-reranker-v2-m3, …).
- flag-reranker: FlagEmbedding's FlagReranker.
- bi-encoder-hybrid: 0.5·z(BM25) + 0.5·z(embedder cosine), the best second pass measured without
  cross-encoder weights (../shared/reference/models-offline.md §5.2). No PyPI package ships real
  cross-encoder weights, so this is the offline default, and /models says so: never random weights
  pretending to rank.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from wisp_text.bm25 import bm25_scores

from semantic.config import Settings
from semantic.embedders import Embedder, ModelUnavailable, resolve_model, truncated_indices

log = logging.getLogger(__name__)

CROSS_ENCODER_MAX_TOKENS = 512


@dataclass
class Scored:
    scores: list[float]
    truncated: list[int] = field(default_factory=list)  # passages cut to the model's input limit


class Reranker(Protocol):
    name: str
    backend: str
    is_cross_encoder: bool

    def score(self, query: str, passages: list[str]) -> Scored: ...


class CrossEncoderReranker:
    def __init__(self, settings: Settings) -> None:
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(resolve_model(settings.rerank_model), device="cpu",
                                       max_length=CROSS_ENCODER_MAX_TOKENS)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load cross-encoder {settings.rerank_model!r}: {e}") from e
        architectures = getattr(self._model.model.config, "architectures", None) or []
        if not any(a.endswith("ForSequenceClassification") for a in architectures):
            raise ModelUnavailable(f"{settings.rerank_model!r} is not a cross-encoder ({architectures}): "
                                   "its scoring head would be random")
        self.name, self.backend, self.is_cross_encoder = settings.rerank_model, "cross-encoder", True
        self._batch_size = settings.batch_size

    def score(self, query: str, passages: list[str]) -> Scored:
        scores = self._model.predict([(query, p) for p in passages], batch_size=self._batch_size,
                                     show_progress_bar=False, convert_to_numpy=True)
        return Scored([float(s) for s in np.asarray(scores).reshape(-1)],
                      _truncated_pairs(self._model.tokenizer, query, passages))


class FlagRerankerReranker:
    def __init__(self, settings: Settings) -> None:
        try:
            from FlagEmbedding import FlagReranker
        except ImportError as e:
            raise ModelUnavailable(f"the flag-reranker backend needs FlagEmbedding: {e}") from e
        try:
            self._model = FlagReranker(resolve_model(settings.rerank_model), use_fp16=False, devices="cpu")
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load reranker {settings.rerank_model!r}: {e}") from e
        self.name, self.backend, self.is_cross_encoder = settings.rerank_model, "flag-reranker", True
        self._batch_size = settings.batch_size

    def score(self, query: str, passages: list[str]) -> Scored:
        scores = self._model.compute_score([[query, p] for p in passages], batch_size=self._batch_size,
                                           max_length=CROSS_ENCODER_MAX_TOKENS)
        scores = scores if isinstance(scores, list) else [scores]
        return Scored([float(s) for s in scores], _truncated_pairs(self._model.tokenizer, query, passages))


class BiEncoderHybridReranker:
    """BM25 finds the passage that states the answer, the embedder the one on topic; z-scores blend them."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.name = f"BM25 + {embedder.name} cosine"
        self.backend, self.is_cross_encoder = "bi-encoder-hybrid", False

    def score(self, query: str, passages: list[str]) -> Scored:
        query_vector = self._embedder.encode([query], "query").dense[0]
        encoded = self._embedder.encode(passages, "passage")
        cosine = encoded.dense @ query_vector
        blended = 0.5 * _z(np.asarray(bm25_scores(query, passages))) + 0.5 * _z(cosine)
        return Scored([float(s) for s in blended], encoded.truncated)


def load_reranker(settings: Settings, embedder: Embedder) -> tuple[Reranker, str | None]:
    """The configured reranker, or the bi-encoder hybrid with the reason it stands in."""
    backend = settings.rerank_backend
    if backend == "bi-encoder-hybrid":
        return BiEncoderHybridReranker(embedder), None
    if not settings.rerank_model:
        return BiEncoderHybridReranker(embedder), (
            "no cross-encoder is configured (RERANK_MODEL is empty): /rerank blends BM25 with the embedder's cosine")
    loader = FlagRerankerReranker if backend == "flag-reranker" else CrossEncoderReranker
    try:
        log.info("loading reranker %s with %s", settings.rerank_model, loader.__name__)
        return loader(settings), None
    except ModelUnavailable as e:
        warning = f"RERANK_MODEL could not be used ({e}): /rerank blends BM25 with the embedder's cosine instead"
        log.error(warning)
        return BiEncoderHybridReranker(embedder), warning


def _truncated_pairs(tokenizer, query: str, passages: list[str]) -> list[int]:
    return truncated_indices(tokenizer, [f"{query} {p}" for p in passages], CROSS_ENCODER_MAX_TOKENS)


def _z(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / (values.std() + 1e-9)
