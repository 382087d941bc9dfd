"""POST /v2/parse and GET /v2/parse/formats on the app: a multipart upload in, a Document out; every refusal a 4xx in
Firecrawl's envelope, before any work (the body's size, the form, the options, the file's type) or after it (a
file that gives no text); and a parse holds a costly slot."""

from dataclasses import replace
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from agent.api.firecrawl.parse_wire import MISSING_FILE
from agent.app import create_app
from agent.config import Settings
from agent.errors import RateLimited

from ...fake_searxng import FakeSearxng, serving
from ...pages.test_docx import ARTICLE as DOCX

HTML = (b"<html><head><title>WAL</title></head><body><article><h1>WAL</h1><p>SQLite runs a checkpoint when the WAL "
        b"file reaches 1000 pages, and PRAGMA wal_checkpoint runs one by hand.</p></article></body></html>")


def client(**settings: Any) -> TestClient:
    app = create_app(Settings.of(searxng_url="http://searx.test", **settings))
    serving(app, FakeSearxng(total=0).search())
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def wisp() -> TestClient:
    return client(max_body_bytes=100_000)


def post(wisp: TestClient, files: Any = None, data: dict | None = None, **kwargs: Any) -> httpx.Response:
    return wisp.post("/v2/parse", files=files, data=data, **kwargs)


def test_an_upload_becomes_a_document_in_the_formats_asked(wisp: TestClient) -> None:
    response = post(wisp, {"file": ("wal.docx", DOCX, "application/octet-stream")},
                    {"options": '{"formats": ["markdown", {"type": "links"}], "origin": "python-sdk@4.55.0"}'})
    assert response.status_code == 200
    body = response.json()
    assert body["success"] is True and set(body["data"]) == {"markdown", "links", "metadata"}
    assert body["data"]["markdown"].startswith("# Write-Ahead Logging")
    assert body["data"]["metadata"]["sourceURL"] == "wal.docx" and body["data"]["metadata"]["statusCode"] == 200


def test_without_options_the_file_is_markdown(wisp: TestClient) -> None:
    body = post(wisp, {"file": ("wal.html", HTML, "text/html")}).json()
    assert set(body["data"]) == {"markdown", "metadata"} and "checkpoint" in body["data"]["markdown"]


def test_the_formats_it_reads(wisp: TestClient) -> None:
    body = wisp.get("/v2/parse/formats").json()
    assert body["success"] and [f["format"] for f in body["data"]["formats"]] == ["pdf", "docx", "html", "markdown",
                                                                                  "text"]


@pytest.mark.parametrize(("request_args", "code", "error"), [
    ({"data": {"options": "{}"}}, "BAD_REQUEST", MISSING_FILE),
    ({"json": {"formats": ["markdown"]}}, "BAD_REQUEST", MISSING_FILE),  # not a form at all
    ({"data": {"file": "text, not a file"}}, "BAD_REQUEST", MISSING_FILE),
    ({"files": {"file": ("a.txt", b"hi"), "options": ("o.json", b"{}")}}, "BAD_REQUEST",
     "The 'options' field must be a JSON string."),
    ({"files": {"file": ("a.txt", b"hi")}, "data": {"options": "{formats"}}, "BAD_REQUEST",
     "Invalid JSON in the 'options' field. Provide a valid JSON string."),
    ({"files": {"file": ("a.txt", b"hi")}, "data": {"options": '{"formats": ["nope"]}'}}, "BAD_REQUEST",
     "unknown formats ['nope']"),
    ({"files": {"file": ("a.txt", b"hi")}, "data": {"options": '{"waitFor": 500}'}}, "PARSE_UNSUPPORTED_OPTIONS",
     "Parse uploads do not support waitFor."),
    ({"files": [("file", ("a.txt", b"hi")), ("file", ("b.txt", b"ho"))]}, "BAD_REQUEST",
     "Send one file in the 'file' field."),
    ({"files": [("file", ("a.txt", b"hi")), ("more", ("b.txt", b"ho")), ("most", ("c.txt", b"ha"))]},
     "BAD_REQUEST", "Bad multipart/form-data body: Too many files. Maximum number of files is 2."),
    ({"files": {"file": ("empty.pdf", b"", "application/pdf")}}, "PARSE_UNREADABLE_FILE", "empty.pdf is empty"),
    ({"files": {"file": ("photo.png", b"\x89PNG\r\n\x1a\n\x00", "image/png")}}, "UNSUPPORTED_FILE_TYPE",
     "Unsupported upload type (photo.png, image/png). Supported file extensions: .pdf, .docx, .html, .htm, "
     ".xhtml, .md, .markdown, .mdown, .mkd, .txt, .text"),
    ({"files": {"file": ("junk.txt", bytes(range(256)), "text/plain")}}, "PARSE_UNREADABLE_FILE",
     "junk.txt is not text: it holds binary data"),
    ({"files": {"file": ("broken.pdf", b"%PDF-1.7\n1 0 obj << >>", "application/pdf")}}, "PARSE_UNREADABLE_FILE",
     "broken.pdf could not be read: "),
    ({"files": {"file": ("archive.docx", b"PK\x03\x04 not really", None)}}, "PARSE_UNREADABLE_FILE",
     "archive.docx could not be read: not a DOCX"),
])
def test_each_refusal_is_a_400_in_firecrawls_envelope(wisp: TestClient, request_args: dict, code: str,
                                                      error: str) -> None:
    response = wisp.post("/v2/parse", **request_args)
    body = response.json()
    assert response.status_code == 400 and body["success"] is False and body["code"] == code, body
    assert body["error"].startswith(error)


def test_an_upload_past_the_body_limit_is_a_413(wisp: TestClient) -> None:
    response = post(wisp, {"file": ("big.txt", b"a" * 100_001, "text/plain")})
    assert response.status_code == 413 and response.json()["code"] == "PAYLOAD_TOO_LARGE"


def test_a_parse_holds_a_costly_slot_once_its_request_is_valid() -> None:
    capped = client(ranked_concurrency_per_key=1)

    class Full:
        per_client = 1

        async def take(self, client: str) -> None:
            raise RateLimited("Rate limit exceeded. Concurrent ranked or rich requests: 1, allowed: 1.", 1)

    app = capped.app
    app.state.limits = replace(app.state.limits, costly=Full())
    assert post(capped, {"file": ("wal.html", HTML, "text/html")}).status_code == 429
    assert post(capped, data={"options": "{}"}).status_code == 400  # refused before it would wait for a slot
