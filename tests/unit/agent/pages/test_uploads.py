"""An upload as the fetch a page would have been (pages/uploads.py): its type from its name, its declared type,
then its first bytes; what Wisp does not read, and what holds nothing it can, refused with a clear 400."""

import os

import pytest

from agent.core.pages import Fetched
from agent.errors import UnreadableFile, UnsupportedFile
from agent.pages.docx import DOCX_TYPE
from agent.pages.uploads import FILE_TYPES, SUPPORTED, Upload, uploaded

from .test_docx import ARTICLE as DOCX
from .test_extract import one_page, pdf, stream

PDF = pdf(*one_page(stream(b"BT /F1 12 Tf 72 720 Td (Checkpoints move the WAL back) Tj ET")))
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def content_type(filename: str, body: bytes, declared: str | None = None) -> str:
    return uploaded(Upload(filename, declared, body)).content_type


@pytest.mark.parametrize(("filename", "declared", "body", "expected"), [
    ("report.pdf", "application/pdf", PDF, "application/pdf"),
    ("Report.PDF", None, PDF, "application/pdf"),  # the extension, whatever its case
    ("notes.docx", None, DOCX, DOCX_TYPE),
    ("page.htm", None, b"<p>hi</p>", "text/html"),
    ("page.xhtml", None, b"<p>hi</p>", "text/html"),
    ("README.md", "text/markdown", b"# Hi", "text/markdown"),
    ("notes.txt", "text/plain; charset=utf-8", b"hi", "text/plain"),
    # no known extension: the declared type
    ("upload", "application/pdf", PDF, "application/pdf"),
    ("upload", "TEXT/X-MARKDOWN", b"# Hi", "text/markdown"),
    ("upload", DOCX_TYPE, DOCX, DOCX_TYPE),
    # neither: the first bytes (firecrawl-py sends application/octet-stream for raw bytes without a name)
    ("upload", "application/octet-stream", PDF, "application/pdf"),
    ("blob", None, DOCX, DOCX_TYPE),
    ("page", None, b"\xef\xbb\xbf\n  <!DOCTYPE html><html><body>hi</body></html>", "text/html"),
    ("data.csv", "text/csv", b"id,name\n1,wal\n", "text/plain"),
    # the extension wins over a declared type
    ("page.html", "text/plain", b"<p>hi</p>", "text/html"),
])
def test_the_type_comes_from_the_name_then_the_declared_type_then_the_bytes(filename: str, declared: str | None,
                                                                            body: bytes, expected: str) -> None:
    assert content_type(filename, body, declared) == expected


def test_an_upload_is_a_successful_fetch_of_its_bytes_at_an_address_no_link_resolves_against() -> None:
    fetched = uploaded(Upload("my notes.txt", "text/plain; charset=ISO-8859-1", "café".encode("latin-1")))
    assert fetched == Fetched("upload:///my%20notes.txt", "upload:///my%20notes.txt", 200, "text/plain",
                              "café".encode("latin-1"), "ISO-8859-1")
    assert fetched.ok


@pytest.mark.parametrize(("filename", "declared", "body"), [
    ("photo.png", "image/png", PNG),
    ("photo", "image/png", b"text-looking bytes of an image"),  # an image is no text, whatever its bytes
    ("photo.png", "application/octet-stream", PNG),
    ("sheet.xlsx", None, b"PK\x03\x04\x14\x00xl/workbook.xml"),  # a ZIP archive that is not a DOCX
    ("old.doc", "application/msword", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1\x00\x00"),
    ("junk", None, os.urandom(4096) + b"\x00"),
])
def test_what_wisp_does_not_read_is_unsupported_naming_what_it_reads(filename: str, declared: str | None,
                                                                     body: bytes) -> None:
    with pytest.raises(UnsupportedFile) as refused:
        uploaded(Upload(filename, declared, body))
    assert refused.value.status == 400 and refused.value.code == "UNSUPPORTED_FILE_TYPE"
    assert filename in refused.value.message and SUPPORTED in refused.value.message


@pytest.mark.parametrize(("upload", "why"), [
    (Upload("empty.pdf", "application/pdf", b""), "empty.pdf is empty"),
    (Upload("notes.txt", "text/plain", b"text\x00with a NUL"), "notes.txt is not text: it holds binary data"),
    (Upload("page.html", None, bytes(range(1, 32)) * 10), "page.html is not html: it holds binary data"),
])
def test_an_empty_file_or_binary_data_in_a_text_type_is_unreadable(upload: Upload, why: str) -> None:
    with pytest.raises(UnreadableFile, match=why) as refused:
        uploaded(upload)
    assert refused.value.status == 400 and refused.value.code == "PARSE_UNREADABLE_FILE"


def test_every_type_is_known_by_one_name_and_its_extensions_once() -> None:
    extensions = [extension for kind in FILE_TYPES for extension in kind.extensions]
    assert len({kind.name for kind in FILE_TYPES}) == len(FILE_TYPES) and len(set(extensions)) == len(extensions)
    assert all(extension.startswith(".") and extension == extension.lower() for extension in extensions)
