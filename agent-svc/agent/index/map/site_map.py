"""A map: the URLs of one site, in seconds, as Firecrawl's /v2/map lists them (api.map_wire is its wire format).

The sources, asked at once and all bound by the map's deadline: the sitemaps robots.txt names (else /sitemap.xml),
the seed page's links and those of the first pages it links to (MAP_MAX_PAGES fetched in all, at most
CRAWL_HOST_CONCURRENCY at once per host, counted with every crawl's, batch's and map's, none that robots.txt
closes), and SearXNG's `site:` results, which also give titles and descriptions. Every fetch passes the SSRF guard
(the Fetcher); every link passes the crawl's scope (the seed's host, its subdomains when asked, below the seed's
folder, pages only; not its junk filter: a map lists a site's blog and changelog too) and is one entry per page
(url_key).

A caller that reads the pages next (/v2/extract's `/*` URLs) passes its request's pages as the map's reader,
so that no page is fetched twice; the map outlines a page its reader could not extract.

Order: with `search`, BM25 over each link's URL words, title and description, best first (ties keep their
place); without it, the seed, the sitemaps' order, the pages' links, then SearXNG's. What has arrived by the
deadline is the answer, with a warning that names what had not.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from wisp_text.bm25 import bm25_scores

from agent.core.context import RESPONSE_RESERVE_S
from agent.core.crawl_options import CrawlOptions
from agent.core.pages import Page
from agent.index.crawl.robots import RobotsCache
from agent.index.crawl.scope import Scope, url_key
from agent.index.crawl.sitemaps import sitemap_candidates, sitemap_urls
from agent.pages.extract import outline
from agent.pages.rendering import PageFetcher
from agent.pages.workers import WorkerDied, WorkerPool
from agent.retrieval.searxng_results import retrieve
from agent.retrieval.translation import ResultFilter, SourcePlan
from agent.state.politeness import Gate
from agent.upstream.searxng import SearxngClient

Sitemap = Literal["include", "skip", "only"]
# where each source's links go when no `search` orders them (the seed page's own entry goes first of all)
_SITEMAP, _SEED, _PAGES, _SEARXNG = 0, 1, 2, 1_000_000
# how a map reads a page by a deadline (time.monotonic()): fetched, and extracted when the reader's caller wants
# the text too; the map needs its title, description and links
PageReader = Callable[[str, float], Awaitable[Page]]


@dataclass(frozen=True)
class MapJob:
    url: str
    limit: int
    timeout_s: float
    search: str | None = None
    sitemap: Sitemap = "include"
    subdomains: bool = True
    ignore_query: bool = True
    warnings: tuple[str, ...] = ()
    external: bool = False  # links to other sites, in any folder, are listed (extract's allowExternalLinks)


@dataclass(frozen=True)
class MapLink:
    url: str
    title: str | None = None
    description: str | None = None


@dataclass(frozen=True)
class SiteMap:
    links: list[MapLink]
    warnings: list[str]


@dataclass(frozen=True)
class _Found:
    """What one source gave, and where its links go in the map's order."""

    place: int
    links: list[MapLink]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class MapTools:
    """What a map uses of the process's services (`Services.map_tools`)."""

    max_pages: int  # MAP_MAX_PAGES: pages fetched for their links
    fetcher: PageFetcher
    cpu_pool: WorkerPool
    gate: Gate  # the process's per-host turns: crawls, batch scrapes and maps are polite to a host together
    searxng: SearxngClient


@dataclass(frozen=True)
class _Run:
    """What one map's sources share: its tools, deadline, scope, robots.txt and the process's per-host turns."""

    job: MapJob
    tools: MapTools
    deadline: float  # the sources' (time.monotonic())
    ends: float  # the request's timeout: the ordering by `search` may take what the sources left of it
    scope: Scope
    robots: RobotsCache
    gate: Gate
    read: PageReader | None  # None: the map fetches its pages itself

    def left_s(self) -> float:
        return max(self.deadline - time.monotonic(), 0.0)

    async def page(self, url: str) -> Page:
        if self.read is not None:
            return await self.read(url, self.deadline)
        return Page(await self.tools.fetcher.fetch_before(url, self.deadline))


