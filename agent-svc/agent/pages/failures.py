"""What went wrong with one page that has no extracted text, read from its fetch and its error (fetch.py,
ssrf.py, pages.py, extract.py and the crawler write them): one vocabulary for /v2/scrape's statuses and a crawl's
error codes."""

from __future__ import annotations

from typing import Literal

from agent.core.pages import Page

Failure = Literal["timeout", "dns", "blocked", "http", "tls", "unsupported", "unreachable", "unextracted"]


def failure(page: Page) -> Failure:
    """`timeout`: the deadline came first; `dns`: the host does not resolve; `blocked`: the SSRF guard refused it;
    `http`: the site answered an error status; `tls`: no secure connection; `unsupported`: not a page Wisp reads;
    `unreachable`: any other fetch failure; `unextracted`: fetched, but no text came out of it."""
    error = page.error or page.fetched.error or ""
    if "at the deadline" in error or "longer than" in error or error.split(":", 1)[0].endswith("Timeout"):
        return "timeout"  # pages.py and the crawler's own deadlines, and httpx's timeouts
    if page.fetched.ok:
        return "unextracted"
    if error.startswith("blocked"):
        return "dns" if "does not resolve" in error else "blocked"
    if page.fetched.status is not None and page.fetched.status >= 400:
        return "http"
    if error.startswith(("unsupported content type", "PDF over")):
        return "unsupported"
    return "tls" if "SSL" in error or "CERTIFICATE" in error else "unreachable"
