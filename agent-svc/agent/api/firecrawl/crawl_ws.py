"""GET /v2/crawl/{id} (and v1's) upgraded to a WebSocket: a crawl's progress pushed as Firecrawl's
crawl-status-ws pushes it, for the SDKs' watchers (firecrawl-py's `watcher`, firecrawl-js's on Node 22 and later).

Messages: one `catchup` (the body GET /v2/crawl/{id} answers, with the first page of documents), then one
`document` per page as it finishes. A crawl that ends while watched then gets `done` with its final counts (the
documents came before it; firecrawl-py's watchers build their result from them) or `error` if it failed; a
cancelled one gets no message, and the SDKs read the status over HTTP. The socket then closes with 1000 and the
reason {"type":"done"}, as upstream closes it. An unknown or expired crawl (a batch's id too) closes with 1008,
as upstream; past MAX_WATCHERS open sockets a new one closes with 1013 (try again later). The key is checked
before the handshake (api/gate/auth.py), as for HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect

from agent.api.firecrawl.crawl_routes import api_version
from agent.api.firecrawl.crawl_wire import MAX_PAGE, MAX_PAGE_BYTES, status_body
from agent.api.gate.usage import owner_of
from agent.core.crawl_options import CRAWL
from agent.errors import Forbidden, JobNotFound, SharedStateUnavailable
from agent.index.crawl.manager import Crawls
from agent.state.jobs import COMPLETED, FAILED, TERMINAL, Counts, Job

log = logging.getLogger("agent")

POLL_S = 0.5  # how often the store is read for new documents (upstream: 1 s)
MAX_WATCHERS = 64  # sockets open at once; each reads the crawl store every POLL_S
DONE = {"type": "done"}

router = APIRouter()
_watching: set[WebSocket] = set()


@router.websocket("/v2/crawl/{job_id}")
@router.websocket("/v1/crawl/{job_id}")
async def watch_crawl(websocket: WebSocket, job_id: str) -> None:
    offered = websocket.scope.get("subprotocols") or []
    # firecrawl-js sends its key as the subprotocol, and a WebSocket client fails a handshake that does not echo it
    await websocket.accept(subprotocol=offered[0] if offered else None)
    if len(_watching) >= MAX_WATCHERS:
        await _close(websocket, 1013, {"type": "error", "error": f"{MAX_WATCHERS} crawl watchers are open: poll "
                                       "GET /v2/crawl/{id} instead, or try again later"})
        return
    _watching.add(websocket)
    try:
        await _watch(websocket, job_id, websocket.app.state.crawls)
    except (JobNotFound, Forbidden) as e:
        await _close(websocket, 1008, {"type": "error", "error": e.message})
    except WebSocketDisconnect:
        pass
    except SharedStateUnavailable as e:  # Redis out of reach: the client may watch again later
        await _close(websocket, 1013, {"type": "error", "error": e.message})
    except Exception as e:
        log.exception("crawl watcher of %s failed", job_id)
        await _close(websocket, 1011, {"type": "error", "error": f"Internal server error ({type(e).__name__}); "
                                       "the details are in agent-svc's log"})
    finally:
        _watching.discard(websocket)


async def _watch(websocket: WebSocket, job_id: str, crawls: Crawls) -> None:
    job, counts, documents = await crawls.status(job_id, CRAWL, 0, MAX_PAGE, MAX_PAGE_BYTES,
                                                 owner_of(websocket.scope))
    await websocket.send_json({"type": "catchup",
                               "data": status_body(job, counts, documents, 0, None, _http_base(websocket))})
    watched_running = job.status not in TERMINAL
    sent = len(documents)
    gone = asyncio.create_task(_until_gone(websocket))
    try:
        while True:
            job, counts, documents = await crawls.status(job_id, CRAWL, sent, MAX_PAGE, MAX_PAGE_BYTES)
            for document in documents:
                await websocket.send_json({"type": "document", "data": document})
            sent += len(documents)
            if documents:
                continue  # a page may have more behind it
            if job.status in TERMINAL:
                break
            if (await asyncio.wait({gone}, timeout=POLL_S))[0]:
                return  # the client went
    finally:
        gone.cancel()
    if watched_running and (last := _last_message(job, counts)):
        await websocket.send_json(last)
    await _close(websocket, 1000, DONE)


def _last_message(job: Job, counts: Counts) -> dict[str, Any] | None:
    """What a crawl that ended while watched says last: `done` with its counts, `error`, or nothing (cancelled)."""
    if job.status == COMPLETED:
        body = status_body(job, counts, [], 0, None, "")
        return {"type": "done", "data": {key: body[key] for key in
                                         ("status", "total", "completed", "creditsUsed", "expiresAt")}}
    if job.status == FAILED:
        return {"type": "error", "error": job.error or "the crawl failed"}
    return None


async def _until_gone(websocket: WebSocket) -> None:
    """Returns when the client closes or goes; what it sends meanwhile is ignored, as upstream ignores it."""
    while (await websocket.receive())["type"] != "websocket.disconnect":
        pass


async def _close(websocket: WebSocket, code: int, reason: dict[str, Any]) -> None:
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the client may have closed it already
        await websocket.close(code, json.dumps(reason))


def _http_base(websocket: WebSocket) -> str:
    """Where this API version's HTTP crawl routes are, for the catchup's `next`."""
    base = str(websocket.base_url).rstrip("/").replace("ws://", "http://", 1).replace("wss://", "https://", 1)
    return f"{base}/{api_version(websocket)}"
