"""The crawl manager's rules for a job's life: what an append to a job may and may not do."""

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.errors import WispError
from agent.index.crawl.jobs import COMPLETED, JobStore
from agent.index.crawl.manager import Crawls
from agent.index.crawl.options import BATCH, CrawlOptions

from .test_crawler import SEED, SITE, URL, FakeIndex, services
from .test_robots import FakeSite


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
