"""Parse one HTML page into what the thin search engine indexes: title, headings, text, dates, images."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from datetime import date, datetime
from html.parser import HTMLParser
from pathlib import Path

_SKIPPED_TAGS = {"script", "style", "noscript", "template", "head"}
_HEADING_TAGS = {"h1", "h2", "h3"}
_PARAGRAPH_ENDERS = {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table", "pre", "blockquote"}
_BLOCK_TAGS = {"p", "div", "li", "td", "th", "tr", "br", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "dt", "dd"}
_DATE_META = {"article:published_time", "date", "dc.date", "dcterms.date", "dcterms.created", "pubdate"}
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_RELEASE_DATE = re.compile(r"Release date:\s*([A-Z][a-z]+ \d{1,2}, \d{4}|\d{4}-\d{2}-\d{2})")


@dataclass
class Image:
    src: str  # as written in the page, relative to it
    alt: str
    width: int | None
    height: int | None


@dataclass
class Page:
    title: str = ""
    heads: list[str] = field(default_factory=list)
    body: str = ""
    description: str = ""
    paragraphs: list[str] = field(default_factory=list)
    published: date | None = None
    images: list[Image] = field(default_factory=list)


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._skip_depth = 0
        self._in_title = False
        self._heading: list[str] | None = None
        self._paragraph: list[str] | None = None
        self._body: list[str] = []
        self._meta: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if tag in _PARAGRAPH_ENDERS:
            self._close_paragraph()  # many hand-written pages never close their <p>
        if tag == "title":
            self._in_title = True
        elif tag == "meta":
            key = (attributes.get("name") or attributes.get("property") or "").lower()
            if key:
                self._meta[key] = attributes.get("content", "")
        elif tag == "body":
            self._skip_depth = 0  # tolerate a missing </head>
        elif tag in _SKIPPED_TAGS:
            self._skip_depth += 1
        elif tag in _HEADING_TAGS:
            self._heading = []
        elif tag == "p":
            self._paragraph = []
        elif tag == "img" and attributes.get("src"):
            self.page.images.append(
                Image(attributes["src"], attributes.get("alt", "").strip(),
                      _int_or_none(attributes.get("width")), _int_or_none(attributes.get("height")))
            )
        if tag in _BLOCK_TAGS:
            self._body.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _HEADING_TAGS and self._heading is not None:
            self.page.heads.append(_squash("".join(self._heading)))
            self._heading = None
        elif tag == "p":
            self._close_paragraph()
        if tag in _BLOCK_TAGS:
            self._body.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.page.title += data
            return
        if self._skip_depth:
            return
        self._body.append(data)
        if self._heading is not None:
            self._heading.append(data)
        if self._paragraph is not None:
            self._paragraph.append(data)

    def _close_paragraph(self) -> None:
        if self._paragraph is not None:
            self.page.paragraphs.append(_squash("".join(self._paragraph)))
            self._paragraph = None

    def result(self) -> Page:
        self._close_paragraph()
        page = self.page
        page.title = _squash(page.title)
        page.body = "\n".join(line for line in (_squash(x) for x in "".join(self._body).split("\n")) if line)
        page.description = _squash(self._meta.get("description", ""))
        page.published = _published_date(self._meta, page.title, page.body)
        return page


def parse_page(html: str) -> Page:
    """Parse HTML leniently: a malformed page yields what could be read, never an exception."""
    parser = _PageParser()
    try:
        parser.feed(html)
        parser.close()
    except (AssertionError, ValueError):
        pass
    return parser.result()


def image_size(path: Path) -> tuple[int, int] | None:
    """Width and height from a GIF, PNG or JPEG header, or None."""
    try:
        with path.open("rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return None
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return struct.unpack("<HH", head[6:10])
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", head[16:24])
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def _published_date(meta: dict[str, str], title: str, body: str) -> date | None:
    for key in _DATE_META:
        if meta.get(key) and (found := _ISO_DATE.search(meta[key])):
            return _to_date(found.group(0))
    if found := _RELEASE_DATE.search(body[:5000]):
        return _to_date(found.group(1))
    if found := _ISO_DATE.search(title):
        return _to_date(found.group(0))
    return None


def _to_date(text: str) -> date | None:
    for fmt in ("%Y-%m-%d", "%B %d, %Y"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _squash(text: str) -> str:
    return " ".join(text.split())
