"""One crawl end to end over a fake site: seeds and sitemaps, scope, robots.txt, depth and limit, failures that
cost only their page, and the vector index failing or busy without costing any page."""

import asyncio
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent.core.crawl_options import CrawlOptions
from agent.core.pages import CacheUse, Fetched, PageError
from agent.index.crawl.crawler import CrawlTools, run_crawl
from agent.index.crawl.scope import url_key
from agent.index.ingest import Ingest
from agent.index.settings import IndexSettings
from agent.pages.workers import WorkerDied
from agent.state.jobs import COMPLETED, RUNNING, QueuedPage
from agent.state.jobs.sqlite import JobStore
from agent.upstream.semantic import SemanticUnavailable

from ...fake_searxng import FakeSearxng, InlinePool
from .test_robots import FakeSite, Served
from .test_sitemaps import urlset

SEED = "https://docs.test/guide/"
URL = "https://docs.test/guide/{}".format


def html(title: str, *links: str) -> str:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (f"<html><head><title>{title}</title></head><body><nav><ul>{anchors}</ul></nav><article>"
            f"<h1>{title}</h1><p>The {title} page explains write-ahead logging, checkpoints and how readers "
            "never block writers.</p></article></body></html>")


SITE: dict[str, str | Served] = {
    "https://docs.test/robots.txt": Served("User-agent: *\nDisallow: /guide/secret.html\n", "text/plain"),
    "https://docs.test/sitemap.xml": Served(urlset(URL("d.html"), "https://other.test/x", URL("a.html")), "text/xml"),
    SEED: html("Guide", "a.html", "b.html", "secret.html", "missing.html", "empty.html", "/blog/", "tag/wal",
               "pic.png", "https://other.test/", "index.html", "#top"),
    URL("a.html"): html("Alpha", "c.html", SEED),
    URL("b.html"): html("Beta", "a.html#usage"),
    URL("c.html"): html("Gamma", "e.html"),
    URL("d.html"): html("Delta"),
    URL("e.html"): html("Epsilon"),
    URL("secret.html"): html("Secret"),
    URL("empty.html"): "<html><head><title>Empty</title></head><body><div></div></body></html>",
}
EVERY_PAGE = {SEED, *(URL(f"{n}.html") for n in "abcde")}