async def map_site(job: MapJob, tools: MapTools, read: PageReader | None = None) -> SiteMap:
    """The site's links within `job`'s scope, ordered and cut at its limit; never more than its timeout. The
    pages it reads for their links go through `read` when given."""
    started = time.monotonic()
    options = CrawlOptions(seeds=(job.url,), limit=job.limit, subdomains=job.subdomains, external=job.external,
                           ignore_query=job.ignore_query)
    run = _Run(job, tools, started + max(job.timeout_s - RESPONSE_RESERVE_S, 0.1), started + job.timeout_s,
               Scope(options, junk=""), RobotsCache(tools.fetcher, job.timeout_s),
               tools.gate, read)
    found, unfinished = await _gathered(run, tools.max_pages)
    warnings = list(job.warnings) + [w for f in found for w in f.warnings]
    if unfinished:
        warnings.append(f"the map's timeout of {job.timeout_s:g} s ran out before {', '.join(unfinished)} "
                        "answered; the links are what had arrived")
    # in a thread: 200,000 links through the scope take seconds of CPU, which would stall every other request
    links = await asyncio.to_thread(_merged, found, run.scope, job.ignore_query)
    if job.search:
        links, unordered = await _ordered(run, links, job.search)
        warnings += unordered
    links = links[:job.limit]
    if len(links) <= 1 < job.limit and urlsplit(job.url).path not in ("", "/"):
        parts = urlsplit(job.url)
        warnings.append(f"Only {len(links)} result(s) found. For broader coverage, try mapping the base domain: "
                        f"{parts.scheme}://{parts.netloc}")
    return SiteMap(links, warnings)


def searched_text(link: MapLink) -> str:
    """What a map's `search` is matched against: the link's URL (its words), title and description."""
    return f"{link.url} {link.title or ''} {link.description or ''}"


def ranked(links: list[MapLink], scores: list[float]) -> list[MapLink]:
    """`links` best first by their `scores`; ties keep their order, so links without a match follow in the
    order they had."""
    return [links[i] for i in sorted(range(len(links)), key=lambda i: -scores[i])]


async def _ordered(run: _Run, links: list[MapLink], search: str) -> tuple[list[MapLink], list[str]]:
    """`links` ranked by BM25 for `search`, scored in the worker pool (100,000 links take about 3 s of CPU) and
    sorted in a thread; in their sources' order, and a warning, when the request's timeout comes first or the
    worker dies."""
    try:
        async with asyncio.timeout_at(run.ends):
            scores = await run.tools.cpu_pool.run(bm25_scores, search, [searched_text(link) for link in links])
            return await asyncio.to_thread(ranked, links, scores), []
    except (TimeoutError, WorkerDied) as e:
        why = f"the worker died: {e}" if isinstance(e, WorkerDied) else "the timeout came first"
        return links, [f"the links are in their sources' order, not ordered by the search ({why})"]


async def _gathered(run: _Run, max_pages: int) -> tuple[list[_Found], list[str]]:
    """Every source's finds by the deadline, and the names of the sources still running then (cancelled)."""
    sources: dict[str, Coroutine[Any, Any, _Found]] = {}
    if run.job.sitemap != "skip":
        sources["the sitemaps"] = _sitemap_links(run)
    if run.job.sitemap != "only":
        sources[run.job.url] = _page_links(run, run.job.url, _SEED)
        sources["SearXNG"] = _searxng_links(run)
    tasks = {asyncio.create_task(coroutine): name for name, coroutine in sources.items()}
    found: list[_Found] = []
    try:
        while tasks:
            done, _ = await asyncio.wait(tasks, timeout=run.left_s(), return_when=asyncio.FIRST_COMPLETED)
            if not done:
                break
            for task in done:
                del tasks[task]
                finds = task.result()
                found.append(finds)
                if finds.place == _SEED:
                    for n, url in enumerate(_next_pages(run, finds, max_pages - 1), 1):
                        tasks[asyncio.create_task(_page_links(run, url, _PAGES + n))] = url
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    named = list(tasks.values())
    unfinished = named[:3] + ([f"{len(named) - 3} more pages"] if len(named) > 3 else [])
    return found, unfinished


