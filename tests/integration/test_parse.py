"""POST /v2/parse on agent-svc as it runs (uvicorn, its extraction workers), through firecrawl-py's `parse` (sync and
async) and `get_parse_formats`, firecrawl-js's `parse`, and raw multipart posts for the refusals: PDF, DOCX, HTML,
markdown and text into Documents, summary through an LLM, and every unreadable upload a 4xx in Firecrawl's
envelope. No SearXNG: a parse reads no web."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v2.types import ScrapeOptions
from firecrawl.v2.utils.error_handler import BadRequestError

from offline_web.processes import Service, free_port
from tests.integration.conftest import agent_service
from tests.integration.test_sdk_js import call_js
from tests.unit.agent.pages.test_docx import ARTICLE as DOCX
from tests.unit.agent.pages.test_extract import one_page, pdf, stream

MAX_BODY_BYTES = 300_000
PDF = pdf(*one_page(stream(b"BT /F1 12 Tf 72 720 Td (Checkpoints move the WAL back into the database.) Tj ET")))
HTML = (b"<html lang='en'><head><title>Write-Ahead Logging</title></head><body><nav><a href='/'>Home</a></nav>"
        b"<article><h1>WAL</h1><p>SQLite runs a checkpoint when the WAL file reaches 1000 pages; "
        b"<a href='https://sqlite.org/pragma.html'>PRAGMA wal_checkpoint</a> runs one by hand.</p></article>"
        b"</body></html>")
MARKDOWN = "# Release notes\n\nWAL mode is **persistent**: it survives a restart."


@pytest.fixture(scope="module")
def parser(llm_stub: Service, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc with no SearXNG behind it, the LLM stub answering prose ("garbage") and a small body limit."""
    nowhere = f"http://127.0.0.1:{free_port()}"
    with agent_service(nowhere, tmp_path_factory.mktemp("parse"), "agent-parse", LLM_BASE_URL=f"{llm_stub.url}/v1",
                       LLM_MODEL="garbage", MAX_BODY_BYTES=str(MAX_BODY_BYTES)) as agent:
        yield agent.url


def test_python_sdk_parses_a_pdf_from_bytes_and_a_docx_from_a_path(parser: str, tmp_path: Path) -> None:
    client = Firecrawl(api_url=parser)
    doc = client.parse(PDF, filename="wal.pdf")
    assert doc.markdown == "Checkpoints move the WAL back into the database."
    assert doc.metadata.source_url == "wal.pdf" and doc.metadata.url == "upload:///wal.pdf"
    assert doc.metadata.status_code == 200 and doc.metadata.content_type == "application/pdf"
    path = tmp_path / "wal notes.docx"
    path.write_bytes(DOCX)
    docx = client.parse(path, options=ScrapeOptions(formats=["markdown", "html", "links"]))
    assert docx.markdown.startswith("# Write-Ahead Logging\n\nThe **default method**")
    assert "<h1>Write-Ahead Logging</h1>" in docx.html and docx.links == ["https://www.sqlite.org/pragma.html"]
    assert docx.metadata.source_url == "wal notes.docx" and docx.metadata.title == "Write-Ahead Logging"


def test_python_sdk_parses_html_markdown_and_text_in_the_formats_asked(parser: str) -> None:
    client = Firecrawl(api_url=parser)
    html = client.parse(HTML, filename="wal.html",
                        options=ScrapeOptions(formats=["markdown", "raw_html", "links"], only_main_content=False))
    assert "checkpoint" in html.markdown and html.raw_html == HTML.decode() and html.html is None
    assert html.links == ["https://sqlite.org/pragma.html"] and html.metadata.title == "WAL"
    notes = client.parse(MARKDOWN.encode(), filename="notes.md", options=ScrapeOptions(formats=["markdown", "html"]))
    assert notes.markdown == MARKDOWN and "<strong>persistent</strong>" in notes.html
    assert notes.metadata.content_type == "text/markdown" and notes.metadata.title == "Release notes"
    text = client.parse(b"plain words, no markup", filename="notes.txt")
    assert text.markdown == "plain words, no markup" and text.metadata.content_type == "text/plain"


def test_a_summary_is_asked_of_the_llm_and_unsupported_formats_are_named_in_the_warning(parser: str) -> None:
    doc = Firecrawl(api_url=parser).parse(PDF, filename="wal.pdf",
                                          options=ScrapeOptions(formats=["summary", "images"]))
    assert doc.summary == "I am sorry, I cannot produce that." and doc.markdown is None  # what the stub says
    assert doc.warning == "formats ['images'] are not supported and were skipped"