class FakeIndex:
    """semantic-svc's /index/upsert: records every document; the first `busy` calls are refused with 503 (the
    model's queue is full), every call fails with `status` when given; URLs in `unchanged` are already held."""

    def __init__(self, busy: int = 0, status: int | None = None, unchanged: frozenset[str] = frozenset()) -> None:
        self.busy, self.status, self.unchanged = busy, status, unchanged
        self.calls = 0
        self.documents: list[dict[str, Any]] = []

    async def index_upsert(self, documents: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.busy:
            raise SemanticUnavailable("semantic-svc answered /index/upsert with HTTP 503: queue full", 503)
        if self.status is not None:
            raise SemanticUnavailable(f"semantic-svc answered /index/upsert with HTTP {self.status}: boom", self.status)
        self.documents += documents
        urls = [d["url"] for d in documents]
        return {"indexed": [u for u in urls if u not in self.unchanged],
                "unchanged": [u for u in urls if u in self.unchanged],
                "chunks": 2 * sum(u not in self.unchanged for u in urls)}


def services(site: FakeSite, index: FakeIndex, pool: object | None = None, **settings: object) -> CrawlTools:
    base = FakeSearxng(total=0).services(**{"crawl_host_delay_s": 0, "crawl_page_timeout_s": 5, **settings})
    return replace(base.crawl_tools, fetcher=site, cpu_pool=pool or InlinePool(),
                   ingest=Ingest(index, IndexSettings()))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    jobs = JobStore(str(tmp_path / "crawls.sqlite"))
    yield jobs
    jobs.close()


def crawl(store: JobStore, site: FakeSite | None = None, index: FakeIndex | None = None, pool: object | None = None,
          settings: dict[str, object] | None = None, **fields: object) -> tuple[FakeSite, FakeIndex]:
    site, index = site or FakeSite(SITE), index or FakeIndex()
    if store.job("j") is None:
        store.create("j", CrawlOptions(**{"seeds": (SEED,), "limit": 20, **fields}), 60)
    asyncio.run(run_crawl(store.job("j"), services(site, index, pool, **(settings or {})), store))
    return site, index


def done(store: JobStore) -> set[str]:
    return {d["metadata"]["sourceURL"] for d in store.documents("j", 0, 1000, 10**9)}


def test_a_crawl_follows_its_links_in_scope_and_indexes_every_page(store: JobStore) -> None:
    _, index = crawl(store, index=FakeIndex(unchanged=frozenset({URL("d.html")})))
    job = store.job("j")
    assert job.status == COMPLETED
    assert done(store) == EVERY_PAGE  # d.html from the sitemap, e.html three hops down
    assert sorted(d["url"] for d in index.documents) == sorted(EVERY_PAGE)
    assert (job.indexed, job.unchanged, job.chunks, job.not_indexed) == (5, 1, 10, 0)
    errors, blocked = store.errors("j")
    assert blocked == [URL("secret.html")]
    assert {e["url"]: e["code"] for e in errors} == {URL("missing.html"): "SCRAPE_HTTP_ERROR",
                                                     URL("empty.html"): "SCRAPE_FAILED"}
    assert store.counts("j").total == len(EVERY_PAGE) == store.counts("j").completed


def test_each_page_and_robots_txt_is_fetched_once_and_nothing_out_of_scope(store: JobStore) -> None:
    site, _ = crawl(store)
    assert sorted(site.asked) == sorted([
        "https://docs.test/robots.txt", "https://docs.test/sitemap.xml", URL("sitemap.xml"), *EVERY_PAGE,
        URL("missing.html"), URL("empty.html")])  # not secret.html, other.test, /blog/, tag/, pic.png, index.html


def test_pages_are_fetched_with_the_crawls_cache_use_and_robots_txt_and_sitemaps_without(store: JobStore
                                                                                         ) -> None:
    site, _ = crawl(store, max_age_ms=60_000, store_in_cache=False)
    assert {site.cache_uses[url] for url in EVERY_PAGE} == {CacheUse(60_000, store=False)}
    assert site.cache_uses["https://docs.test/robots.txt"] is None and site.cache_uses[URL("sitemap.xml")] is None


def test_documents_carry_the_pages_text_and_firecrawls_metadata(store: JobStore) -> None:
    _, index = crawl(store, formats=("markdown", "links", "summary"))
    [alpha] = [d for d in store.documents("j", 0, 100, 10**9) if d["metadata"]["sourceURL"] == URL("a.html")]
    assert "Alpha page explains write-ahead logging" in alpha["markdown"]
    assert alpha["links"] == [URL("c.html"), SEED] and "summary" not in alpha and "rawHtml" not in alpha
    assert alpha["metadata"]["title"] == "Alpha" and alpha["metadata"]["statusCode"] == 200
    [indexed] = [d for d in index.documents if d["url"] == URL("a.html")]
    assert indexed["title"] == "Alpha" and "readers never block writers" in indexed["text"]


def test_html_formats_extract_the_whole_document(store: JobStore) -> None:
    crawl(store, formats=("rawHtml", "html"), max_depth=0)
    [seed] = store.documents("j", 0, 100, 10**9)
    assert seed["rawHtml"] == SITE[SEED] and "write-ahead logging" in seed["html"] and "markdown" not in seed


def test_max_depth_bounds_the_hops_from_the_seed(store: JobStore) -> None:
    crawl(store, max_depth=1)
    assert done(store) == {SEED, URL("a.html"), URL("b.html"), URL("d.html")}  # sitemap pages are one hop


def test_max_depth_zero_crawls_the_seeds_alone_without_reading_sitemaps(store: JobStore) -> None:
    site = TimedSite(SITE)
    crawl(store, site, max_depth=0, seeds=(SEED, URL("e.html"), URL("d.html")))
    assert done(store) == {SEED, URL("e.html"), URL("d.html")}
    assert not any("sitemap" in url for url in site.asked)
    assert site.asked.count("https://docs.test/robots.txt") == 1  # the seeds visited at once share one read


def test_the_limit_bounds_the_pages_of_a_crawl(store: JobStore) -> None:
    _, index = crawl(store, limit=3)
    assert done(store) == {SEED, URL("d.html"), URL("a.html")}  # the sitemap's pages took the room left
    assert store.counts("j").total == 3 and len(index.documents) == 3


def test_sitemap_only_follows_no_links(store: JobStore) -> None:
    crawl(store, sitemap="only")
    assert done(store) == {SEED, URL("d.html"), URL("a.html")}


def test_sitemap_skip_reads_no_sitemap(store: JobStore) -> None:
    site, _ = crawl(store, sitemap="skip")
    assert done(store) == EVERY_PAGE - {URL("d.html")}
    assert not any("sitemap" in url for url in site.asked)


def test_ignore_robots_crawls_what_robots_txt_blocks(store: JobStore) -> None:
    crawl(store, ignore_robots=True)
    assert URL("secret.html") in done(store) and store.errors("j")[1] == []


def test_a_busy_index_is_tried_again_and_the_page_is_indexed(store: JobStore,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent.index.ingest.RETRY_PAUSES_S", (0.0, 0.0, 0.0))
    _, index = crawl(store, index=FakeIndex(busy=3), max_depth=0)
    job = store.job("j")
    assert index.calls == 4 and [d["url"] for d in index.documents] == [SEED]
    assert (job.indexed, job.not_indexed, job.index_error) == (1, 0, None)


def test_an_index_busy_past_every_retry_leaves_the_page_done_and_not_indexed(
        store: JobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agent.index.ingest.RETRY_PAUSES_S", (0.0, 0.0, 0.0))
    _, index = crawl(store, index=FakeIndex(busy=4), max_depth=0)
    assert index.calls == 4 and done(store) == {SEED}
    assert store.job("j").not_indexed == 1


def test_an_index_failing_costs_no_page_and_is_counted(store: JobStore) -> None:
    _, index = crawl(store, index=FakeIndex(status=500))
    job = store.job("j")
    assert job.status == COMPLETED and done(store) == EVERY_PAGE
    assert index.calls == len(EVERY_PAGE)  # a 500 is not worth another try
    assert (job.indexed, job.chunks, job.not_indexed) == (0, 0, len(EVERY_PAGE))
    assert "HTTP 500" in job.index_error


class FailingPool(InlinePool):
    """Extraction that takes 0.1 s on one page (past a short page timeout) and loses its worker on another."""

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        fetched: Fetched = args[0]
        if fetched.url.endswith("hangs.html"):
            await asyncio.sleep(0.1)
        if fetched.url.endswith("dies.html"):
            raise WorkerDied("the extraction worker died")
        return await super().run(fn, *args)


def test_each_failure_is_its_pages_own_with_a_firecrawl_code(store: JobStore) -> None:
    pages = {**SITE, URL("hangs.html"): html("Hangs"), URL("dies.html"): html("Dies")}
    site = FakeSite(pages, errors={URL("private.html"): PageError("blocked", "blocked: 10.0.0.1 is a private address"),
                                   URL("slow.html"): PageError("timeout", "still loading at the deadline")})
    seeds = (SEED, *(URL(f"{name}.html") for name in ("private", "slow", "hangs", "dies")))
    crawl(store, site, pool=FailingPool(), settings={"crawl_page_timeout_s": 0.05}, seeds=seeds, max_depth=0)
    errors = {e["url"]: (e["code"], e["error"]) for e in store.errors("j")[0]}
    assert errors == {
        URL("private.html"): ("SCRAPE_BLOCKED", "blocked: 10.0.0.1 is a private address"),
        URL("slow.html"): ("SCRAPE_TIMEOUT", "still loading at the deadline"),
        URL("hangs.html"): ("SCRAPE_TIMEOUT", "still extracting at the deadline"),
        URL("dies.html"): ("SCRAPE_FAILED", "the extraction worker died"),
    }
    assert done(store) == {SEED} and store.job("j").status == COMPLETED


def test_a_page_past_its_extraction_timeout_is_cancelled_and_frees_its_slot(store: JobStore) -> None:
    class SlowFirstPool(InlinePool):
        """The first extraction would take 60 s, far past the page timeout."""

        def __init__(self) -> None:
            self.cancelled: list[str] = []

        async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
            try:
                await asyncio.sleep(60 if args[0].url == SEED else 0.0)
            except asyncio.CancelledError:  # the real pool kills the worker here
                self.cancelled.append(args[0].url)
                raise
            return await super().run(fn, *args)

    pool = SlowFirstPool()
    started = time.monotonic()
    crawl(store, pool=pool, settings={"crawl_page_timeout_s": 1.0}, seeds=(SEED, URL("a.html")), sitemap="skip",
          max_depth=0)
    assert pool.cancelled == [SEED] and time.monotonic() - started < 30
    assert done(store) == {URL("a.html")}  # and waiting for a slot did not count as its extraction time


def test_waiting_for_an_extraction_slot_is_not_extraction_time(store: JobStore) -> None:
    class SteadyPool(InlinePool):
        async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
            await asyncio.sleep(0.3)  # each extraction well within the timeout, five of them well past it
            return await super().run(fn, *args)

    seeds = (SEED, *(URL(f"{n}.html") for n in "abcd"))
    # one extraction slot (EXTRACT_WORKERS=2 leaves one for searches): the five take turns
    crawl(store, pool=SteadyPool(), settings={"crawl_page_timeout_s": 1.0}, seeds=seeds,
          sitemap="skip", max_depth=0)
    assert done(store) == set(seeds) and store.errors("j") == ([], [])


def test_a_bug_in_a_visit_fails_the_crawl_loudly(store: JobStore) -> None:
    class BuggyPool(InlinePool):
        async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
            raise RuntimeError("a bug")

    with pytest.raises(RuntimeError, match="a bug"):
        crawl(store, pool=BuggyPool())
    assert store.job("j").status == RUNNING  # the manager marks it failed with the error


def test_a_resumed_crawl_requeues_its_unfinished_pages_and_does_not_seed_again(store: JobStore) -> None:
    store.create("j", CrawlOptions(seeds=(SEED,), limit=20, max_depth=1), 60)
    store.add_pages("j", [(url_key(SEED), SEED, 0), (url_key(URL("b.html")), URL("b.html"), 1)], 20)
    store.mark_seeded("j")
    store.take("j", 1)  # the seed was being fetched when agent-svc stopped
    site, _ = crawl(store)
    assert done(store) == {SEED, URL("b.html"), URL("a.html")}  # the seed's links at depth 1, a.html among them
    assert not any("sitemap" in url for url in site.asked)
    assert store.job("j").status == COMPLETED


def test_a_crawl_killed_while_seeding_seeds_again_without_duplicates(store: JobStore) -> None:
    store.create("j", CrawlOptions(seeds=(SEED,), limit=20, max_depth=1), 60)
    store.add_pages("j", [(url_key(SEED), SEED, 0)], 20)  # the seed was queued, the sitemap not yet read
    site, _ = crawl(store)
    assert done(store) == {SEED, URL("a.html"), URL("b.html"), URL("d.html")}
    assert site.asked.count(SEED) == 1 and store.job("j").seeded


def test_a_crawl_stops_at_its_time_limit_counted_from_its_start_and_says_what_it_left(
        store: JobStore, tmp_path: Path) -> None:
    store.create("j", CrawlOptions(seeds=(SEED,), limit=20), 60)
    with sqlite3.connect(tmp_path / "crawls.sqlite") as other:  # started an hour ago, before a restart
        other.execute("UPDATE jobs SET created = created - 3600 WHERE id = 'j'")
    other.close()
    site, _ = crawl(store, settings={"crawl_max_duration_s": 3000})
    job = store.job("j")
    assert job.status == COMPLETED and done(store) == set() and SEED not in site.asked
    assert job.error == "stopped after CRAWL_MAX_DURATION_S (3000 s) with 3 pages not visited"  # seed, d, a


def test_a_crawl_past_its_time_limit_stops_the_visits_in_flight(store: JobStore) -> None:
    class HangingSite(FakeSite):
        async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                               cache_use: CacheUse | None = None) -> Fetched:
            if url == SEED:
                await asyncio.Event().wait()
            return await super().fetch_before(url, deadline, types, cache_use)

    crawl(store, HangingSite(SITE), settings={"crawl_max_duration_s": 0.05}, sitemap="skip")
    assert store.job("j").error == "stopped after CRAWL_MAX_DURATION_S (0.05 s) with 1 pages not visited"


class TimedSite(FakeSite):
    """A site recording how many pages are fetched at once. Until `together` have been fetched at once, each fetch
    waits for the others to start (at most `wait_s`: robots.txt and the seed come alone), so that a loaded machine
    cannot keep them apart; then each takes a moment more, in which a crawl past its bound would start another."""

    def __init__(self, pages: dict[str, str | Served], together: int = 1, wait_s: float = 1.0) -> None:
        super().__init__(pages)
        self.together, self.wait_s = together, wait_s
        self.inside = self.peak = 0

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None) -> Fetched:
        self.inside += 1
        self.peak = max(self.peak, self.inside)
        waits_until = time.monotonic() + self.wait_s
        while self.peak < self.together and time.monotonic() < waits_until:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)
        self.inside -= 1
        return await super().fetch_before(url, deadline, types, cache_use)


