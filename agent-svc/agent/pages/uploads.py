"""An uploaded file as the page a fetch would have made of it (/v2/parse): its content type from its name, then the
type it was declared with, then its first bytes, so that the one extraction pipeline reads it as it reads a
fetched page. The file types Wisp reads are the table FILE_TYPES."""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote

from agent.core.pages import Fetched
from agent.errors import UnreadableFile, UnsupportedFile
from agent.pages.docx import DOCX_TYPE
from agent.pages.extract import MARKDOWN_TYPE
from agent.pages.fetch import PDF_TYPE

_SNIFFED_BYTES = 8192


@dataclass(frozen=True)
class FileType:
    """A kind of file Wisp reads: the content type extraction knows it by, its extensions and declared types."""

    name: str
    content_type: str
    extensions: tuple[str, ...]
    declared: tuple[str, ...]
    text: bool  # read as text: a body with NUL bytes in it is not one


FILE_TYPES = (
    FileType("pdf", PDF_TYPE, (".pdf",), (PDF_TYPE, "application/x-pdf"), False),
    FileType("docx", DOCX_TYPE, (".docx",), (DOCX_TYPE,), False),
    FileType("html", "text/html", (".html", ".htm", ".xhtml"), ("text/html", "application/xhtml+xml"), True),
    FileType("markdown", MARKDOWN_TYPE, (".md", ".markdown", ".mdown", ".mkd"), (MARKDOWN_TYPE, "text/x-markdown"),
             True),
    FileType("text", "text/plain", (".txt", ".text"), ("text/plain",), True),
)
_BY_EXTENSION = {extension: kind for kind in FILE_TYPES for extension in kind.extensions}
_BY_DECLARED = {declared: kind for kind in FILE_TYPES for declared in kind.declared}
_BY_NAME = {kind.name: kind for kind in FILE_TYPES}
SUPPORTED = ", ".join(extension for kind in FILE_TYPES for extension in kind.extensions)


@dataclass(frozen=True)
class Upload:
    """A file as the client sent it: its name, the content type it was declared with (if any), its bytes."""

    filename: str
    declared_type: str | None
    body: bytes

    @property
    def url(self) -> str:
        """Where the file's Document says it came from: no address a link in it could be resolved against (so
        that its relative links are dropped, as a fetched page's unresolvable ones are)."""
        return f"upload:///{quote(self.filename)}"


def uploaded(upload: Upload) -> Fetched:
    """The upload as a successful fetch of its type; raises UnsupportedFile (not a type Wisp reads) or
    UnreadableFile (empty, or binary where text was promised)."""
    if not upload.body:
        raise UnreadableFile(f"{upload.filename} is empty")
    declared, charset = _media_type(upload.declared_type)
    kind = _BY_EXTENSION.get(os.path.splitext(upload.filename)[1].lower()) or _BY_DECLARED.get(declared)
    if kind is None and not declared.startswith(("image/", "audio/", "video/")):
        kind = _sniffed(upload.body)
    if kind is None:
        raise UnsupportedFile(f"Unsupported upload type ({upload.filename}, {declared or 'no declared type'}). "
                              f"Supported file extensions: {SUPPORTED}")
    if kind.text and _binary(upload.body):
        raise UnreadableFile(f"{upload.filename} is not {kind.name}: it holds binary data")
    return Fetched(upload.url, upload.url, 200, kind.content_type, upload.body, charset)


def _media_type(declared: str | None) -> tuple[str, str | None]:
    """`text/plain; charset=latin-1` → ("text/plain", "latin-1")."""
    media, *parameters = (declared or "").split(";")
    charset = next((value.strip().strip('"') for name, _, value in (p.partition("=") for p in parameters)
                    if name.strip().lower() == "charset"), None)
    return media.strip().lower(), charset or None


def _sniffed(body: bytes) -> FileType | None:
    """The type of a file neither its name nor its declared type tells, from its first bytes."""
    head = body[:_SNIFFED_BYTES]
    if head.startswith(b"%PDF-"):
        return _BY_NAME["pdf"]
    if head.startswith(b"PK\x03\x04"):  # a ZIP archive: a DOCX names its document part in plain bytes
        return _BY_NAME["docx"] if b"word/document.xml" in body else None
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return _BY_NAME["html"]
    return None if _binary(body) else _BY_NAME["text"]


def _binary(body: bytes) -> bool:
    """Whether the file's first bytes are not text: a NUL, or more than one in ten a control character."""
    head = body[:_SNIFFED_BYTES]
    controls = sum(1 for byte in head if byte < 32 and byte not in b"\t\n\r\f\x1b")
    return b"\x00" in head or controls * 10 > len(head)
