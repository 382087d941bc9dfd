"""A page whose text a search source supplied with its result (an extra source's `raw_content`, `text` or
`markdown`): read as it came, chunked for ranking like a fetched page, never fetched."""

from __future__ import annotations

from wisp_text.chunking import chunk_text

from agent.core.hits import Hit
from agent.core.pages import Extracted, Extraction, Fetched, Page


def supplied_page(hit: Hit, how: Extraction) -> Page | None:
    """The hit's supplied text as a page extracted the way `how` chunks; None when it came without text."""
    if not hit.text or not hit.text.strip():
        return None
    chunks = tuple(chunk_text(hit.text, how.chunk_chars, hit.title)) if how.chunk_chars else ()
    fetched = Fetched(hit.url, hit.url, status=200, content_type="text/markdown", supplied=True)
    extracted = Extracted(hit.url, hit.text, title=hit.title, published=hit.published, chunks=chunks)
    return Page(fetched, extracted, extraction=Extraction(how.main_only, chunk_chars=how.chunk_chars))
