"""The SQLite store of crawl jobs and their frontiers: states, bounds, order, and surviving a restart."""

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.core.crawl_options import CrawlOptions
from agent.state.jobs import CANCELLED, COMPLETED, FAILED, ROWS_PER_PAGE, RUNNING, Counts, QueuedPage
from agent.state.jobs.sqlite import JobStore

OPTIONS = CrawlOptions(seeds=("https://docs.test/",), limit=10, include=("^/guide",), delay_s=0.5,
                       warnings=("prompt is not supported",))


def page(n: int, depth: int = 1) -> tuple[str, str, int]:
    return (f"k{n}", f"https://docs.test/{n}", depth)


def url(n: int) -> str:
    return f"https://docs.test/{n}"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JobStore]:
    jobs = JobStore(str(tmp_path / "nested" / "crawls.sqlite"))
    jobs.create("j", OPTIONS, ttl_s=60)
    yield jobs
    jobs.close()


def test_a_new_job_runs_with_its_options(store: JobStore) -> None:
    job = store.job("j")
    assert job.status == RUNNING and job.options == OPTIONS and job.error is None
    assert job.expires == pytest.approx(job.created + 60) and job.created == pytest.approx(time.time(), abs=5)
    assert (job.indexed, job.unchanged, job.chunks, job.not_indexed, job.index_error) == (0, 0, 0, 0, None)
    assert not job.seeded and not job.expired
    assert store.job("nope") is None
    assert store.running() == ["j"] and store.unfinished() == 1


def test_a_job_is_marked_seeded_once_its_seeds_are_queued(store: JobStore) -> None:
    store.mark_seeded("j")
    assert store.job("j").seeded


def test_a_job_finishes_once(store: JobStore) -> None:
    assert store.finish("j", FAILED, "boom")
    assert not store.finish("j", CANCELLED)  # a cancel racing the end of the crawl changes nothing
    job = store.job("j")
    assert (job.status, job.error) == (FAILED, "boom") and store.running() == [] and store.unfinished() == 0


def test_pages_are_queued_once_and_within_the_limit(store: JobStore) -> None:
    assert store.add_pages("j", [page(1), page(2), page(1)], limit=10) == 2
    assert store.add_pages("j", [page(2), page(3), page(4), page(5)], limit=4) == 2  # k2 known; room for 2
    assert store.counts("j") == Counts(total=4, completed=0) and store.queued("j") == 4
    assert [p.key for p in store.take("j", 10)] == ["k1", "k2", "k3", "k4"]


def test_take_gives_the_shallowest_pages_first_and_only_once(store: JobStore) -> None:
    store.add_pages("j", [page(1, 2), page(2, 1), page(3, 0), page(4, 1)], limit=10)
    assert store.take("j", 3) == [QueuedPage("k3", url(3), 0), QueuedPage("k2", url(2), 1), QueuedPage("k4", url(4), 1)]
    assert [p.key for p in store.take("j", 3)] == ["k1"]
    assert store.take("j", 3) == []
    assert store.counts("j") == Counts(total=4, completed=0) and store.queued("j") == 4  # fetching pages count


def test_documents_come_in_completion_order_in_pages(store: JobStore) -> None:
    store.add_pages("j", [page(n) for n in range(4)], limit=10)
    store.take("j", 4)
    for n in (2, 0, 3, 1):
        store.done("j", f"k{n}", {"markdown": f"page {n}"})
    assert store.counts("j") == Counts(total=4, completed=4) and store.queued("j") == 0
    assert [d["markdown"] for d in store.documents("j", 0, 100, 10**6)] == ["page 2", "page 0", "page 3", "page 1"]
    assert [d["markdown"] for d in store.documents("j", 1, 2, 10**6)] == ["page 0", "page 3"]
    assert store.documents("j", 4, 100, 10**6) == []


def test_a_page_of_documents_stops_at_its_byte_budget_but_holds_one(store: JobStore) -> None:
    store.add_pages("j", [page(n) for n in range(3)], limit=10)
    store.take("j", 3)
    for n in range(3):
        store.done("j", f"k{n}", {"markdown": "x" * 100})
    assert len(store.documents("j", 0, 100, 250)) == 2
    assert len(store.documents("j", 0, 100, 10)) == 1


