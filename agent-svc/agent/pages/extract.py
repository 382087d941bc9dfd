"""Stage 3b, extract: a fetched page → its main content as markdown, with title, description, date, language,
and the chunks ranking scores.

trafilatura strips navigation and boilerplate (seed 000 stage 3); `main_only=False` keeps the whole body.
Plain text and markdown pass through, a JSON page is fenced as ```json, PDFs give their text through pypdf,
and a DOCX (an upload to /v2/parse) its paragraphs as markdown (pages/docx.py). `extract_page` is what the
extraction worker processes run, so chunking happens there too, off the event loop.

A page is hostile input. HTML is parsed by lxml's HTML parser (trafilatura's `load_html`), which reads no DTD,
defines no entity and does no XInclude, whatever the page declares (tests/unit/agent/pages/test_extract.py
proves it with a page that names a file and a listener); a PDF's or a DOCX's text is cut at MAX_PDF_CHARS.
Markdown is rendered to HTML (for the `html` format) without the raw HTML it may hold, which is escaped.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace
from urllib.parse import urljoin, urlsplit

import trafilatura
from markdown_it import MarkdownIt
from trafilatura.utils import load_html
from wisp_text.chunking import chunk_text
from wisp_text.markdown import unescaped

from agent.core.dates import parse_iso
from agent.core.pages import Extracted, Extraction, Fetched, Page, PageError
from agent.errors import Degraded
from agent.pages.docx import DOCX_TYPE, UnreadableDocx, read_docx
from agent.pages.fetch import JSON_TYPE, PDF_TYPE

_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([\w-]+)""", re.IGNORECASE)
_MAX_PDF_PAGES = 50
MAX_PDF_CHARS = 5_000_000  # the text of an HTML page at FETCH_MAX_BYTES' default, at most
MARKDOWN_TYPE = "text/markdown"
_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")  # a DOCX's tables are pipe tables


class ExtractionFailed(Degraded):
    pass


def extract_page(fetched: Fetched, how: Extraction) -> Page:
    """The fetched page extracted as asked; never raises: one hostile page fails only itself."""
    if not how.reads(fetched):
        return Page(fetched, error=fetched.error, extraction=how)
    read = fetched  # the page keeps its whole body: a later extraction for a Document reads all of it
    if how.max_bytes is not None and not how.document:
        read = replace(fetched, body=cut(fetched, how.max_bytes))
    try:
        extracted = extract(read, how.main_only, how.document)
    except ExtractionFailed as e:
        return Page(fetched, error=PageError("unextracted", str(e)), extraction=how)
    except Exception as e:  # trafilatura, lxml or pypdf on a hostile page
        return Page(fetched, error=PageError("unextracted", f"extraction failed ({type(e).__name__}: {e})"),
                    extraction=how)
    if how.chunk_chars:
        chunks = chunk_text(unescaped(extracted.markdown), how.chunk_chars, extracted.title)
        extracted = replace(extracted, chunks=tuple(chunks))
    return Page(fetched, extracted, extraction=how)


def extract(fetched: Fetched, main_only: bool = True, document: bool = False) -> Extracted:
    """The text of a successful fetch; raises ExtractionFailed when nothing usable comes out.

    `document` adds what Firecrawl's formats return besides markdown and links (cleaned HTML, raw HTML);
    ranking needs neither, so they are not carried back from the extraction worker for nothing. Links always
    come back: a crawl follows them.
    """
    if _is_pdf(fetched):
        return Extracted(fetched.final_url, _pdf_text(fetched.body))
    if fetched.content_type == DOCX_TYPE:
        return _from_docx(fetched.final_url, fetched.body, document)
    text = decode(fetched.body, fetched.charset)
    if fetched.content_type == "text/plain":
        return Extracted(fetched.final_url, text.strip())
    if fetched.content_type == MARKDOWN_TYPE:
        return _from_markdown(fetched.final_url, text.strip(), document)
    if fetched.content_type == JSON_TYPE:  # as Firecrawl gives a JSON page: its text, fenced in the markdown
        return Extracted(fetched.final_url, f"```json\n{text.strip()}\n```", raw_html=text, html=text)
    return _from_html(fetched.final_url, text, main_only, document)


def outline(fetched: Fetched) -> Extracted:
    """A successful fetch's title, description and links, without its text: what a map reads of a page, a
    fraction of extracting the main content. Raises ExtractionFailed on HTML that does not parse."""
    if _is_pdf(fetched) or fetched.content_type == "text/plain":
        return Extracted(fetched.final_url, "")
    tree = load_html(decode(fetched.body, fetched.charset))
    if tree is None:
        raise ExtractionFailed("the page is not parseable HTML")
    metadata = trafilatura.extract_metadata(tree, default_url=fetched.final_url)
    return Extracted(fetched.final_url, "", title=(metadata.title if metadata else "") or "",
                     description=(metadata.description if metadata else "") or "",
                     links=_links(fetched.final_url, tree.xpath("//a/@href")))


def cut(fetched: Fetched, max_bytes: int) -> bytes:
    """The first `max_bytes` of an HTML or text body; a PDF whole, since a cut one cannot be read."""
    return fetched.body if _is_pdf(fetched) else fetched.body[:max_bytes]


