"""The pages of a site that /v2/extract names with a trailing `/*`: a small, bounded gatherer.

The site's sitemap first (at its root and in the seed's folder), then the seed page's own links, each kept
only when a crawl of the seed would follow it (index.crawl.scope: same host and under the seed's folder unless
includeSubdomains or allowExternalLinks widen it, no navigation pages), the seed itself first. This is the
seam where /v2/map's discovery can take over: same inputs, the same list of URLs out.
"""

from __future__ import annotations

import time

from agent.core.context import SearchContext
from agent.core.pages import Extraction
from agent.index.crawl.options import CrawlOptions
from agent.index.crawl.scope import Scope, url_key
from agent.index.crawl.sitemaps import sitemap_candidates, sitemap_urls
from agent.pages.fetch import Fetcher


async def site_pages(seed: str, limit: int, subdomains: bool, external: bool, main_only: bool,
                     ctx: SearchContext, fetcher: Fetcher, timeout_s: float) -> list[str]:
    """At most `limit` page URLs of the seed's site, the seed first, within `timeout_s`. The seed is loaded
    through the request's pages as it will be read (`main_only`), with its links, so it is fetched once."""
    scope = Scope(CrawlOptions((seed,), limit, subdomains=subdomains, external=external))
    listed = await sitemap_urls(fetcher, sitemap_candidates(seed, []), limit * 4, timeout_s)
    found = [seed, *(url for url in listed if scope.follows(url) is None)]
    if len(_unique(found)) < limit:
        with_links = Extraction(main_only, document=True)
        page = (await ctx.load_pages([seed], with_links, time.monotonic() + timeout_s))[seed]
        links = page.extracted.links if page.extracted is not None else []
        found += [url for url in links if scope.follows(url) is None]
    return _unique(found)[:limit]


def _unique(urls: list[str]) -> list[str]:
    """One URL per page (the crawl's notion: www., http/https, trailing-slash variants are one)."""
    kept: dict[str, str] = {}
    for url in urls:
        kept.setdefault(url_key(url.split("#", 1)[0]), url.split("#", 1)[0])
    return list(kept.values())
