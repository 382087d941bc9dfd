"""API keys against a real agent-svc: 401s in Firecrawl's envelope, health open, both SDKs with api_key, and
the key kept out of the log."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import UnauthorizedError

from offline_web.processes import Service
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service
from tests.integration.test_sdk_js import call_js

KEY = "wisp-inline-key-7Qm2Zr9xKp4Lw8Vt"
FILE_KEY = "wisp-file-key-Hn3Jd6Ys1Bc5Fg0Re"
PROTECTED = [("POST", "/v2/search"), ("POST", "/v1/search"), ("POST", "/v2/crawl"), ("GET", "/v2/crawl/active"),
             ("GET", "/v2/crawl/0190a0a0-0000-7000-8000-000000000000"), ("POST", "/v2/similar"),
             ("GET", "/v2/index/stats"), ("GET", "/metrics"), ("POST", "/mcp"), ("GET", "/docs"),
             ("GET", "/openapi.json"), ("GET", "/no/such/route")]


@pytest.fixture(scope="module")
def keyed(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """agent-svc with one key in API_KEYS and one in API_KEYS_FILE, logging everything uvicorn and Wisp log."""
    workdir = tmp_path_factory.mktemp("keyed")
    keys = workdir / "keys.txt"
    keys.write_text(f"# the file's keys\n{FILE_KEY}\n")
    service = agent_service(stack.searx.url, workdir, "agent-keyed", API_KEYS=KEY, API_KEYS_FILE=str(keys),
                            LOG_LEVEL="DEBUG")
    service.command[service.command.index("warning")] = "debug"  # the access log too
    with service:
        yield service


@pytest.fixture(scope="module")
def keyed_url(keyed: Service) -> str:
    return keyed.url


def search(url: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/v2/search", json={"query": "sqlite wal checkpoint", "limit": 2}, headers=headers,
                      timeout=30)


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_route_but_health_needs_a_key(keyed_url: str, method: str, path: str) -> None:
    response = httpx.request(method, keyed_url + path, json={}, timeout=10)
    assert response.status_code == 401
    assert response.json() == {"success": False, "error": "Unauthorized"}
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_stays_open(keyed_url: str, path: str) -> None:
    assert httpx.get(keyed_url + path, timeout=10).status_code == 200


@pytest.mark.parametrize(("authorization", "error"), [
    (f"Bearer {KEY[:-1]}", "Unauthorized: Invalid token"), (f"Bearer {KEY}{FILE_KEY}", "Unauthorized: Invalid token"),
    ("Bearer None", "Unauthorized: Invalid token"), ("Bearer", "Unauthorized: Token missing"),
    (KEY, "Unauthorized: Token missing"),
])
def test_a_wrong_key_is_a_401_naming_what_is_wrong(keyed_url: str, authorization: str, error: str) -> None:
    response = search(keyed_url, {"Authorization": authorization})
    assert response.status_code == 401 and response.json() == {"success": False, "error": error}


@pytest.mark.parametrize("key", [KEY, FILE_KEY])
def test_either_key_is_served(keyed_url: str, key: str) -> None:
    response = search(keyed_url, {"Authorization": f"Bearer {key}"})
    assert response.status_code == 200 and response.json()["success"] is True
    assert response.json()["data"]["web"][0]["title"] == "Write-Ahead Logging"


def test_firecrawl_py_clients_with_the_key_are_served(keyed_url: str) -> None:
    assert Firecrawl(api_key=KEY, api_url=keyed_url).search("sqlite wal checkpoint", limit=2).web
    assert asyncio.run(AsyncFirecrawl(api_key=FILE_KEY, api_url=keyed_url).search("git rebase", limit=2)).web
    assert V1FirecrawlApp(api_key=KEY, api_url=keyed_url).search("git rebase", limit=2).data


@pytest.mark.parametrize(("api_key", "error"), [("fc-wrong-key", "Unauthorized: Invalid token"),
                                                (None, "Unauthorized")])
def test_firecrawl_py_without_the_key_gets_an_unauthorized_error(keyed_url: str, api_key: str | None,
                                                                error: str) -> None:
    with pytest.raises(UnauthorizedError, match=f"^Unauthorized: Failed to search. {error} - "):
        Firecrawl(api_key=api_key, api_url=keyed_url).search("git rebase", limit=2)


def test_firecrawl_js_with_the_key_is_served_and_with_a_wrong_one_gets_a_401(keyed_url: str) -> None:
    calls = [{"client": "v2", "method": "search", "args": ["git rebase", {"limit": 2}]},
             {"client": "v1", "method": "search", "args": ["git rebase", {"limit": 2}]}]
    v2, v1 = call_js(keyed_url, *calls, api_key=KEY)
    assert v2["ok"] and v2["result"]["web"], v2
    assert v1["ok"] and v1["result"]["data"], v1
    wrong_v2, wrong_v1 = call_js(keyed_url, *calls, api_key="fc-wrong-key")
    assert not wrong_v2["ok"] and wrong_v2["error"]["status"] == 401
    assert wrong_v2["error"]["message"] == "Unauthorized: Invalid token"
    assert not wrong_v1["ok"] and "401" in wrong_v1["error"]["message"]


def test_the_keys_never_reach_the_log(keyed: Service, keyed_url: str) -> None:
    for key in (KEY, FILE_KEY):
        search(keyed_url, {"Authorization": f"Bearer {key}"})
        search(keyed_url, {"Authorization": f"Bearer {key[:-1]}"})  # a near miss
        search(keyed_url, {"Authorization": f"Bearer {key}x"})
    log = Path(keyed.log_path).read_text()
    assert '"path": "/v2/search", "route": "unmatched", "status": 401' in log  # logged at all
    assert '"path": "/v2/search", "route": "/v2/search", "status": 200' in log
    assert "API keys required: 2 accepted (key:" in log  # named by an id of their own
    for key in (KEY, FILE_KEY):
        assert key[:12] not in log and key[-12:] not in log