@pytest.mark.parametrize(("max_concurrency", "peak"), [(1, 1), (None, 4)])
def test_max_concurrency_bounds_the_pages_fetched_at_once(store: JobStore, max_concurrency: int | None,
                                                          peak: int) -> None:
    site = TimedSite(SITE, together=peak)
    crawl(store, site, settings={"crawl_concurrency": 4, "crawl_host_concurrency": 8},
          max_concurrency=max_concurrency, sitemap="skip")
    assert site.peak == peak and done(store) == EVERY_PAGE - {URL("d.html")}


def test_a_batch_scrapes_its_urls_alone_as_scrape_would(store: JobStore) -> None:
    seeds = (SEED, URL("secret.html"), URL("missing.html"), URL("empty.html"), URL("gone.html"))
    site = FakeSite({**SITE, URL("gone.html"): Served(html("Gone", "a.html"), status=410)})
    site, index = crawl(store, site, seeds=seeds, kind="batch", max_depth=0, sitemap="skip", ignore_robots=True,
                        dedupe_similar=False, formats=("markdown",))
    assert sorted(site.asked) == sorted(seeds)  # no robots.txt, no sitemap, no link followed
    assert index.calls == 0 and store.job("j").indexed == 0  # nothing into the vector index
    documents = {d["metadata"]["sourceURL"]: d for d in store.documents("j", 0, 100, 10**9)}
    assert set(documents) == set(seeds) and "Secret page" in documents[URL("secret.html")]["markdown"]
    missing = documents[URL("missing.html")]  # the site's answer, a Document as /v2/scrape gives it
    assert missing["metadata"]["statusCode"] == 404 and missing["markdown"] == "not found"
    gone = documents[URL("gone.html")]  # an error page's content too, as /v2/scrape gives it
    assert gone["metadata"]["statusCode"] == 410 and "Gone page explains" in gone["markdown"]
    assert "error" in documents[URL("empty.html")]["metadata"] and store.errors("j") == ([], [])


