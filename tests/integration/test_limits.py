"""The limits against a real agent-svc: the per-minute limit per key, and the cap on costly requests in flight
(one held by a semantic-svc that answers only when the test lets it), streamed ones and a client that hangs up
included. Nothing here waits on a clock: a held search ends when the test releases it, the others at once."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import httpx2
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import RateLimitError
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service
from tests.waiting import until_sync

RATE_KEY, RATE_OTHER = "wisp-rate-key-Aq1Ws2Ed3Rf4Tg5", "wisp-rate-key-Yh6Uj7Ik8Ol9Pz0"
MCP_KEY = "wisp-rate-key-Mc1Pp2Ss3Ee4Rr5"
CAP_KEY, CAP_OTHER = "wisp-cap-key-Xc1Vb2Nm3Lk4Jh5", "wisp-cap-key-Gf6Ds7Ap8Qw9Er0"
RANKED = {"query": "sqlite wal checkpoint", "limit": 2, "retrieval_mode": "semantic"}


@pytest.fixture(scope="module")
def limited(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("rate"), "agent-rate",
                       API_KEYS=f"{RATE_KEY},{RATE_OTHER},{MCP_KEY}", RATE_LIMIT_PER_MIN="3") as agent:
        yield agent.url


class Silent:
    """A semantic-svc that, while `holding`, takes each request and never answers: a ranked search waits on it
    until `release` (its deadline, a minute, is never what ends it). Not holding, it hangs up on each request at
    once, and a ranked search goes on without it, admitted and answered at once."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.requests = threading.Semaphore(0)
        self.holding = True
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            if not self.holding:
                connection.close()
                continue
            self.connections.append(connection)
            self.requests.release()

    def hold(self) -> None:
        """Hold the next requests, and forget those seen so far: the next `requests.acquire` waits for a new one."""
        while self.requests.acquire(blocking=False):
            pass
        self.holding = True

    def held(self) -> None:
        """Once a request is held: hang up on the next ones at once."""
        assert self.requests.acquire(timeout=20), "the ranked search never reached semantic-svc"
        self.holding = False

    def release(self) -> None:
        """Hang up on the requests held: their searches go on without semantic-svc."""
        while self.connections:
            self.connections.pop().close()

    def close(self) -> None:
        self.server.close()
        self.release()


@pytest.fixture(scope="module")
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


@pytest.fixture(scope="module")
def capped(stack: OfflineStack, silent: Silent, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # a minute to every ranked search: a held one ends when the test releases it, long before its deadline
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("cap"), "agent-cap",
                       API_KEYS=f"{CAP_KEY},{CAP_OTHER}", RANKED_CONCURRENCY_PER_KEY="1", SEMANTIC_SVC_URL=silent.url,
                       FETCH_ALLOW_HOSTS="127.0.0.1", PIPELINE_DEADLINE_S="60", SEMANTIC_TIMEOUT_S="60") as agent:
        yield agent.url


def post(url: str, key: str, body: dict, path: str = "/v2/search") -> httpx.Response:
    return httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def test_the_per_minute_limit_is_a_429_with_retry_after_per_key(limited: str) -> None:
    keyword = {"query": "git rebase", "limit": 1}
    assert [post(limited, RATE_KEY, keyword).status_code for _ in range(3)] == [200, 200, 200]
    refused = post(limited, RATE_KEY, keyword)
    assert refused.status_code == 429 and 55 <= int(refused.headers["retry-after"]) <= 60
    body = refused.json()
    assert body["success"] is False and set(body) == {"success", "error"}
    assert body["error"].startswith("Rate limit exceeded. Consumed (req/min): 4, Remaining (req/min): 0. "
                                    f"Please retry after {refused.headers['retry-after']}s, resets at 20")
    assert post(limited, RATE_OTHER, keyword).status_code == 200  # another key counts alone
    reads = [httpx.get(f"{limited}{path}", headers={"Authorization": f"Bearer {RATE_KEY}"}, timeout=10)
             for path in ("/v2/crawl/active", "/healthz")]
    assert [r.status_code for r in reads] == [200, 200]  # reads, and health, are not counted


