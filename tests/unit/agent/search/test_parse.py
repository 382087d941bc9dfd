"""/v2/parse's work: an upload read as a scrape reads a fetched page (no fetch), into a Firecrawl Document in the
formats asked, the LLM's formats included; a file that gives no text is a 400, one still being read at the
timeout Firecrawl's 408."""

import asyncio
from typing import Any

import httpx
import pytest

from agent.core.query import PageAsk
from agent.errors import UnreadableFile, UnsupportedFile
from agent.pages.docx import DOCX_TYPE
from agent.pages.uploads import Upload
from agent.search.parse import ParseJob, parse
from agent.search.scrape import ScrapeFailed

from ..answers.test_rich import FakeLLM
from ..fake_searxng import FakeSearxng, replaced
from ..pages.test_docx import ARTICLE as DOCX
from ..pages.test_extract import one_page, pdf, stream
from ..pages.test_loading import StuckPool

PDF = pdf(*one_page(stream(b"BT /F1 12 Tf 72 720 Td (Checkpoints move the WAL back into the database.) Tj ET")))
HTML = ("<html lang='en'><head><title>Write-Ahead Logging</title></head><body><nav><a href='/'>Home</a></nav>"
        "<article><h1>WAL</h1><p>SQLite runs a checkpoint when the WAL file reaches 1000 pages; "
        "<a href='https://sqlite.org/pragma.html'>PRAGMA wal_checkpoint</a> runs one by hand.</p></article>"
        "<footer>Footer text</footer></body></html>")


def job(*formats: str, **fields: Any) -> ParseJob:
    return ParseJob(formats or ("markdown",), **{"asks": (), "main_only": True, "timeout_ms": 30_000, **fields})


def run(upload: Upload, parse_job: ParseJob, llm: FakeLLM | None = None, **services: Any) -> dict:
    fake = FakeSearxng(total=0).services(
        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)) if llm else None)
    return asyncio.run(parse(upload, parse_job, replaced(fake, **services)))


def test_a_pdf_becomes_a_document_named_by_its_file() -> None:
    doc = run(Upload("wal notes.pdf", "application/pdf", PDF), job())
    assert doc == {"markdown": "Checkpoints move the WAL back into the database.", "metadata": {
        "title": "", "description": "", "url": "upload:///wal%20notes.pdf", "sourceURL": "wal notes.pdf",
        "statusCode": 200, "contentType": "application/pdf", "proxyUsed": "basic"}}


def test_an_html_file_in_every_plain_format() -> None:
    doc = run(Upload("wal.html", None, HTML.encode()), job("markdown", "html", "rawHtml", "links"))
    assert "checkpoint" in doc["markdown"] and "Footer" not in doc["markdown"]  # main content only
    assert doc["rawHtml"] == HTML and "<p>" in doc["html"]
    assert doc["links"] == ["https://sqlite.org/pragma.html"]  # a relative link has nothing to resolve against
    assert doc["metadata"]["title"] == "WAL" and doc["metadata"]["language"] == "en"
    whole = run(Upload("wal.html", None, HTML.encode()), job(main_only=False))
    assert "Footer text" in whole["markdown"]


def test_markdown_and_docx_files_are_markdown_with_their_html() -> None:
    text = "# Release notes\n\nWAL mode is **persistent**."
    doc = run(Upload("notes.md", "text/markdown", text.encode()), job("markdown", "html"))
    assert doc["markdown"] == text and "<strong>persistent</strong>" in doc["html"]
    assert doc["metadata"]["title"] == "Release notes" and doc["metadata"]["contentType"] == "text/markdown"
    docx = run(Upload("wal.docx", None, DOCX), job("markdown", "links"))
    assert docx["markdown"].startswith("# Write-Ahead Logging") and docx["links"] == ["https://www.sqlite.org/pragma.html"]
    assert docx["metadata"]["contentType"] == DOCX_TYPE and docx["metadata"]["title"] == "Write-Ahead Logging"


@pytest.mark.parametrize(("upload", "why"), [
    (Upload("broken.pdf", "application/pdf", b"%PDF-1.7\nnot really a pdf"), "broken.pdf could not be read: "),
    (Upload("fake.docx", None, b"just text"), "fake.docx could not be read: not a DOCX"),
    (Upload("empty.html", None, b"<html><body><script>x()</script></body></html>"),
     "empty.html could not be read: no text could be extracted"),
])
def test_a_file_that_gives_no_text_is_unreadable(upload: Upload, why: str) -> None:
    with pytest.raises(UnreadableFile, match=why):
        run(upload, job())


def test_a_type_wisp_does_not_read_is_unsupported() -> None:
    with pytest.raises(UnsupportedFile):
        run(Upload("photo.png", "image/png", b"\x89PNG\r\n\x1a\n\x00\x00"), job())


def test_a_file_still_being_read_at_the_timeout_is_a_408() -> None:
    with pytest.raises(ScrapeFailed) as failed:
        run(Upload("wal.html", None, HTML.encode()), job(timeout_ms=500), cpu_pool=StuckPool())
    assert (failed.value.status, failed.value.code) == (408, "SCRAPE_TIMEOUT")
    assert "wal.html was still being read at the timeout of 500 ms" in failed.value.message


def test_summary_json_and_question_through_the_llm_and_the_jobs_warnings() -> None:
    llm = FakeLLM('{"title": "WAL"}')
    asks = (PageAsk("summary"), PageAsk("json", {"type": "object"}), PageAsk("question", prompt="When?"))
    doc = run(Upload("wal.pdf", None, PDF), job(asks=asks, warnings=("formats ['images'] were skipped",)), llm)
    assert doc["summary"] == doc["answer"] == '{"title": "WAL"}' and doc["json"] == {"title": "WAL"}
    assert doc["warning"] == "formats ['images'] were skipped"
    assert all("Checkpoints move the WAL" in r["messages"][-1]["content"] for r in llm.requests)
