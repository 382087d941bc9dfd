"""HTTP routes of semantic-svc: parse, call one function, shape the reply. Exposes `app`."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field, StrictStr, model_validator
from wisp_obs import logs
from wisp_obs.requests import ObservedRequests, id_header

from semantic import indexing, metrics
from semantic.config import Settings, get_settings
from semantic.errors import BadRequest, ClientGone, SemanticError, StoreInUse, TooLarge
from semantic.kinds import SpeedKind
from semantic.models.embedders import Embedder
from semantic.runtime import Runtime, check_backends

log = logging.getLogger("semantic")
T = TypeVar("T")


class EmbedRequest(BaseModel):
    texts: list[StrictStr]
    kind: Literal["query", "passage"] = "passage"


class RerankRequest(BaseModel):
    query: StrictStr
    passages: list[StrictStr]
    top_k: int | None = Field(None, ge=1)


class SimilarityRequest(BaseModel):
    query: StrictStr
    passages: list[StrictStr]


class DocumentIn(BaseModel):
    url: StrictStr = Field(min_length=1)
    title: StrictStr = ""
    text: StrictStr
    metadata: dict[str, Any] = Field(default_factory=dict)


class UpsertRequest(BaseModel):
    documents: list[DocumentIn]
    collection: StrictStr | None = None


class SearchRequest(BaseModel):
    query: StrictStr
    limit: int = Field(10, ge=1, le=100)
    score_threshold: float | None = None  # the embedder's cosine
    probability_threshold: float | None = Field(None, ge=0, le=1)  # of relevance; ignored without a calibration
    filter: dict[str, StrictStr | int | bool] | None = None
    collection: StrictStr | None = None


class DeleteRequest(BaseModel):
    url: StrictStr | None = None
    host: StrictStr | None = None
    collection: StrictStr | None = None

    @model_validator(mode="after")
    def _one_target(self) -> DeleteRequest:
        if (self.url is None) == (self.host is None):
            raise ValueError("give exactly one of url or host")
        return self


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app, with its index open: StoreInUse when another process holds the embedded index's folder."""
    settings = settings or get_settings()
    check_backends(settings)
    logs.configure(settings.log_level, settings.log_format)
    # opened here rather than in the lifespan, whose failures uvicorn prints as a traceback: see _served_app
    runtime = Runtime(settings)
    index = runtime.store.describe()
    log.info("vector index: %s Qdrant at %s%s", index["mode"], index["location"],
             f"; {index['note']}" if "note" in index else "")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runtime.load_in_background()
        yield
        await runtime.close()

    app = FastAPI(title="Wisp semantic-svc", summary="Embeddings, reranking and the vector index", lifespan=lifespan)
    app.state.runtime = runtime
    # its callers are agent-svc's: their request id, when they send one, names the work done for them here too
    app.add_middleware(ObservedRequests, observe=metrics.observe_request,
                       access_log=logging.getLogger("semantic.access"), trust_incoming_id=True)

    def runtime_of(request: Request) -> Runtime:
        return request.app.state.runtime

    @app.post("/embed")
    async def embed(body: EmbedRequest, request: Request) -> dict[str, Any]:
        _check_texts(body.texts, "texts", settings.max_texts)
        runtime = runtime_of(request)
        encoded = await _while_connected(request, runtime.embed(body.texts, body.kind))
        embedder = runtime.ready_embedder()
        return {"model": embedder.name, "dimension": embedder.dimension, "dense": encoded.dense.tolist(),
                "sparse": _sparse_json(encoded.sparse), **_truncation(encoded.truncated, embedder.max_tokens)}

    @app.post("/rerank")
    async def rerank(body: RerankRequest, request: Request) -> dict[str, Any]:
        _check_query(body.query)
        _check_texts(body.passages, "passages", settings.max_texts)
        runtime = runtime_of(request)
        ranked = await _while_connected(request, runtime.rerank(body.query, body.passages))
        top = ranked.order[: body.top_k] if body.top_k else ranked.order
        probabilities = ranked.probabilities
        return {"model": runtime.reranker.name, "backend": runtime.reranker.backend, "scores": ranked.scores,
                "probabilities": probabilities, "order": ranked.order,
                "results": [{"index": i, "score": ranked.scores[i],
                             "probability": probabilities[i] if probabilities else None} for i in top],
                "speed": _speed(runtime, "rerank"), **_truncation(ranked.truncated)}

    @app.post("/similarity")
    async def similarity(body: SimilarityRequest, request: Request) -> dict[str, Any]:
        _check_query(body.query)
        _check_texts(body.passages, "passages", settings.max_texts)
        runtime = runtime_of(request)
        scores = await _while_connected(request, runtime.similarity(body.query, body.passages))
        return {"model": runtime.ready_similarity_embedder().name, "scores": scores,
                "probabilities": runtime.probabilities("similarity", scores), "speed": _speed(runtime, "embed")}

    @app.post("/index/upsert")
    async def upsert(body: UpsertRequest, request: Request) -> dict[str, Any]:
        _check_texts([d.text for d in body.documents], "documents[].text", settings.max_texts)
        documents = [indexing.Document(d.url, d.title, d.text, d.metadata) for d in body.documents]
        collection = body.collection or settings.qdrant_collection
        report = await indexing.upsert(runtime_of(request), collection, documents)
        return {"collection": collection, "indexed": report.indexed, "unchanged": report.unchanged,
                "empty": report.empty,
                "chunks": report.chunks, "truncated_chunks": report.truncated_chunks}

    @app.post("/index/search")
    async def search(body: SearchRequest, request: Request) -> dict[str, Any]:
        _check_query(body.query)
        collection = body.collection or settings.qdrant_collection
        results = await indexing.search(runtime_of(request), collection, body.query, body.limit,
                                        body.score_threshold, body.filter, body.probability_threshold)
        return {"collection": collection, "results": results}

    @app.post("/index/delete")
    async def delete(body: DeleteRequest, request: Request) -> dict[str, Any]:
        collection = body.collection or settings.qdrant_collection
        conditions = {"url": body.url} if body.url is not None else {"host": body.host.lower()}
        return {"collection": collection, "deleted_chunks": await indexing.delete(runtime_of(request), collection,
                                                                                  conditions)}

    @app.get("/index/stats")
    async def stats(request: Request, collection: str | None = Query(None)) -> dict[str, Any]:
        return await indexing.stats(runtime_of(request), collection or settings.qdrant_collection)

    @app.get("/stats")
    async def lane_stats(request: Request) -> dict[str, Any]:
        runtime = runtime_of(request)
        return {"lane": dataclasses.asdict(runtime.lane.stats()),
                "embed_cache": dataclasses.asdict(runtime.cache.stats())}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        runtime = runtime_of(request)
        index = runtime.store.describe()
        if runtime.embedder is None:
            reason = runtime.load_error or "loading models"
            return JSONResponse({"status": "unavailable" if runtime.load_error else "loading", "error": reason,
                                 "index": index}, 503)
        return JSONResponse({"status": "ready", "index": index, **_calibration(runtime)})

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        runtime = runtime_of(request)
        metrics.sample_lane(runtime.lane.stats())
        metrics.sample_speed(runtime.speed.speeds())
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    @app.get("/models")
    async def models(request: Request) -> dict[str, Any]:
        return _describe(runtime_of(request))

    _install_error_handlers(app)
    return app