def test_a_snapshot_is_the_job_its_counts_and_a_page_of_documents(store: JobStore) -> None:
    store.add_pages("j", [page(1), page(2)], limit=10)
    store.take("j", 1)
    store.done("j", "k1", {"markdown": "one"})
    job, counts, documents = store.snapshot("j", 0, 10, 10**6)
    assert job == store.job("j") and counts == Counts(total=2, completed=1) and documents == [{"markdown": "one"}]
    assert store.snapshot("nope", 0, 10, 10**6) is None


def test_failed_and_blocked_pages_leave_the_total_and_free_room(store: JobStore) -> None:
    store.add_pages("j", [page(1), page(2), page(3)], limit=3)
    store.take("j", 3)
    store.failed("j", "k1", "HTTP 404", "SCRAPE_HTTP_ERROR")
    store.failed("j", "k2", "blocked by robots.txt", "ROBOTS_BLOCKED", "blocked")
    assert store.counts("j") == Counts(total=1, completed=0)
    assert store.add_pages("j", [page(1), page(4), page(5), page(6)], limit=3) == 2  # k1 stays failed
    errors, blocked = store.errors("j")
    assert blocked == [url(2)]
    [error] = errors
    assert {k: error[k] for k in ("id", "url", "error", "code")} == {
        "id": "j:k1", "url": url(1), "error": "HTTP 404", "code": "SCRAPE_HTTP_ERROR"}
    assert error["finished"] == pytest.approx(time.time(), abs=5)


def test_a_job_knows_of_at_most_rows_per_page_times_its_limit(store: JobStore) -> None:
    limit, queued = 2, 0
    for n in range(50):  # a site of broken links: every page fails, and links to two more
        queued += store.add_pages("j", [page(2 * n), page(2 * n + 1)], limit)
        for taken in store.take("j", 10):
            store.failed("j", taken.key, "HTTP 404", "SCRAPE_HTTP_ERROR")
    assert queued == ROWS_PER_PAGE * limit
    assert store.add_pages("j", [page(1000)], limit) == 0


def test_a_long_error_is_cut(store: JobStore) -> None:
    store.add_pages("j", [page(1)], limit=10)
    store.failed("j", "k1", "e" * 5000, "SCRAPE_FAILED")
    assert len(store.errors("j")[0][0]["error"]) == 1000


def test_index_counts_add_up_and_keep_the_last_error(store: JobStore) -> None:
    store.indexed("j", 1, 0, 5, None)
    store.indexed("j", 0, 1, 0, None)
    store.indexed("j", 0, 0, 0, "semantic-svc answered HTTP 500")
    store.indexed("j", 2, 0, 7, None)  # a later success keeps the error on record
    job = store.job("j")
    assert (job.indexed, job.unchanged, job.chunks, job.not_indexed) == (3, 1, 12, 1)
    assert job.index_error == "semantic-svc answered HTTP 500"


def test_a_job_and_its_frontier_survive_a_restart(tmp_path: Path) -> None:
    path = str(tmp_path / "crawls.sqlite")
    first = JobStore(path)
    first.create("j", OPTIONS, ttl_s=60)
    first.add_pages("j", [page(1), page(2), page(3)], limit=10)
    first.mark_seeded("j")
    first.take("j", 2)
    first.done("j", "k1", {"markdown": "one"})
    first.close()
    again = JobStore(path)
    job = again.job("j")
    assert again.running() == ["j"] and job.options == OPTIONS and job.seeded
    again.requeue_unfinished("j")  # k2 was fetching when the process stopped
    assert [p.key for p in again.take("j", 10)] == ["k2", "k3"]
    assert again.documents("j", 0, 10, 10**6) == [{"markdown": "one"}]
    again.close()


def test_options_another_version_wrote_fail_the_job_instead_of_the_store(tmp_path: Path) -> None:
    path = str(tmp_path / "crawls.sqlite")
    jobs = JobStore(path)
    jobs.create("new-keys", OPTIONS, ttl_s=60)
    jobs.create("no-seeds", OPTIONS, ttl_s=60)
    with sqlite3.connect(path) as other:
        other.execute("UPDATE jobs SET options = ? WHERE id = 'new-keys'",
                      (json.dumps({**OPTIONS.as_json(), "added_later": True}),))
        other.execute("UPDATE jobs SET options = ? WHERE id = 'no-seeds'", (json.dumps({"limit": 3}),))
    other.close()
    assert jobs.job("new-keys").options == OPTIONS  # a key this version lacks is dropped
    broken = jobs.job("no-seeds")
    assert broken.status == FAILED and broken.error.startswith("its stored options could not be read")
    jobs.close()


