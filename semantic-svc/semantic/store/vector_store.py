"""The vector index on Qdrant through qdrant-client: a Qdrant server at QDRANT_URL, or embedded at QDRANT_PATH.

One point per chunk, with named vectors: `dense` (cosine) and, in a collection created with a lexical side,
`lexical` (sparse): the weights of the embedder's trained lexical head (BGE-M3), or BM25's term weights, which
Qdrant weighs by IDF (`lexical.py`). Search then orders by reciprocal rank fusion of both, and reports each hit's
dense cosine as its score, so that a threshold on it (agent-svc's VECTOR_FLOOR) means the same with or without
a lexical side. A collection created without one (or before they existed) is searched by cosine alone.

Embedded, the index is one process's alone: a second process on the folder does not start (`folder_lock.py`), and
a replica on a folder of its own would answer from an index the others never see. Replicas share a server.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from semantic.errors import CollectionNotFound, DimensionMismatch
from semantic.kinds import Lexical
from semantic.store.folder_lock import FolderLock

DENSE, LEXICAL = "dense", "lexical"
# candidates each side brings to the fusion, per hit asked: a hit one side ranks low can still rise
PREFETCH_PER_HIT = 4
EMBEDDED_NOTE = ("this index is this process's alone: replicas share one index only through a Qdrant server "
                 "(QDRANT_URL)")


@dataclass
class StoredChunk:
    url: str
    chunk_index: int
    dense: list[float]
    sparse: dict[int, float] | None
    payload: dict[str, Any]


@dataclass
class Match:
    score: float
    payload: dict[str, Any]


class VectorStore:
    def __init__(self, url: str = "", path: str = "") -> None:
        self.mode = "server" if url else "embedded"
        self.location = url or path
        self._lock = None if url else FolderLock(path)
        try:
            self._client = QdrantClient(url=url) if url else QdrantClient(path=path)
        except BaseException:
            self._release()
            raise

    def close(self) -> None:
        self._client.close()
        self._release()

    def describe(self) -> dict[str, Any]:
        """Where the index lives and whether other processes see it (/readyz, /models)."""
        if self.mode == "server":
            return {"mode": self.mode, "location": self.location, "shared": True}
        return {"mode": self.mode, "location": self.location, "shared": False, "note": EMBEDDED_NOTE}

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def exists(self, collection: str) -> bool:
        return self._client.collection_exists(collection)

    def ensure_collection(self, collection: str, dimension: int, lexical: Lexical | None) -> Lexical | None:
        """Create the collection on first use, with `lexical` as its lexical side; refuse vectors of another size
        than it holds. Returns the lexical side the collection holds: an existing one keeps its own."""
        if self.exists(collection):
            held = self.dimension(collection)
            if held != dimension:
                raise DimensionMismatch(f"collection {collection!r} holds {held}-dimensional vectors and the "
                                        f"embedder gives {dimension}: use another collection or delete this one")
            return self.lexical(collection)
        # IDF is the collection's statistic, so Qdrant computes it at query time; a model's weights have it built in
        sparse = {LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF if lexical == "bm25" else None)}
        self._client.create_collection(
            collection,
            vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config=sparse if lexical else None,
        )
        if self.mode == "server":  # embedded Qdrant has no payload indexes
            for key in ("url", "host"):
                self._client.create_payload_index(collection, key, models.PayloadSchemaType.KEYWORD)
        return lexical

    def lexical(self, collection: str) -> Lexical | None:
        """The collection's lexical side, told by its sparse vector's IDF modifier; None: it has none."""
        params = (self._collection(collection).config.params.sparse_vectors or {}).get(LEXICAL)
        if params is None:
            return None
        return "bm25" if params.modifier == models.Modifier.IDF else "model"

    def dimension(self, collection: str) -> int:
        vectors = self._collection(collection).config.params.vectors
        return int(vectors[DENSE].size)

    def content_hash(self, collection: str, url: str) -> str | None:
        """The content hash stored for a document, or None if the index does not hold it."""
        points, _ = self._client.scroll(collection, scroll_filter=_match({"url": url}), limit=1, with_payload=True)
        return points[0].payload.get("content_hash") if points else None

    def replace_document(self, collection: str, url: str, chunks: list[StoredChunk]) -> None:
        """Drop every chunk of `url`, then store `chunks`: a shorter new version leaves no stale chunk behind."""
        self.delete(collection, {"url": url})
        points = []
        for chunk in chunks:
            vector: dict[str, Any] = {DENSE: chunk.dense}
            if chunk.sparse:  # given only for a collection with a lexical side (`lexical`)
                vector[LEXICAL] = _sparse(chunk.sparse)
            points.append(models.PointStruct(id=point_id(url, chunk.chunk_index), vector=vector, payload=chunk.payload))
        self._client.upsert(collection, points=points, wait=True)

    def search(self, collection: str, dense: list[float], sparse: dict[int, float] | None, limit: int,
               score_threshold: float | None, conditions: dict[str, Any] | None) -> list[Match]:
        """The `limit` chunks nearest to the query, best first, each scored by its cosine to `dense`; ordered by
        fusion with `sparse` (the query's lexical vector, of the collection's kind) when it is given."""
        self._collection(collection)
        query_filter = _match(conditions) if conditions else None
        if not sparse:
            response = self._client.query_points(collection, query=dense, using=DENSE, limit=limit,
                                                 score_threshold=score_threshold, query_filter=query_filter,
                                                 with_payload=True)
            return [Match(float(p.score), p.payload or {}) for p in response.points]
        candidates = limit * PREFETCH_PER_HIT
        response = self._client.query_points(
            collection,
            prefetch=[
                models.Prefetch(query=dense, using=DENSE, limit=candidates, score_threshold=score_threshold,
                                filter=query_filter),
                models.Prefetch(query=_sparse(sparse), using=LEXICAL, limit=candidates, filter=query_filter),
            ],
            query=models.FusionQuery(fusion=models.Fusion.RRF), limit=candidates, with_payload=True,
            with_vectors=[DENSE],
        )
        # the fused score is a rank's, meaningless against a threshold: each hit gets its cosine back, and one
        # only the lexical side found must clear the threshold too
        query = _unit(np.asarray(dense, dtype=np.float32))
        matches = [Match(float(_unit(np.asarray(p.vector[DENSE], dtype=np.float32)) @ query), p.payload or {})
                   for p in response.points]
        return [m for m in matches if score_threshold is None or m.score >= score_threshold][:limit]

    def delete(self, collection: str, conditions: dict[str, Any]) -> int:
        """Delete the points matching every condition; return how many there were."""
        self._collection(collection)
        selector = _match(conditions)
        count = self._client.count(collection, count_filter=selector, exact=True).count
        if count:
            self._client.delete(collection, points_selector=models.FilterSelector(filter=selector), wait=True)
        return count

    def stats(self, collection: str) -> dict[str, Any]:
        info = self._collection(collection)
        chunks = self._client.count(collection, exact=True).count
        documents = self._client.count(collection, count_filter=_match({"chunk_index": 0}), exact=True).count
        return {"collection": collection, "documents": documents, "chunks": chunks,
                "dimension": int(info.config.params.vectors[DENSE].size),
                "sparse": bool(info.config.params.sparse_vectors), "lexical": self.lexical(collection),
                "store": self.mode, "location": self.location}

    def _collection(self, collection: str) -> Any:
        if not self.exists(collection):
            raise CollectionNotFound(f"no collection {collection!r}")
        return self._client.get_collection(collection)


def point_id(url: str, chunk_index: int) -> str:
    """Stable ids: upserting the same document again rewrites the same points."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{url}#{chunk_index}"))


def _sparse(weights: dict[int, float]) -> models.SparseVector:
    return models.SparseVector(indices=list(weights), values=list(weights.values()))


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / (np.linalg.norm(vector) or 1.0)


def _match(conditions: dict[str, Any]) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key=k, match=models.MatchValue(value=v))
                               for k, v in conditions.items()])