def _describe(runtime: Runtime) -> dict[str, Any]:
    embedder, reranker = runtime.embedder, runtime.reranker
    described: dict[str, Any] = {
        "embedder": _embedder_json(embedder),
        "similarity": _embedder_json(runtime.similarity_embedder or embedder),
        "reranker": None if reranker is None else {
            "model": reranker.name, "backend": reranker.backend, "cross_encoder": reranker.is_cross_encoder},
        "vector_store": {**runtime.store.describe(), "default_collection": runtime.settings.qdrant_collection},
        "load_error": runtime.load_error,
    }
    if runtime.rerank_warning:
        described["warning"] = runtime.rerank_warning
    speeds = {kind: dataclasses.asdict(speed) for kind, speed in runtime.speed.speeds().items()}
    return {**described, "speed": speeds, **_calibration(runtime)}


def _embedder_json(embedder: Embedder | None) -> dict[str, Any] | None:
    return None if embedder is None else {
        "model": embedder.name, "backend": embedder.backend, "dimension": embedder.dimension,
        "max_tokens": embedder.max_tokens, "sparse": embedder.has_sparse}


def _speed(runtime: Runtime, kind: SpeedKind) -> dict[str, Any]:
    """The speed of `kind` now, as agent-svc plans its next batch with it, and the model time queued ahead of a
    new search's job, as agent-svc decides with it whether to wait for the model."""
    speed = runtime.speed.speed(kind)
    return {"kind": kind, "ms_per_kchar": speed.ms_per_kchar, "ms_per_text": speed.ms_per_text,
            "queued_ms": round(runtime.lane.queued_ms(), 1)}