def test_expired_finished_jobs_are_forgotten_with_their_pages(tmp_path: Path) -> None:
    jobs = JobStore(str(tmp_path / "crawls.sqlite"))
    for job_id, ttl_s in (("old", -1), ("old-running", -1), ("new", 60)):
        jobs.create(job_id, OPTIONS, ttl_s=ttl_s)
        jobs.add_pages(job_id, [page(1)], limit=10)
    jobs.finish("old", COMPLETED)
    jobs.finish("new", COMPLETED)
    assert jobs.job("old").expired and not jobs.job("new").expired
    assert jobs.expire() == 1
    assert jobs.job("old") is None and jobs.snapshot("old", 0, 10, 10**6) is None
    assert jobs.job("old-running") is not None  # a crawl still running stays until it ends
    assert jobs.job("new") is not None and jobs.queued("new") == 1
    jobs.add_pages("old", [page(1)], limit=10)  # its pages went with it: the key is free again
    assert jobs.queued("old") == 1
    jobs.close()


def test_run_calls_a_method_on_the_stores_thread(store: JobStore) -> None:
    async def main() -> tuple[int, Counts]:
        added = await store.run(store.add_pages, "j", [page(1), page(2)], 10)
        return added, await store.run(store.counts, "j")

    assert asyncio.run(main()) == (2, Counts(total=2, completed=0))


def test_an_in_memory_store_works_for_tests_and_tools() -> None:
    jobs = JobStore(":memory:")
    jobs.create("j", OPTIONS, ttl_s=60)
    assert jobs.finish("j", COMPLETED) and jobs.job("j").status == COMPLETED
    jobs.close()


def test_a_drained_finish_waits_for_the_last_queued_page(store: JobStore) -> None:
    store.add_pages("j", [page(1)], limit=10)
    assert not store.finish("j", COMPLETED, None, drained=True)  # a page appended as the last one finished
    [taken] = store.take("j", 5)
    store.done("j", taken.key, {"markdown": "1"})
    assert store.finish("j", COMPLETED, None, drained=True) and store.job("j").status == COMPLETED


def test_appending_reopens_a_completed_job_within_its_limit(store: JobStore) -> None:
    store.finish("j", COMPLETED)
    assert store.append("j", [page(1), page(2)], limit=10) == COMPLETED
    assert store.job("j").status == RUNNING and store.queued("j") == 2 and store.known("j") == 2
    assert store.append("j", [page(2), page(3)], limit=10) == RUNNING and store.known("j") == 3


def test_appending_to_a_cancelled_or_unknown_job_queues_nothing(store: JobStore) -> None:
    store.finish("j", CANCELLED)
    assert store.append("j", [page(1)], limit=10) == CANCELLED
    assert store.job("j").status == CANCELLED and store.known("j") == 0
    assert store.append("nope", [page(1)], limit=10) is None


def test_a_store_of_before_owners_gains_the_column_and_keeps_its_jobs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE jobs (id TEXT PRIMARY KEY, created REAL NOT NULL, expires REAL NOT NULL, "
                    "status TEXT NOT NULL, options TEXT NOT NULL, error TEXT, indexed INTEGER NOT NULL DEFAULT 0, "
                    "unchanged INTEGER NOT NULL DEFAULT 0, chunks INTEGER NOT NULL DEFAULT 0, "
                    "not_indexed INTEGER NOT NULL DEFAULT 0, index_error TEXT, seeded INTEGER NOT NULL DEFAULT 0)")
        old.execute("INSERT INTO jobs (id, created, expires, status, options) VALUES (?, ?, ?, ?, ?)",
                    ("old", 1.0, time.time() + 60, RUNNING, json.dumps(OPTIONS.as_json())))
    old.close()
    jobs = JobStore(str(path))
    jobs.create("new", OPTIONS, ttl_s=60, owner="key:a")
    assert jobs.job("old").owner is None and jobs.job("new").owner == "key:a"
    jobs.close()
