"""The vector index on Qdrant through qdrant-client: a Qdrant server at QDRANT_URL, or embedded at QDRANT_PATH.

One point per chunk, with named vectors: `dense` (cosine) and, when the embedder has a trained lexical head
(BGE-M3), `lexical` (sparse); search then fuses both with reciprocal rank fusion.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from qdrant_client import QdrantClient, models

DENSE, LEXICAL = "dense", "lexical"


class CollectionNotFound(LookupError):
    pass


class DimensionMismatch(ValueError):
    pass


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
        self._client = QdrantClient(url=url) if url else QdrantClient(path=path)

    def close(self) -> None:
        self._client.close()

    def exists(self, collection: str) -> bool:
        return self._client.collection_exists(collection)

    def ensure_collection(self, collection: str, dimension: int, sparse: bool) -> None:
        """Create the collection on first use; refuse vectors of another size than it holds."""
        if self.exists(collection):
            held = self.dimension(collection)
            if held != dimension:
                raise DimensionMismatch(f"collection {collection!r} holds {held}-dimensional vectors and the "
                                        f"embedder gives {dimension}: use another collection or delete this one")
            return
        self._client.create_collection(
            collection,
            vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={LEXICAL: models.SparseVectorParams()} if sparse else None,
        )
        if self.mode == "server":  # embedded Qdrant has no payload indexes
            for key in ("url", "host"):
                self._client.create_payload_index(collection, key, models.PayloadSchemaType.KEYWORD)

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
        has_lexical = bool(self._collection(collection).config.params.sparse_vectors)
        points = []
        for chunk in chunks:
            vector: dict[str, Any] = {DENSE: chunk.dense}
            if has_lexical and chunk.sparse is not None:
                vector[LEXICAL] = models.SparseVector(indices=list(chunk.sparse), values=list(chunk.sparse.values()))
            points.append(models.PointStruct(id=point_id(url, chunk.chunk_index), vector=vector, payload=chunk.payload))
        self._client.upsert(collection, points=points, wait=True)

    def search(self, collection: str, dense: list[float], sparse: dict[int, float] | None, limit: int,
               score_threshold: float | None, conditions: dict[str, Any] | None) -> list[Match]:
        self._collection(collection)
        query_filter = _match(conditions) if conditions else None
        has_lexical = bool(self._collection(collection).config.params.sparse_vectors)
        if sparse and has_lexical:
            response = self._client.query_points(
                collection,
                prefetch=[
                    models.Prefetch(query=dense, using=DENSE, limit=limit * 4, score_threshold=score_threshold,
                                    filter=query_filter),
                    models.Prefetch(query=models.SparseVector(indices=list(sparse), values=list(sparse.values())),
                                    using=LEXICAL, limit=limit * 4, filter=query_filter),
                ],
                query=models.FusionQuery(fusion=models.Fusion.RRF), limit=limit, with_payload=True,
            )
        else:
            response = self._client.query_points(collection, query=dense, using=DENSE, limit=limit,
                                                 score_threshold=score_threshold, query_filter=query_filter,
                                                 with_payload=True)
        return [Match(float(p.score), p.payload or {}) for p in response.points]

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
                "sparse": bool(info.config.params.sparse_vectors), "store": self.mode, "location": self.location}

    def _collection(self, collection: str) -> Any:
        if not self.exists(collection):
            raise CollectionNotFound(f"no collection {collection!r}")
        return self._client.get_collection(collection)


def point_id(url: str, chunk_index: int) -> str:
    """Stable ids: upserting the same document again rewrites the same points."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{url}#{chunk_index}"))


def _match(conditions: dict[str, Any]) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key=k, match=models.MatchValue(value=v))
                               for k, v in conditions.items()])