async def _sitemap_links(run: _Run) -> _Found:
    named = (await run.robots.of(run.job.url)).sitemaps()
    # sitemap_urls bounds each file's fetch; the deadline bounds them all
    urls = await sitemap_urls(run.tools.fetcher, sitemap_candidates(run.job.url, named), run.job.limit * 2,
                              run.left_s())
    return _Found(_SITEMAP, await asyncio.to_thread(_bare_links, urls))  # 200,000 take a part of a second


def _bare_links(urls: list[str]) -> list[MapLink]:
    return [MapLink(url) for url in urls]


async def _page_links(run: _Run, url: str, place: int) -> _Found:
    """The page's own entry (with its title and description) and its links; nothing when it cannot be read.
    The seed page's own entry goes before every other source's links."""
    seed = place == _SEED
    if not (await run.robots.of(url)).allows(url):
        return _Found(place, [], (f"{url} was not read for its links: robots.txt disallows it",) if seed else ())
    async with run.gate.turn(urlsplit(url).netloc, 0.0):
        page = await run.page(url)
    if not page.fetched.ok:
        return _Found(place, [], (f"{url} could not be read for its links: {page.fetched.error}",) if seed else ())
    try:
        # a reader's extraction has the links too; a page without text (a list of links) has only an outline
        read = page.extracted or await run.tools.cpu_pool.run(outline, page.fetched)
    except Exception as e:  # ExtractionFailed, WorkerDied, or lxml on a hostile page: this page's problem
        return _Found(place, [], (f"{url} could not be read for its links: {e}",) if seed else ())
    own = MapLink(url, read.title or None, read.description or None)
    links = [own, *(MapLink(link) for link in read.links)]
    return _Found(place, links)


async def _searxng_links(run: _Run) -> _Found:
    job, searxng = run.job, run.tools.searxng
    query = f"{job.search} {_site_operator(job.url)}" if job.search else _site_operator(job.url)
    plan = SourcePlan("web", {"q": query, "format": "json", "categories": "general"}, ResultFilter())
    policy = searxng.pages
    [result] = await retrieve([plan], min(job.limit, policy.page_size * policy.max_pages), searxng, run.left_s)
    warnings = [w if isinstance(w, str) else w.warning for w in result.warnings]
    if result.error:
        warnings.append(f"SearXNG's site: search failed ({result.error.message}); the map has the other sources' "
                        "links")
    return _Found(_SEARXNG, [MapLink(h.url, h.title or None, h.content or None) for h in result.hits],
                  tuple(warnings))


def _site_operator(url: str) -> str:
    """`site:` for the seed's host and folder: engines that read a path in it keep to the folder, and the
    others' results outside it fail the scope."""
    parts = urlsplit(url)
    folder = parts.path.rsplit("/", 1)[0] if "." in parts.path.rsplit("/", 1)[-1] else parts.path.rstrip("/")
    return f"site:{parts.netloc.removeprefix('www.')}{folder}"


def _next_pages(run: _Run, seed: _Found, count: int) -> list[str]:
    """The first `count` pages the seed links to within the scope, each page once, the seed not again."""
    keys = {url_key(run.job.url, run.job.ignore_query)}
    pages = []
    for link in seed.links:
        if len(pages) >= count:
            break
        if run.scope.follows(link.url) is None and (key := url_key(link.url, run.job.ignore_query)) not in keys:
            keys.add(key)
            pages.append(link.url)
    return pages


def _merged(found: list[_Found], scope: Scope, ignore_query: bool) -> list[MapLink]:
    """One entry per page in the sources' order, within the scope; a page keeps the first title any source
    gave it."""
    heads = [f.links[:1] for f in found if f.place == _SEED]
    rest = [f.links[1:] if f.place == _SEED else f.links for f in sorted(found, key=lambda f: f.place)]
    entries: dict[str, MapLink] = {}
    for links in [*heads, *rest]:
        for link in links:
            if scope.follows(link.url) is not None:  # first: it also turns away what does not parse
                continue
            url = _shown(link.url, ignore_query)
            key = url_key(url, ignore_query)
            known = entries.get(key)
            if known is None:
                entries[key] = replace(link, url=url)
            elif known.title is None and link.title:
                entries[key] = replace(known, title=link.title, description=known.description or link.description)
    return list(entries.values())


def _shown(url: str, ignore_query: bool) -> str:
    """The URL as the map lists it: without its fragment, and without its query when queries are ignored."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "" if ignore_query else parts.query, ""))
