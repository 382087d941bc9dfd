"""The vector index stage: documents → chunks → embeddings → Qdrant, and queries → nearest chunks.

Upserts are idempotent by URL and content hash: an unchanged document is skipped, a changed one replaces
all its chunks. A chunk's lexical (sparse) vector is of the kind its collection holds (`store/lexical.py`): the
embedder's, or BM25's, computed here for the chunk and the query alike. Chunks are embedded as the model lane's
background work: a crawl indexes in the gaps between searches.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from wisp_text.chunking import chunk_text

from semantic.kinds import Lexical
from semantic.models.embedders import Encoded, Kind
from semantic.runtime import Runtime
from semantic.store import lexical
from semantic.store.vector_store import StoredChunk


@dataclass
class Document:
    url: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        material = json.dumps([self.title, self.text, self.metadata], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(material.encode()).hexdigest()


@dataclass
class UpsertReport:
    indexed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # no text once headings are set apart
    chunks: int = 0
    truncated_chunks: int = 0


async def upsert(runtime: Runtime, collection: str, documents: list[Document]) -> UpsertReport:
    embedder = runtime.ready_embedder()
    wanted = lexical.for_new_collections(runtime.settings.index_lexical, embedder.has_sparse)
    held = await _in_store(runtime, runtime.store.ensure_collection, collection, embedder.dimension, wanted)
    report = UpsertReport()
    for document in documents:
        if await _in_store(runtime, runtime.store.content_hash, collection, document.url) == document.content_hash:
            report.unchanged.append(document.url)
            continue
        chunks = chunk_text(document.text, runtime.settings.chunk_chars, document.title)
        if not chunks:  # headings only: nothing to embed
            report.empty.append(document.url)
            continue
        texts = [c.with_heading for c in chunks]
        encoded = await runtime.embed(texts, "passage", priority="background")
        sparse = _lexical_vectors(held, texts, "passage", encoded, runtime.settings.chunk_chars)
        stored = [
            StoredChunk(document.url, chunk.index, encoded.dense[i].tolist(), sparse[i], {
                "url": document.url, "host": (urlsplit(document.url).hostname or "").lower(),
                "title": document.title, "heading": chunk.heading, "text": chunk.text, "chunk_index": chunk.index,
                "chunks": len(chunks), "content_hash": document.content_hash, "metadata": document.metadata,
                "indexed_at": datetime.now(UTC).isoformat(timespec="seconds"),
            })
            for i, chunk in enumerate(chunks)
        ]
        await _in_store(runtime, runtime.store.replace_document, collection, document.url, stored)
        report.indexed.append(document.url)
        report.chunks += len(chunks)
        report.truncated_chunks += len(encoded.truncated)
    return report


async def search(runtime: Runtime, collection: str, query: str, limit: int, score_threshold: float | None,
                 conditions: dict[str, Any] | None, probability_threshold: float | None = None
                 ) -> list[dict[str, Any]]:
    """The chunks nearest to `query`, best first, each with its score, its probability of relevance (None
    without a calibration) and payload; none below either threshold."""
    held = await _in_store(runtime, runtime.store.lexical, collection)
    encoded = await runtime.embed([query], "query")
    sparse = _lexical_vectors(held, [query], "query", encoded, runtime.settings.chunk_chars)[0]
    matches = await _in_store(runtime, runtime.store.search, collection, encoded.dense[0].tolist(), sparse,
                              limit, score_threshold, conditions)
    probabilities = runtime.probabilities("embedder", [m.score for m in matches]) or [None] * len(matches)
    return [{"score": m.score, "probability": p, **{k: v for k, v in m.payload.items() if k != "content_hash"}}
            for m, p in zip(matches, probabilities, strict=True)
            if probability_threshold is None or p is None or p >= probability_threshold]


def _lexical_vectors(held: Lexical | None, texts: list[str], kind: Kind, encoded: Encoded,
                     chunk_chars: int) -> list[dict[int, float] | None]:
    """Each text's lexical vector for a collection whose lexical side is `held`; None where the collection (or
    the embedder) has none."""
    if held == "bm25":
        return [lexical.query_vector(t) if kind == "query" else lexical.document_vector(t, chunk_chars)
                for t in texts]
    if held == "model" and encoded.sparse:
        return list(encoded.sparse)
    return [None] * len(texts)


async def delete(runtime: Runtime, collection: str, conditions: dict[str, str]) -> int:
    return await _in_store(runtime, runtime.store.delete, collection, conditions)


async def stats(runtime: Runtime, collection: str) -> dict[str, Any]:
    return await _in_store(runtime, runtime.store.stats, collection)


async def _in_store(runtime: Runtime, fn, *args):
    """Run a blocking store call on the store's own thread."""
    return await asyncio.get_running_loop().run_in_executor(runtime.store_thread, fn, *args)
