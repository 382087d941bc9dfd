"""Every endpoint that takes a JSON Schema, against a real agent-svc and a loopback listener no allow-list
permits: a schema that names anything outside itself is a 400 in the caller's API's envelope, and agent-svc
connects to nothing, reads no file, and answers /healthz all along (issue 31's probe, kept as a test)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from offline_web.stack import OfflineStack

Body = Callable[[dict], dict]
MARKER = "LOCAL-FILE-MARKER-31"


def endpoints(page: str) -> dict[str, tuple[str, Body]]:
    """Each way a schema reaches agent-svc: (path, the body carrying `schema`)."""
    return {
        "chat response_format": ("/v1/chat/completions", lambda s: {
            "model": "wisp", "messages": [{"role": "user", "content": "sqlite wal"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": s}}}),
        "rich output_schema": ("/v2/search", lambda s: {"query": "sqlite wal", "search_type": "rich",
                                                        "output_schema": s}),
        "search scrapeOptions json": ("/v2/search", lambda s: {
            "query": "sqlite wal", "scrapeOptions": {"formats": [{"type": "json", "schema": s}]}}),
        "scrape json": ("/v2/scrape", lambda s: {"url": page, "formats": [{"type": "json", "schema": s}]}),
        "v1 scrape jsonOptions": ("/v1/scrape", lambda s: {"url": page, "formats": ["json"],
                                                           "jsonOptions": {"schema": s}}),
        "extract": ("/v2/extract", lambda s: {"urls": [page], "prompt": "the title", "schema": s}),
        "v1 extract": ("/v1/extract", lambda s: {"urls": [page], "prompt": "the title", "schema": s}),
    }


def references(url: str, marker_file: Path) -> dict[str, dict]:
    return {
        "http": {"$ref": f"{url}/schema.json"},
        "https": {"$ref": url.replace("http:", "https:") + "/schema.json"},
        "$id-relative": {"$id": f"{url}/", "$ref": "schema.json"},
        "nested": {"type": "object", "properties": {"title": {"$ref": f"{url}/schema.json"}}},
        "file": {"$ref": marker_file.as_uri()},
    }


def envelope_error(path: str, body: dict) -> str:
    """The error message, read from the envelope the path's API answers in."""
    if path.startswith("/v1/chat"):
        assert set(body["error"]) >= {"message", "type"} and body["error"]["type"] == "invalid_request_error"
        return body["error"]["message"]
    assert body["success"] is False
    return body["error"] if body["error"] != "Bad Request" else str(body["details"])


def test_no_schema_endpoint_follows_a_reference_out(agent: httpx.Client, stack: OfflineStack,
                                                    loopback_listener, tmp_path: Path) -> None:
    marker_file = tmp_path / "schema.json"
    marker_file.write_text(f'{{"enum": ["{MARKER}"]}}')
    page = f"{stack.web.url}/www.sqlite.org/wal.html"
    health: list[int] = []
    stop = threading.Event()

    def watch_health() -> None:  # the event loop must answer while the hostile schemas come in
        with httpx.Client(base_url=str(agent.base_url), timeout=60) as client:
            while not stop.is_set():
                health.append(client.get("/healthz").status_code)
                stop.wait(0.05)

    watcher = threading.Thread(target=watch_health)
    watcher.start()
    try:
        for name, (path, body) in endpoints(page).items():
            for form, schema in references(loopback_listener.url, marker_file).items():
                response = agent.post(path, json=body(schema))
                assert response.status_code == 400, (name, form, response.text[:300])
                assert MARKER not in response.text, (name, form)
                message = envelope_error(path, response.json())
                assert "$id" in message or "remote or file reference" in message, (name, form, message)
    finally:
        stop.set()
        watcher.join()
    assert loopback_listener.connections == 0
    assert health and set(health) == {200}


@pytest.mark.parametrize("form", ["http", "file"])
def test_a_refused_reference_names_the_field(agent: httpx.Client, loopback_listener, tmp_path: Path,
                                             form: str) -> None:
    schema = references(loopback_listener.url, tmp_path / "x.json")[form]
    chat = agent.post("/v1/chat/completions", json=endpoints("")["chat response_format"][1](schema)).json()
    assert chat["error"]["message"].startswith("response_format.json_schema.schema: `$ref` ")
    rich = agent.post("/v2/search", json={"query": "x", "search_type": "rich", "output_schema": schema}).json()
    assert rich["error"].startswith("output_schema: `$ref` ")
    assert loopback_listener.connections == 0