def _is_pdf(fetched: Fetched) -> bool:
    return fetched.content_type == PDF_TYPE or fetched.body.startswith(b"%PDF-")


def warm_up() -> None:
    """Import trafilatura and run it once, so that a fresh worker process does not slow the first search."""
    trafilatura.extract("<html><body><p>" + "Warm-up paragraph. " * 20 + "</p></body></html>")


def decode(body: bytes, declared: str | None) -> str:
    """Bytes → text: the declared charset, else the page's <meta charset>, else UTF-8, bad bytes replaced."""
    for charset in (declared, _meta_charset(body)):
        if charset:
            try:
                return body.decode(charset, errors="replace")
            except LookupError:
                continue
    return body.decode("utf-8", errors="replace")


def _from_html(url: str, page: str, main_only: bool, document: bool) -> Extracted:
    tree = load_html(page)  # parsed once: links and metadata read it, then extraction (which prunes it)
    if tree is None:
        raise ExtractionFailed("the page is not parseable HTML")
    links = _links(url, tree.xpath("//a/@href"))
    metadata = trafilatura.extract_metadata(tree, default_url=url)
    if main_only:
        markdown = trafilatura.extract(tree, url=url, output_format="markdown", include_formatting=True,
                                       include_tables=True, include_links=False, favor_recall=True) or ""
    else:
        markdown = _whole_text(tree)
    if not markdown.strip():
        raise ExtractionFailed("no text could be extracted")
    cleaned = trafilatura.extract(load_html(page), url=url, output_format="html", include_formatting=True,
                                  include_tables=True, include_links=True) if document else None
    return Extracted(
        url=url, markdown=markdown.strip(),
        title=(metadata.title if metadata else "") or "",
        description=(metadata.description if metadata else "") or "",
        published=parse_iso(metadata.date if metadata else None),
        language=(metadata.language if metadata else None) or _html_lang(page),
        raw_html=page if document else "", html=cleaned, links=links,
    )


def _from_docx(url: str, body: bytes, document: bool) -> Extracted:
    try:
        docx = read_docx(body, MAX_PDF_CHARS)
    except UnreadableDocx as e:
        raise ExtractionFailed(str(e)) from None
    if not docx.markdown.strip():
        raise ExtractionFailed("the DOCX holds no text")
    return _from_markdown(url, docx.markdown, document, docx.title)


def _from_markdown(url: str, markdown: str, document: bool, title: str = "") -> Extracted:
    """Markdown as it is, with its first heading as the title (unless given one), its http(s) links, and when
    `document`, its HTML (as both `html` and `raw_html`: there is no other)."""
    tokens = _MARKDOWN.parse(markdown)
    headings = (tokens[n + 1].content for n, token in enumerate(tokens[:-1]) if token.type == "heading_open")
    hrefs = [str(child.attrGet("href") or "") for token in tokens if token.children
             for child in token.children if child.type == "link_open"]
    html = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {}) if document else None
    return Extracted(url, markdown, title=title or next(headings, ""), raw_html=html or "", html=html,
                     links=_links(url, hrefs))


def _whole_text(tree) -> str:
    """Every visible text of the page, navigation and footer included (trafilatura's cleaning drops those)."""
    for element in tree.xpath("//script|//style|//noscript|//template"):
        element.drop_tree()
    return trafilatura.html2txt(tree, clean=False) or ""


class _TextBudgetSpent(BaseException):
    """The PDF's text passed MAX_PDF_CHARS. A BaseException: pypdf reads a form XObject under `except
    Exception`, which would swallow an Exception and read on."""


def _pdf_text(body: bytes) -> str:
    """A PDF's text, its first _MAX_PDF_PAGES pages, cut at MAX_PDF_CHARS: a form XObject drawn thousands of
    times makes 100 MB of text of a 1 KB file, and the text goes back to agent-svc's process whole."""
    from pypdf import PdfReader

    pages: list[str] = []
    shown: list[str] = []  # what pypdf reported of the page being read, for the page that spends the budget
    left = MAX_PDF_CHARS

    def spend(text: str, *_: object) -> None:
        nonlocal left
        shown.append(text)
        left -= len(text)
        if left < 0:
            raise _TextBudgetSpent

    try:
        for page in PdfReader(io.BytesIO(body)).pages[:_MAX_PDF_PAGES]:
            shown.clear()
            pages.append(page.extract_text(visitor_text=spend) or "")
    except _TextBudgetSpent:
        pages.append("".join(shown))
    except Exception as e:  # pypdf raises many kinds on broken files; every one means "unreadable"
        raise ExtractionFailed(f"unreadable PDF: {e}") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())[:MAX_PDF_CHARS]
    if not text:
        raise ExtractionFailed("the PDF holds no text")
    return text


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:4096])
    return match.group(1).decode("ascii") if match else None


def _html_lang(page: str) -> str | None:
    match = re.search(r"<html[^>]*\slang=[\"']?([\w-]+)", page[:4096], re.IGNORECASE)
    return match.group(1) if match else None


def _links(base: str, hrefs: list[str]) -> list[str]:
    """Absolute http(s) links, without fragments, each once."""
    links = (urljoin(base, href.strip()).split("#", 1)[0] for href in hrefs)
    return list(dict.fromkeys(u for u in links if urlsplit(u).scheme in ("http", "https")))
