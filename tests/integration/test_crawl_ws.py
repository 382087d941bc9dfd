"""The crawl status WebSocket on a real agent-svc with a key: firecrawl-py's watcher and firecrawl-js's (Node's
WebSocket) follow a crawl through it; unknown crawls, another key's crawls and batches, and bad keys are refused
as Firecrawl refuses them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp

from offline_web.processes import free_port
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service

KEY = "wisp-watch-key-Qe4Tn7Bv2Xc9Mz5Wd"
AUTH = {"Authorization": f"Bearer {KEY}"}
OTHER_AUTH = {"Authorization": "Bearer wisp-other-key-Hs8Lp3Ry6Vn1Kd4Gf"}
WATCH_JS = Path(__file__).parent.parent / "sdk_js" / "watch.mjs"


@pytest.fixture(scope="module")
def watched_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc crawling the offline web; no semantic-svc listens, so pages are crawled but not indexed."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("watch"), "agent-watch",
                       API_KEYS=f"{KEY},{OTHER_AUTH['Authorization'].removeprefix('Bearer ')}",
                       FETCH_ALLOW_HOSTS="127.0.0.1", CRAWL_HOST_DELAY_S="0",
                       SEMANTIC_SVC_URL=f"http://127.0.0.1:{free_port()}") as agent:
        yield agent.url


def start_slow_crawl(url: str, stack: OfflineStack, limit: int = 4) -> str:
    """A crawl that takes a few seconds (one page a second), so that a watcher sees it running."""
    body = {"url": f"{stack.web.url}/www.sqlite.org/", "limit": limit, "delay": 1}
    return httpx.post(f"{url}/v2/crawl", json=body, headers=AUTH).json()["id"]


def finished_crawl(url: str, job_id: str, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while (status := httpx.get(f"{url}/v2/crawl/{job_id}", headers=AUTH).json())["status"] == "scraping":
        assert time.monotonic() < deadline, f"crawl {job_id} did not finish within {timeout_s} s"
        time.sleep(0.3)
    return status


def ws_url(url: str, job_id: str) -> str:
    return f"{url.replace('http://', 'ws://')}/v2/crawl/{job_id}"


def test_firecrawl_py_watcher_gets_the_whole_crawl_through_the_socket(watched_agent: str,
                                                                     stack: OfflineStack) -> None:
    job_id = start_slow_crawl(watched_agent, stack)
    # polling every 60 s: within this test, everything the watcher hears came through the socket
    watcher = Firecrawl(api_url=watched_agent, api_key=KEY).watcher(job_id, poll_interval=60, timeout=120)
    finished, snapshots, documents, done = threading.Event(), [], [], []
    watcher.add_listener(snapshots.append)
    watcher.add_event_listener("document", lambda event: documents.append(event["data"]))
    watcher.add_event_listener("done", lambda event: (done.append(event), finished.set()))
    watcher.start()
    assert finished.wait(120)
    watcher.stop()
    status = finished_crawl(watched_agent, job_id)
    assert status["status"] == "completed" and status["completed"] == 4
    assert snapshots[0].status == "scraping" and snapshots[-1].status == "completed"
    assert snapshots[-1].completed == 4 and len(snapshots[-1].data) == 4
    # raw Documents, as the socket sends them (a fallback to HTTP would hand over the SDK's snake_case dumps)
    urls = [d["metadata"]["sourceURL"] for d in done[0]["data"]]
    assert sorted(urls) == sorted(d["metadata"]["sourceURL"] for d in status["data"])
    assert [d["metadata"]["sourceURL"] for d in documents] == urls


def test_firecrawl_py_async_watcher_ends_with_the_whole_crawl(watched_agent: str, stack: OfflineStack) -> None:
    job_id = start_slow_crawl(watched_agent, stack)

    async def watch() -> list:
        return [snapshot async for snapshot in AsyncFirecrawl(api_url=watched_agent, api_key=KEY).watcher(
            job_id, poll_interval=60, timeout=120)]

    snapshots = asyncio.run(watch())
    assert snapshots[-1].status == "completed" and len(snapshots[-1].data) == 4
    assert {d.metadata.source_url for d in snapshots[-1].data} == {
        d["metadata"]["sourceURL"] for d in finished_crawl(watched_agent, job_id)["data"]}


def test_firecrawl_py_v1_watcher_hears_every_document_and_done(watched_agent: str, stack: OfflineStack) -> None:
    watcher = V1FirecrawlApp(api_url=watched_agent, api_key=KEY).crawl_url_and_watch(
        f"{stack.web.url}/www.sqlite.org/", limit=3, delay=1)
    documents, done = [], []
    watcher.add_event_listener("document", lambda event: documents.append(event["data"]))
    watcher.add_event_listener("done", done.append)
    asyncio.run(asyncio.wait_for(watcher.connect(), 120))  # on /v1/crawl/{id}, until the socket closes
    assert [event["status"] for event in done] == ["completed"] and len(done[0]["data"]) == 3
    assert len(documents) == 3


def test_a_crawl_cancelled_while_watched_closes_the_socket_without_done(watched_agent: str,
                                                                       stack: OfflineStack) -> None:
    job_id = start_slow_crawl(watched_agent, stack, limit=20)

    async def watch() -> tuple[list[str], int, str]:
        async with websockets.connect(ws_url(watched_agent, job_id), additional_headers=AUTH) as socket:
            types = [json.loads(await socket.recv())["type"]]
            httpx.delete(f"{watched_agent}/v2/crawl/{job_id}", headers=AUTH).raise_for_status()
            types += [json.loads(m)["type"] async for m in socket]
            return types, socket.close_code, socket.close_reason

    types, code, reason = asyncio.run(watch())
    assert types[0] == "catchup" and set(types[1:]) <= {"document"}  # the watchers read `cancelled` over HTTP
    assert (code, json.loads(reason)) == (1000, {"type": "done"})


def test_firecrawl_js_watcher_follows_a_crawl_with_the_key_as_subprotocol(watched_agent: str,
                                                                          stack: OfflineStack) -> None:
    job_id = start_slow_crawl(watched_agent, stack)
    done = subprocess.run(["node", "--experimental-websocket", "--no-warnings", str(WATCH_JS), watched_agent, job_id],
                          capture_output=True, text=True, timeout=150, check=True,
                          env={**os.environ, "FIRECRAWL_API_KEY": KEY})
    events = json.loads(done.stdout)
    assert events["websocket"] and "error" not in events, events
    assert events["snapshots"][0]["status"] == "scraping"  # the catchup
    assert events["done"]["status"] == "completed" and events["done"]["completed"] == 4
    status = finished_crawl(watched_agent, job_id)
    assert sorted(events["documents"]) == sorted(d["metadata"]["sourceURL"] for d in status["data"])


def test_a_finished_crawl_is_one_catchup_then_a_clean_close(watched_agent: str, stack: OfflineStack) -> None:
    job_id = start_slow_crawl(watched_agent, stack, limit=2)
    status = finished_crawl(watched_agent, job_id)

    async def watch() -> tuple[list[dict], int, str]:
        async with websockets.connect(ws_url(watched_agent, job_id), additional_headers=AUTH) as socket:
            messages = [json.loads(m) async for m in socket]
            return messages, socket.close_code, socket.close_reason

    [catchup], code, reason = asyncio.run(watch())
    assert catchup["type"] == "catchup" and catchup["data"]["status"] == "completed"
    assert catchup["data"]["data"] == status["data"] and catchup["data"]["completed"] == 2
    assert (code, json.loads(reason)) == (1000, {"type": "done"})


def test_an_unknown_crawl_or_a_batch_closes_with_1008(watched_agent: str, stack: OfflineStack) -> None:
    batch = httpx.post(f"{watched_agent}/v2/batch/scrape", json={"urls": [f"{stack.web.url}/www.sqlite.org/"]},
                       headers=AUTH).json()["id"]
    for job_id in ("0190a0a0-0000-7000-8000-000000000000", batch):
        code, reason = asyncio.run(_watch_closed(ws_url(watched_agent, job_id)))
        assert (code, json.loads(reason)) == (1008, {"type": "error", "error": "Job not found"}), job_id


async def _watch_closed(url: str) -> tuple[int, str]:
    async with websockets.connect(url, additional_headers=AUTH) as socket:
        with pytest.raises(websockets.ConnectionClosed):
            await socket.recv()
        return socket.close_code, socket.close_reason


def test_another_keys_crawl_and_batch_are_forbidden(watched_agent: str, stack: OfflineStack) -> None:
    crawl_id = start_slow_crawl(watched_agent, stack, limit=2)
    page = f"{stack.web.url}/www.sqlite.org/wal.html"
    batch_id = httpx.post(f"{watched_agent}/v2/batch/scrape", json={"urls": [page]}, headers=AUTH).json()["id"]
    appended = httpx.post(f"{watched_agent}/v2/batch/scrape", json={"urls": [page + "?again"], "appendToId": batch_id},
                          headers=OTHER_AUTH)
    assert (appended.status_code, appended.json()) == (403, {"success": False, "error": "Forbidden"})
    for method, path in [("GET", f"crawl/{crawl_id}"), ("GET", f"crawl/{crawl_id}/errors"),
                         ("DELETE", f"crawl/{crawl_id}"), ("GET", f"batch/scrape/{batch_id}"),
                         ("GET", f"batch/scrape/{batch_id}/errors"), ("DELETE", f"batch/scrape/{batch_id}")]:
        answer = httpx.request(method, f"{watched_agent}/v2/{path}", headers=OTHER_AUTH)
        assert (answer.status_code, answer.json()) == (403, {"success": False, "error": "Forbidden"}), path
    active = httpx.get(f"{watched_agent}/v2/crawl/active", headers=OTHER_AUTH).json()
    assert crawl_id not in [crawl["id"] for crawl in active["crawls"]]

    async def watch() -> tuple[int, str]:
        async with websockets.connect(ws_url(watched_agent, crawl_id), additional_headers=OTHER_AUTH) as socket:
            with pytest.raises(websockets.ConnectionClosed):
                await socket.recv()
            return socket.close_code, socket.close_reason

    code, reason = asyncio.run(watch())
    assert (code, json.loads(reason)) == (1008, {"type": "error", "error": "Forbidden"})
    assert finished_crawl(watched_agent, crawl_id)["status"] == "completed"  # its owner's crawl ran on
    assert httpx.get(f"{watched_agent}/v2/batch/scrape/{batch_id}", headers=AUTH).json()["total"] == 1


@pytest.mark.parametrize(("headers", "subprotocols", "error"), [
    ({}, None, "Unauthorized"), ({"Authorization": "Bearer wrong-key"}, None, "Unauthorized: Invalid token"),
    ({}, ["wrong-key-of-some-length"], "Unauthorized: Invalid token"),
])
def test_a_socket_without_the_key_is_refused_with_a_401(watched_agent: str, headers: dict, subprotocols: list | None,
                                                        error: str) -> None:
    async def connect() -> None:
        async with websockets.connect(ws_url(watched_agent, "0190a0a0-0000-7000-8000-000000000000"),
                                      additional_headers=headers, subprotocols=subprotocols):
            pass

    with pytest.raises(websockets.InvalidStatus) as refused:
        asyncio.run(connect())
    response = refused.value.response
    assert response.status_code == 401 and json.loads(response.body) == {"success": False, "error": error}
