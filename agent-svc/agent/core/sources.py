"""Firecrawl's sources as one table of their properties: what SearXNG category serves each, which filters
apply to it, how its results are shaped, fetched, ranked and de-duplicated.

A source this table does not know (Firecrawl passes new ones through) is asked as a SearXNG category of the
same name and treated like web, except that it is neither ranked nor scraped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent.core.hits import Hit


def _page_key(hit: Hit) -> str:
    return hit.url


def _image_key(hit: Hit) -> str:
    # many images share one page, so an image is the same result only when its image is the same
    return hit.img_src or hit.url


@dataclass(frozen=True)
class Source:
    name: str
    searxng_category: str
    shape: Literal["web", "news", "images"]  # the fields of its items in the response
    takes_categories: bool = False  # Firecrawl's categories (github, research, pdf) choose its SearXNG categories
    dated: bool = True  # tbs time filters apply
    localized: bool = True  # lang and country apply
    scraped: bool = False  # scrapeOptions.formats fetch its pages
    ranked: bool = False  # the ranked modes fetch and rank its results
    dedupe_key: Callable[[Hit], str] = _page_key


SOURCES: dict[str, Source] = {
    "web": Source("web", "general", "web", takes_categories=True, scraped=True, ranked=True),
    "news": Source("news", "news", "news", scraped=True),
    "images": Source("images", "images", "images", dated=False, localized=False, dedupe_key=_image_key),
}
DEFAULT_SOURCE = "web"
# Firecrawl's sources that search no web index, so no SearXNG category serves them: each is asked for as an empty
# bucket with this reason (as a category of its name, SearXNG would search its default engines again, and the
# Firecrawl MCP server, which adds alexandria to every search once it has a key, would get each result twice)
_NO_CATALOGUE = "Firecrawl's provider catalogue (Alexandria) has no counterpart in Wisp"
UNSERVED_SOURCES = {"alexandria": _NO_CATALOGUE, "exchange": _NO_CATALOGUE}


def source(name: str) -> Source:
    """The properties of source `name`; an unknown one passes through as a SearXNG category."""
    return SOURCES.get(name) or Source(name, name, "web")