def test_a_crawl_takes_an_error_page_as_failed_and_follows_none_of_its_links(store: JobStore) -> None:
    site = FakeSite({SEED: html("Guide", "gone.html"), URL("gone.html"): Served(html("Gone", "a.html"), status=410),
                     URL("a.html"): html("Alpha")})
    crawl(store, site, sitemap="skip")
    assert done(store) == {SEED} and URL("a.html") not in site.asked
    assert {e["url"]: e["code"] for e in store.errors("j")[0]} == {URL("gone.html"): "SCRAPE_HTTP_ERROR"}


def test_a_batchs_failures_without_a_page_are_its_errors(store: JobStore) -> None:
    site = FakeSite(SITE, errors={URL("slow.html"): PageError("timeout", "still loading at the deadline")})
    crawl(store, site, seeds=(SEED, URL("slow.html")), kind="batch", max_depth=0, sitemap="skip")
    assert {e["url"]: e["code"] for e in store.errors("j")[0]} == {URL("slow.html"): "SCRAPE_TIMEOUT"}


def test_a_batchs_page_timeout_is_its_scrapes(store: JobStore) -> None:
    class Deadlines(FakeSite):
        async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                               cache_use: CacheUse | None = None) -> Fetched:
            self.left = deadline - time.monotonic()
            return await super().fetch_before(url, deadline, types)

    site = Deadlines(SITE)
    crawl(store, site, seeds=(SEED,), kind="batch", max_depth=0, sitemap="skip", page_timeout_s=60)
    assert 30 < site.left <= 60  # the scrape's 60 s less the moments before the fetch, not the crawls' 5 s


def test_pages_appended_as_a_job_ends_are_visited_before_it_completes(tmp_path: Path) -> None:
    class AppendsAtTheEnd(JobStore):
        """Appends a page (appendToId) just after the job first found its queue empty, before it completes."""

        appended = False

        def take(self, job_id: str, count: int) -> list[QueuedPage]:
            taken = super().take(job_id, count)
            if not taken and not self.appended:
                self.appended = True
                self.append(job_id, [(url_key(URL("a.html")), URL("a.html"), 0)], 20)
            return taken

    store = AppendsAtTheEnd(str(tmp_path / "crawls.sqlite"))
    crawl(store, seeds=(SEED,), kind="batch", max_depth=0, sitemap="skip")
    assert done(store) == {SEED, URL("a.html")} and store.job("j").status == COMPLETED
    store.close()
