"""The crawl manager's rules over the store: a job is its owner's (another client's requests are a 403), one
client's unfinished jobs are capped, and an append to a job past its time limit is refused."""

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.core.crawl_options import BATCH, CRAWL, CrawlOptions
from agent.errors import Forbidden, JobNotFound, TooManyCrawls, WispError
from agent.index.crawl.manager import Crawls
from agent.index.crawl.settings import CrawlSettings
from agent.state.jobs import CANCELLED, COMPLETED
from agent.state.jobs.sqlite import JobStore

from .test_crawler import SEED, SITE, URL, FakeIndex, services
from .test_robots import FakeSite

CRAWL_OPTIONS = CrawlOptions(seeds=("https://docs.test/",), limit=10)
BATCH_OPTIONS = CrawlOptions(seeds=("https://docs.test/a",), limit=10, kind=BATCH)


def run(tmp_path: Path, scenario: Callable[[Crawls, JobStore], Awaitable[None]], **settings: int) -> None:
    """Run `scenario` on a manager over a fresh store (no crawl task runs unless the scenario starts one)."""
    async def main() -> None:
        store = JobStore(str(tmp_path / "crawls.sqlite"))
        crawls = Crawls(SimpleNamespace(settings=CrawlSettings(**settings), cpu_pool=SimpleNamespace(size=2)), store)
        try:
            await scenario(crawls, store)
        finally:
            await crawls.stop()
            store.close()
    asyncio.run(main())


def test_another_clients_batch_or_crawl_is_forbidden_and_its_owner_reaches_it(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        store.create("b", BATCH_OPTIONS, 60, "key:a")
        for reach in (lambda o: crawls.job("b", BATCH, o), lambda o: crawls.status("b", BATCH, 0, 10, 10**6, o),
                      lambda o: crawls.errors("b", BATCH, o), lambda o: crawls.cancel("b", BATCH, o),
                      lambda o: crawls.append("b", BATCH, ["https://x.test/"], o)):
            with pytest.raises(Forbidden, match="Forbidden"):
                await reach("key:b")
        assert store.known("b") == 0  # the other client's appendToId queued nothing
        await crawls.cancel("b", BATCH, "key:a")
        assert (await crawls.job("b", BATCH, "key:a")).status == CANCELLED
        store.create("c", CRAWL_OPTIONS, 60, "key:a")
        with pytest.raises(Forbidden):
            await crawls.status("c", CRAWL, 0, 10, 10**6, "key:b")
        with pytest.raises(JobNotFound):  # an unknown id stays a 404 whoever asks
            await crawls.job("nope", BATCH, "key:b")
    run(tmp_path, scenario)


def test_active_crawls_are_the_callers_own(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        store.create("a", CRAWL_OPTIONS, 60, "key:a")
        store.create("b", CRAWL_OPTIONS, 60, "key:b")
        assert [job.id for job in await crawls.active("key:a")] == ["a"]
    run(tmp_path, scenario)


def test_a_job_stored_before_owners_stays_reachable(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        store.create("old", BATCH_OPTIONS, 60)
        assert (await crawls.job("old", BATCH, "key:b")).owner is None
    run(tmp_path, scenario)


def test_one_clients_unfinished_jobs_are_capped_and_leave_room_for_others(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        store.create("a1", CRAWL_OPTIONS, 60, "key:a")
        store.create("a2", BATCH_OPTIONS, 60, "key:a")  # crawls and batches count together
        with pytest.raises(TooManyCrawls, match="2 of your crawls and batch scrapes are unfinished"):
            await crawls.start(BATCH_OPTIONS, "key:a")
        assert (await crawls.job(await crawls.start(CRAWL_OPTIONS, "key:b"))).owner == "key:b"
        store.finish("a1", CANCELLED)
        assert (await crawls.job(await crawls.start(BATCH_OPTIONS, "key:a"))).owner == "key:a"
    run(tmp_path, scenario, crawl_max_jobs_per_key=2)


def test_keyless_jobs_are_everyones_and_no_per_key_bound_applies(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        store.create("a", BATCH_OPTIONS, 60)  # started keyless: nobody's, so everyone's
        started = await crawls.start(CRAWL_OPTIONS, None)  # a per-key bound of 1 would refuse it
        assert (await crawls.job(started, CRAWL, None)).owner is None
        assert (await crawls.job("a", BATCH, None)).id == "a" and (await crawls.job("a", BATCH, "key:b")).id == "a"
    run(tmp_path, scenario, crawl_max_jobs_per_key=1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    jobs = JobStore(str(tmp_path / "crawls.sqlite"))
    yield jobs
    jobs.close()


def test_an_append_to_a_batch_past_its_time_limit_is_refused_not_left_unvisited(store: JobStore,
                                                                                 tmp_path: Path) -> None:
    store.create("b", CrawlOptions(seeds=(SEED,), limit=20, kind=BATCH, max_depth=0, sitemap="skip"), 86_400)
    store.finish("b", COMPLETED)
    with sqlite3.connect(tmp_path / "crawls.sqlite") as other:  # started an hour ago
        other.execute("UPDATE jobs SET created = created - 3600 WHERE id = 'b'")
    other.close()
    crawls = Crawls(services(FakeSite(SITE), FakeIndex(), crawl_max_duration_s=3000), store)
    with pytest.raises(WispError) as refused:
        asyncio.run(crawls.append("b", BATCH, [URL("a.html")]))
    assert refused.value.status == 409 and "CRAWL_MAX_DURATION_S (3000 s)" in refused.value.message
    assert store.known("b") == 0 and store.job("b").status == COMPLETED


def test_a_job_that_ended_with_no_page_scraped_says_why(tmp_path: Path) -> None:
    async def scenario(crawls: Crawls, store: JobStore) -> None:
        async def why(job_id: str) -> str | None:
            job, counts, _ = await crawls.status(job_id, BATCH, 0, 10, 10**6)
            return await crawls.why_none_scraped(job, counts)

        store.create("refused", BATCH_OPTIONS, 60)
        store.add_pages("refused", [("a", "https://docs.test/a", 0), ("b", "https://docs.test/b", 0)], 10)
        assert await why("refused") is None  # running: nothing to say yet
        store.failed("refused", "a", "non-public address", "SCRAPE_BLOCKED")
        store.failed("refused", "b", "robots.txt", "ROBOTS", state="blocked")
        store.finish("refused", COMPLETED)
        assert await why("refused") == ("no page was scraped: 2 failed or were refused, the first https://docs.test/a "
                                        "(SCRAPE_BLOCKED: non-public address); GET its /errors lists them all")
        store.create("robots", BATCH_OPTIONS, 60)
        store.add_pages("robots", [("a", "https://docs.test/a", 0)], 10)
        store.failed("robots", "a", "robots.txt", "ROBOTS", state="blocked")
        store.finish("robots", COMPLETED)
        assert await why("robots") == "no page was scraped: robots.txt disallows all 1, the first https://docs.test/a"
        store.create("empty", BATCH_OPTIONS, 60)
        store.finish("empty", CANCELLED)
        assert await why("empty") == "no page was scraped: none was found to visit"
        store.create("some", BATCH_OPTIONS, 60)
        store.add_pages("some", [("a", "https://docs.test/a", 0), ("b", "https://docs.test/b", 0)], 10)
        store.done("some", "a", {"markdown": "a"})
        store.failed("some", "b", "timeout", "SCRAPE_TIMEOUT")
        store.finish("some", COMPLETED)
        assert await why("some") is None  # a page was scraped: /errors tells the rest
    run(tmp_path, scenario)