def test_async_python_sdk_parses_and_lists_the_formats(parser: str) -> None:
    doc = asyncio.run(AsyncFirecrawl(api_url=parser).parse(MARKDOWN.encode(), filename="notes.md"))
    assert doc.markdown == MARKDOWN
    formats = Firecrawl(api_url=parser).get_parse_formats()
    assert [f.format for f in formats] == ["pdf", "docx", "html", "markdown", "text"]
    assert all(f.available for f in formats) and ".docx" in formats[1].extensions


@pytest.mark.parametrize(("data", "filename", "code", "message"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "photo.png", "UNSUPPORTED_FILE_TYPE", "Unsupported upload type"),
    (b"%PDF-1.7\nnot really a pdf", "broken.pdf", "PARSE_UNREADABLE_FILE", "broken.pdf could not be read"),
    (b"PK\x03\x04 a zip in name only", "fake.docx", "PARSE_UNREADABLE_FILE", "fake.docx could not be read: not a DOCX"),
])
def test_python_sdk_raises_bad_request_with_the_code(parser: str, data: bytes, filename: str, code: str,
                                                     message: str) -> None:
    with pytest.raises(BadRequestError, match=message) as refused:
        Firecrawl(api_url=parser).parse(data, filename=filename)
    assert refused.value.status_code == 400 and refused.value.code == code


def test_js_sdk_parses_text_and_bytes_and_reports_a_refusal(parser: str) -> None:
    markdown, docx, image = call_js(
        parser,
        {"method": "parse", "args": [{"data": MARKDOWN, "filename": "notes.md"}, {"formats": ["markdown", "html"]}]},
        {"method": "parse", "args": [{"dataBase64": base64.b64encode(DOCX).decode(), "filename": "wal.docx"}]},
        {"method": "parse", "args": [{"dataBase64": base64.b64encode(b"\x89PNG\r\n\x1a\n\x00").decode(),
                                      "filename": "photo.png", "contentType": "image/png"}]})
    assert markdown["ok"], markdown
    assert markdown["result"]["markdown"] == MARKDOWN and "<strong>persistent</strong>" in markdown["result"]["html"]
    assert markdown["result"]["metadata"]["sourceURL"] == "notes.md"
    assert docx["ok"] and docx["result"]["markdown"].startswith("# Write-Ahead Logging"), docx
    assert not image["ok"] and image["error"]["status"] == 400 and image["error"]["code"] == "UNSUPPORTED_FILE_TYPE"


@pytest.mark.parametrize(("files", "data", "status", "code", "error"), [
    (None, {"options": "{}"}, 400, "BAD_REQUEST", "Missing file upload."),
    ({"file": ("notes.txt", b"hi")}, {"options": "{not json"}, 400, "BAD_REQUEST", "Invalid JSON in the 'options'"),
    ({"file": ("notes.txt", b"hi")}, {"options": '{"actions": [{"type": "click", "selector": "a"}]}'}, 400,
     "PARSE_UNSUPPORTED_OPTIONS", "Parse uploads do not support actions."),
    ({"file": ("empty.pdf", b"", "application/pdf")}, None, 400, "PARSE_UNREADABLE_FILE", "empty.pdf is empty"),
    ({"file": ("junk.bin", bytes(range(256)) * 4, "application/octet-stream")}, None, 400, "UNSUPPORTED_FILE_TYPE",
     "Unsupported upload type (junk.bin, application/octet-stream)"),
    ({"file": ("junk.txt", bytes(range(256)) * 4, "text/plain")}, None, 400, "PARSE_UNREADABLE_FILE",
     "junk.txt is not text"),
    ({"file": ("big.txt", b"a" * (MAX_BODY_BYTES + 1), "text/plain")}, None, 413, "PAYLOAD_TOO_LARGE",
     f"Payload too large: request bodies are limited to {MAX_BODY_BYTES} bytes"),
])
def test_raw_posts_are_refused_in_firecrawls_envelope(parser: str, files: dict | None, data: dict | None,
                                                      status: int, code: str, error: str) -> None:
    response = httpx.post(f"{parser}/v2/parse", files=files, data=data, timeout=30)
    body = response.json()
    assert response.status_code == status and body["success"] is False and body["code"] == code, body
    assert body["error"].startswith(error)