def test_firecrawl_py_meets_the_limit_as_a_rate_limit_error(limited: str) -> None:
    client = Firecrawl(api_key=RATE_OTHER, api_url=limited)
    client.search("git rebase", limit=1)
    client.search("git rebase", limit=1)  # with the previous test's request, the 3 of the minute
    with pytest.raises(RateLimitError, match=r"Rate limit exceeded\. Consumed \(req/min\): 4"):
        client.search("git rebase", limit=1)


def test_an_mcp_session_counts_its_tool_calls_once_and_not_its_messages(limited: str) -> None:
    """initialize, tools/list and the notifications are POSTs to /mcp too: only the calls count, once each."""
    async def calls() -> list[bool]:
        auth = httpx2.AsyncClient(headers={"Authorization": f"Bearer {MCP_KEY}"}, timeout=60)  # the SDK's httpx
        async with auth, Client(streamable_http_client(limited + "/mcp", http_client=auth)) as client:
            await client.list_tools()
            return [(await client.call_tool("search", {"query": "git rebase", "limit": 1})).is_error
                    for _ in range(4)]

    assert asyncio.run(calls()) == [False, False, False, True]


def admitted(response: httpx.Response) -> bool:
    """Served, not refused: a ranked search in SearXNG's order, saying semantic-svc did not answer."""
    return response.status_code == 200 and "semantic-svc" in response.json()["warning"]


def hold_ranked(capped: str, silent: Silent, key: str = CAP_KEY) -> tuple[ThreadPoolExecutor, object]:
    """A ranked search of `key` in flight (held by the silent semantic-svc), and the pool running it."""
    silent.hold()
    pool = ThreadPoolExecutor(1)
    held = pool.submit(post, capped, key, RANKED)
    silent.held()
    return pool, held


def test_a_second_costly_request_of_a_key_is_a_429_while_one_runs(capped: str, silent: Silent) -> None:
    pool, held = hold_ranked(capped, silent)
    refused = post(capped, CAP_KEY, {**RANKED, "retrieval_mode": "hybrid"})
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert refused.json()["error"].startswith("Rate limit exceeded. Concurrent ranked or rich requests: 1, "
                                              "allowed: 1. Please retry after 1s")
    assert post(capped, CAP_KEY, {**RANKED, "retrieval_mode": "keyword"}).status_code == 200  # cheap: served
    assert post(capped, CAP_KEY, {"url": "http://127.0.0.1:1/"}, "/v2/similar").status_code == 429
    assert post(capped, CAP_KEY, {"url": "http://127.0.0.1:1/"}, "/v2/scrape").status_code == 429
    assert post(capped, CAP_KEY, {"url": "http://127.0.0.1:1/"}, "/v1/scrape").status_code == 429
    assert admitted(post(capped, CAP_OTHER, RANKED))  # another key's slot is its own
    silent.release()
    done = held.result(timeout=60)
    pool.shutdown()
    assert admitted(done)
    assert admitted(post(capped, CAP_KEY, RANKED))  # the slot is free again


def test_a_streamed_search_holds_its_slot_until_the_stream_ends_or_the_client_leaves(capped: str,
                                                                                   silent: Silent) -> None:
    headers = {"Authorization": f"Bearer {CAP_KEY}"}
    with httpx.Client(base_url=capped, headers=headers, timeout=60) as client:
        silent.hold()
        with client.stream("POST", "/v2/search", json={**RANKED, "stream": True}) as stream:
            assert stream.status_code == 200
            silent.held()
            refused = client.post("/v2/search", json={**RANKED, "stream": True})
            assert refused.status_code == 429 and refused.headers["content-type"] == "application/json"
            silent.release()
            assert "event: done" in stream.read().decode()
        assert admitted(client.post("/v2/search", json=RANKED))  # freed
    silent.hold()
    with httpx.Client(base_url=capped, headers=headers, timeout=60) as leaving, \
            leaving.stream("POST", "/v2/search", json={**RANKED, "stream": True}):
        silent.held()
    # the client hung up mid-search, held by semantic-svc a minute from its deadline: only agent-svc cancelling it
    # frees the slot, which the test waits for (30 s at most, only to stop a hang)
    answers: list[httpx.Response] = []

    def freed() -> bool:
        answers.append(post(capped, CAP_KEY, RANKED))
        return answers[-1].status_code != 429

    until_sync(freed, "the slot of a client that left freed")
    assert admitted(answers[-1])
    silent.release()
