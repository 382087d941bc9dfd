"""What a request knows of one page: how it was fetched, how it was extracted, and the text that came out (or
why none did). The values every stage from fetching to answering passes along."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from wisp_text.chunking import Chunk

from agent.core.browsing import Rendered

FetchOutcome = Literal["ok", "blocked", "timeout", "http_error", "too_large", "unsupported_type",
                       "too_many_redirects", "connect_error", "error"]


FailureKind = Literal["timeout", "dns", "blocked", "http", "tls", "unsupported", "unreachable", "unextracted",
                      "action"]

# failures where the site still answered with a page (an error status, or a page without text in it): a scrape
# gives a Document of such a page, with its statusCode; the other failures leave nothing to show
_ANSWERED: frozenset[FailureKind] = frozenset({"http", "unextracted"})

CacheState = Literal["hit", "miss"]  # Firecrawl's metadata.cacheState: set only when the cache was asked


@dataclass(frozen=True)
class CacheUse:
    """How a request uses the page cache (Firecrawl's `maxAge` and `storeInCache`): a kept copy younger than
    `max_age_ms` is served instead of fetching (0: always fetch; None: the service's DEFAULT_MAX_AGE_MS), and
    what is fetched is kept when `store` (reading does not depend on it, as in Firecrawl)."""

    max_age_ms: int | None = None
    store: bool = True


SERVICE_CACHE_USE = CacheUse()  # of a request that names neither: the service's DEFAULT_MAX_AGE_MS, and keep pages


@dataclass(frozen=True)
class PageError:
    """Why a page has no text, set where it failed: one vocabulary for /v2/scrape's statuses, a crawl's error
    codes and a Document's status. `timeout`: a deadline came first; `dns`: the host does not resolve;
    `blocked`: the SSRF guard refused it; `http`: the site answered an error status; `tls`: no secure
    connection; `unsupported`: not a page Wisp reads; `unreachable`: any other fetch failure; `unextracted`:
    fetched, but no text came out of it; `action`: one of the request's browser actions failed."""

    kind: FailureKind
    detail: str

    def __str__(self) -> str:
        return self.detail


@dataclass
class Fetched:
    """One fetch: the body on success, else `error` (and the HTTP status when there was one)."""

    url: str  # as asked
    final_url: str
    status: int | None = None
    content_type: str = ""
    body: bytes = b""
    charset: str | None = None
    error: PageError | None = None
    outcome: FetchOutcome = "ok"  # the fetch metric's label: finer than the error's kind (redirects, size)
    cache_state: CacheState | None = None
    cached_at: datetime | None = None  # when a page served from the cache was fetched
    rendered: Rendered | None = None  # set when the browser made the body (pages/rendering.py)
    unrendered: str | None = None  # why a page that needed the browser has the HTTP fetch's body instead
    supplied: bool = False  # the page's text came with its search result (an extra source's): nothing was fetched

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Extracted:
    url: str
    markdown: str
    title: str = ""
    description: str = ""
    published: datetime | None = None
    language: str | None = None
    raw_html: str = ""
    html: str | None = None  # cleaned main content, only when asked for
    links: list[str] = field(default_factory=list)
    chunks: tuple[Chunk, ...] = ()  # of `markdown`, when ranking asked for them


@dataclass(frozen=True)
class Extraction:
    """How a page was extracted: ranking wants main content in chunks, scrapeOptions may want more."""

    main_only: bool = True
    document: bool = False  # Firecrawl's other formats (cleaned HTML, raw HTML, links) too
    chunk_chars: int | None = None  # chunk the text for ranking, at this size
    # ranking reads no further into a page than this: extraction takes about 1.5 s per MB of HTML, and a 5.8 MB
    # all-in-one manual held hybrid answers for 8 s (a Document always gets its whole page)
    max_bytes: int | None = None
    # a page the site answered with an error status is extracted too (a scrape returns a 404 page's content
    # with its statusCode, as Firecrawl does); searches and crawls take such a page as failed
    error_pages: bool = False

    def served_by(self, done: Extraction) -> bool:
        """Whether a page extracted as `done` serves this: document formats and chunks may come extra."""
        return (done.main_only == self.main_only and (done.document or not self.document)
                and (done.error_pages or not self.error_pages)
                and (self.chunk_chars is None or done.chunk_chars == self.chunk_chars))

    def reads(self, fetched: Fetched) -> bool:
        """Whether this extraction has text to read in `fetched`."""
        return fetched.ok or (self.error_pages and fetched.error is not None and fetched.error.kind == "http"
                              and bool(fetched.body))


@dataclass(frozen=True)
class Page:
    """A result's page as one request fetched it: extracted text, or why there is none."""

    fetched: Fetched
    extracted: Extracted | None = None
    error: PageError | None = None
    extraction: Extraction | None = None  # None: fetched, not extracted yet

    @property
    def failure(self) -> FailureKind:
        """Why it has no text (`unextracted` when neither the fetch nor the extraction said)."""
        error = self.error or self.fetched.error
        return error.kind if error else "unextracted"

    @property
    def answered(self) -> bool:
        """Whether the site answered with a page, text or not: /v2/scrape and a batch give a Document of it."""
        return self.extracted is not None or self.failure in _ANSWERED

    def serves(self, wanted: Extraction) -> bool:
        """Whether this page needs no new extraction for `wanted` (a fetch with nothing to read never does)."""
        return self.extraction is not None and (not wanted.reads(self.fetched) or wanted.served_by(self.extraction))