def _calibration(runtime: Runtime) -> dict[str, Any]:
    calibration = runtime.calibration
    return {"calibration": None if calibration is None else dataclasses.asdict(calibration),
            "relevance": {role: c.describe() for role, c in runtime.relevance.items()} or None,
            "warnings": runtime.warnings}


async def _while_connected(request: Request, work: Awaitable[T]) -> T:
    """The result of `work`, cancelled if the client disconnects first: its queued model jobs are then dropped
    (an agent that timed out no longer waits, and the model time goes to those who still do)."""
    task = asyncio.ensure_future(work)

    async def cancel_on_disconnect() -> None:
        # the body is read already, so the next message is the disconnect (or the end of the response)
        while (await request.receive())["type"] != "http.disconnect":
            pass
        task.cancel()

    watcher = asyncio.create_task(cancel_on_disconnect())
    try:
        return await task
    except asyncio.CancelledError:
        if watcher.done():
            raise ClientGone("the client disconnected") from None
        raise
    finally:
        watcher.cancel()


def _check_query(query: str) -> None:
    if not query.strip():
        raise BadRequest("query is empty")


def _check_texts(texts: list[str], name: str, most: int) -> None:
    if not texts:
        raise BadRequest(f"{name} is empty")
    if len(texts) > most:
        raise TooLarge(f"{len(texts)} {name}; at most {most} per request")
    empty = [i for i, t in enumerate(texts) if not t.strip()]
    if empty:
        raise BadRequest(f"{name} {empty} are empty strings")


def _truncation(indices: list[int], max_tokens: int | None = None) -> dict[str, Any]:
    if not indices:
        return {"truncated": []}
    limit = f" ({max_tokens} tokens)" if max_tokens else ""
    return {"truncated": indices, "warning": f"{len(indices)} texts were longer than the model reads{limit} and "
                                            "were truncated"}


def _sparse_json(sparse: list[dict[int, float]] | None) -> list[dict[str, float]] | None:
    return None if sparse is None else [{str(k): v for k, v in weights.items()} for weights in sparse]


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SemanticError)
    async def semantic_error(_: Request, error: SemanticError) -> JSONResponse:
        return JSONResponse({"error": error.message}, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, error: RequestValidationError) -> JSONResponse:
        details = [{"path": [p for p in e["loc"] if p != "body"], "message": e["msg"]} for e in error.errors()]
        return JSONResponse({"error": "Invalid request body", "details": details}, status_code=400)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"error": f"Internal server error ({type(error).__name__}); see semantic-svc's log"},
                            status_code=500, headers=id_header())


def _served_app() -> FastAPI:
    """The app uvicorn serves. An embedded index another process holds ends this one with the one line that says
    why, and uvicorn's exit status for a failed start-up (3), instead of a traceback."""
    try:
        return create_app()
    except StoreInUse as e:
        log.critical(e.message)
        raise SystemExit(3) from None


app = _served_app()
