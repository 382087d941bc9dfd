"""The model lane, driven by events: a first job holds the model thread while the next ones queue behind it."""

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from semantic.errors import Busy
from semantic.kinds import Depth, Priority
from semantic.lane.batching import ModelLane
from semantic.lane.heap import HeapTrimmer


class Blocker:
    """A job that holds the model thread until released, so that the jobs sent meanwhile queue up."""

    def __init__(self) -> None:
        self.started, self.release = threading.Event(), threading.Event()

    def __call__(self, items: list[str]) -> list[str]:
        self.started.set()
        self.release.wait(5)
        return items

    async def occupy(self, lane: ModelLane) -> asyncio.Task:
        task = asyncio.create_task(lane.run(self, ["blocker"], "blocker"))
        await asyncio.to_thread(self.started.wait, 5)
        return task


async def queued(lane: ModelLane, jobs: int, priority: Priority | None = None, timeout_s: float = 5) -> None:
    """Until `jobs` jobs (of `priority`, or of both) wait in the lane; a failure if they do not within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (waiting := lane.stats().waiting[priority].jobs if priority else lane.stats().pending_jobs) < jobs:
        assert time.monotonic() < deadline, f"{waiting} of {jobs} jobs waiting in the lane after {timeout_s} s"
        await asyncio.sleep(0)  # lets the tasks just created reach the queue; no time passes


def recorded(calls: list[list[str]], transform: Callable[[str], str] = str.upper):
    def work(items: list[str]) -> list[str]:
        calls.append(items)
        return [transform(item) for item in items]
    return work


def run_behind_blocker(lane: ModelLane, jobs: list[tuple[Callable, list[str], str | None] |
                                                 tuple[Callable, list[str], str | None, Priority]],
                       before_release: Callable[[list[asyncio.Task]], None] = lambda tasks: None) -> list:
    """Queue `jobs` (work, items, key[, priority]) while the model thread is held, then release it; each job's
    result or exception."""
    blocker = Blocker()

    async def main() -> list:
        held = await blocker.occupy(lane)
        tasks = [asyncio.create_task(lane.run(*job)) for job in jobs]
        await queued(lane, len(jobs))
        before_release(tasks)
        blocker.release.set()
        await held
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await lane.close()
        return results

    return asyncio.run(main())


def test_concurrent_jobs_with_one_key_share_one_model_call() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    results = run_behind_blocker(ModelLane(10, 10, 10_000), [(work, [c, c + c], "k") for c in "bcd"])
    assert results == [["B", "BB"], ["C", "CC"], ["D", "DD"]]
    assert calls == [["b", "bb", "c", "cc", "d", "dd"]]


def test_jobs_of_another_key_in_between_do_not_keep_a_key_from_merging() -> None:
    # a hybrid rerank queues a query job and a passage job: the passage jobs of all requests still merge
    calls: list[list[str]] = []
    work = recorded(calls)
    jobs = [(work, ["q1"], "query"), (work, ["p1", "p1b"], "passage"), (work, ["q2"], "query"),
            (work, ["p2"], "passage")]
    results = run_behind_blocker(ModelLane(10, 10, 10_000), jobs)
    assert results == [["Q1"], ["P1", "P1B"], ["Q2"], ["P2"]]
    assert calls == [["q1", "q2"], ["p1", "p1b", "p2"]]


def test_a_model_call_is_capped_by_texts() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    results = run_behind_blocker(ModelLane(10, 3, 10_000), [(work, [str(i)], "a") for i in range(5)]
                                 + [(work, ["b"], "b"), (work, ["n1"], None), (work, ["n2"], None)])
    assert results == [["0"], ["1"], ["2"], ["3"], ["4"], ["B"], ["N1"], ["N2"]]
    assert calls == [["0", "1", "2"], ["3", "4"], ["b"], ["n1"], ["n2"]]  # no key: never merged


def test_a_model_call_is_capped_by_characters_and_a_long_text_still_goes_alone() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    jobs = [(work, ["x" * 4, "y" * 4], "k"), (work, ["z" * 4], "k"), (work, ["w" * 25], "k"), (work, ["v"], "k")]
    results = run_behind_blocker(ModelLane(10, 10, 10), jobs)
    assert [len(r[0]) for r in results] == [4, 4, 25, 1]
    assert calls == [["xxxx", "yyyy"], ["zzzz"], ["w" * 25], ["v"]]


def test_a_big_job_is_sliced_and_lets_later_jobs_go_between_its_slices() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    big = [f"b{i}" for i in range(5)]
    results = run_behind_blocker(ModelLane(10, 2, 10_000), [(work, big, "passage"), (work, ["q"], "query")])
    assert results == [[b.upper() for b in big], ["Q"]]  # the slices come back whole and in order
    assert calls == [["b0", "b1"], ["q"], ["b2", "b3"], ["b4"]]


def test_a_job_whose_caller_gave_up_is_not_computed() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    lane = ModelLane(10, 1, 10_000)
    results = run_behind_blocker(lane, [(work, ["abandoned"], "k"), (work, ["kept"], "k")],
                                 before_release=lambda tasks: tasks[0].cancel())
    assert isinstance(results[0], asyncio.CancelledError) and results[1] == ["KEPT"]
    assert calls == [["kept"]] and lane.stats().skipped_jobs == 1


def test_the_rest_of_a_sliced_job_is_dropped_when_its_caller_gives_up() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    blocker = Blocker()

    async def main() -> None:
        lane = ModelLane(10, 2, 10_000)
        held = await blocker.occupy(lane)
        big = asyncio.create_task(lane.run(work, ["a", "b", "c", "d"], "k"))
        await queued(lane, 1)
        slow = Blocker()  # another key: holds the thread after the first slice, so the cancel lands in between
        other = asyncio.create_task(lane.run(slow, ["s"], "other"))
        await queued(lane, 2)
        blocker.release.set()
        await held
        await asyncio.to_thread(slow.started.wait, 5)
        big.cancel()
        slow.release.set()
        assert await other == ["s"]
        await lane.close()

    asyncio.run(main())
    assert calls == [["a", "b"]]


def test_a_full_queue_refuses_at_once() -> None:
    blocker = Blocker()

    async def main() -> None:
        lane = ModelLane(2, 1, 10_000)
        held = await blocker.occupy(lane)
        waiting = [asyncio.create_task(lane.run(lambda items: items, [i], None)) for i in ("2", "3")]
        await queued(lane, 2)
        with pytest.raises(Busy, match="2 interactive model jobs are already waiting"):
            await lane.run(lambda items: items, ["4"])
        blocker.release.set()
        assert await held == ["blocker"] and [await w for w in waiting] == [["2"], ["3"]]
        await lane.close()

    asyncio.run(main())


def test_a_model_error_reaches_only_its_callers() -> None:
    def failing(items: list[str]) -> list[str]:
        raise ValueError("model broke")

    async def main() -> None:
        lane = ModelLane(5, 5, 10_000)
        with pytest.raises(ValueError, match="model broke"):
            await lane.run(failing, ["1"])
        assert await lane.run(lambda items: items, ["2"]) == ["2"]
        await lane.close()

    asyncio.run(main())


def test_stats_tell_the_queue_depth_and_the_size_of_the_last_calls() -> None:
    lane = ModelLane(10, 10, 10_000)
    work = recorded([])
    blocker = Blocker()

    async def main() -> None:
        held = await blocker.occupy(lane)
        tasks = [asyncio.create_task(lane.run(work, ["ab", "cd"], ("embed", "passage"))) for _ in range(3)]
        await queued(lane, 3)
        depth = lane.stats()
        assert (depth.pending_jobs, depth.pending_items) == (3, 6)
        blocker.release.set()
        await asyncio.gather(held, *tasks)
        await lane.close()

    asyncio.run(main())
    stats = lane.stats()
    assert (stats.pending_jobs, stats.batches, stats.jobs, stats.items) == (0, 2, 4, 7)
    assert [(b.key, b.jobs, b.items, b.chars) for b in stats.recent] == [("blocker", 1, 1, 7),
                                                                         ("embed/passage", 3, 6, 12)]


def test_a_job_that_waited_too_long_to_start_is_refused_and_the_next_one_served() -> None:
    now = [0.0]
    calls: list[list[str]] = []
    work = recorded(calls)
    lane = ModelLane(10, 1, 10_000, max_wait_s=2.5, clock=lambda: now[0])

    blocker = Blocker()

    async def main() -> list:
        held = await blocker.occupy(lane)
        stale = asyncio.create_task(lane.run(work, ["stale"], "k"))
        await queued(lane, 1)
        now[0] = 1.0
        fresh = asyncio.create_task(lane.run(work, ["fresh"], "k"))
        await queued(lane, 2)
        now[0] = 3.0  # the first job has waited 3 s when the model is free again, the second 2 s
        blocker.release.set()
        await held
        results = await asyncio.gather(stale, fresh, return_exceptions=True)
        await lane.close()
        return results

    stale, fresh = asyncio.run(main())
    assert isinstance(stale, Busy) and "waited 3.0 s for the model" in str(stale) and fresh == ["FRESH"]
    assert calls == [["fresh"]] and lane.stats().expired_jobs == 1


def test_the_heap_is_trimmed_at_most_once_an_interval_while_busy_and_again_when_idle() -> None:
    calls: list[list[str]] = []
    heap = HeapTrimmer(every_s=3600, trim=lambda: calls.append(["trim"]))
    lane = ModelLane(10, 10, 10_000, heap=heap)

    async def idle() -> None:
        for _ in range(500):
            if not heap.untrimmed:
                return
            await asyncio.sleep(0.01)

    async def main() -> list[str]:
        blocker = Blocker()
        held = await blocker.occupy(lane)
        tasks = [asyncio.create_task(lane.run(recorded(calls), [key], key)) for key in "abc"]
        await queued(lane, 3)
        blocker.release.set()
        await asyncio.gather(held, *tasks)
        await idle()
        served_after_the_trim = await lane.run(recorded(calls), ["d"], "d")
        await idle()
        await lane.close()
        return served_after_the_trim

    assert asyncio.run(main()) == ["D"]
    # the blocker's call trims (none for an hour before), a, b and c do not, going idle does, and again after d
    assert calls == [["trim"], ["a"], ["b"], ["c"], ["trim"], ["d"], ["trim"]]


class HeldRecorder(Blocker):
    """Records its calls like `recorded`, each call holding the model thread until released."""

    def __init__(self, calls: list[list[str]]) -> None:
        super().__init__()
        self.calls = calls

    def __call__(self, items: list[str]) -> list[str]:
        self.calls.append(items)
        return [item.upper() for item in super().__call__(items)]


def test_interactive_jobs_go_between_a_background_jobs_slices_and_never_into_its_calls() -> None:
    calls: list[list[str]] = []
    crawl = HeldRecorder(calls)
    big = [f"b{i}" for i in range(5)]

    async def main() -> list:
        lane = ModelLane(10, 2, 10_000)
        background = asyncio.create_task(lane.run(crawl, big, "passage", priority="background"))
        await asyncio.to_thread(crawl.started.wait, 5)  # its first slice holds the model
        searches = [asyncio.create_task(lane.run(recorded(calls), items, key))
                    for items, key in ((["p"], "passage"), (["q"], "query"))]
        await queued(lane, 2, "interactive")
        crawl.release.set()
        results = await asyncio.gather(background, *searches)
        await lane.close()
        return results

    assert asyncio.run(main()) == [[b.upper() for b in big], ["P"], ["Q"]]
    # the search's passage shares the crawl's key, yet goes alone: it does not wait for the crawl's texts
    assert calls == [["b0", "b1"], ["p"], ["q"], ["b2", "b3"], ["b4"]]


def test_background_jobs_wait_while_interactive_ones_are_queued_and_merge_among_themselves() -> None:
    calls: list[list[str]] = []
    work = recorded(calls)
    crawls = [(work, [page], "passage", "background") for page in ("page1", "page2")]
    searches = [(work, [text], key) for text, key in (("q1", "query"), ("p1", "passage"), ("q2", "query"))]
    results = run_behind_blocker(ModelLane(10, 10, 10_000), crawls + searches)
    assert results == [["PAGE1"], ["PAGE2"], ["Q1"], ["P1"], ["Q2"]]
    assert calls == [["q1", "q2"], ["p1"], ["page1", "page2"]]


def test_each_priority_has_its_own_queue_bound_so_a_crawls_backlog_refuses_no_search() -> None:
    blocker = Blocker()

    async def main() -> None:
        lane = ModelLane(1, 1, 10_000)
        held = await blocker.occupy(lane)
        crawl = asyncio.create_task(lane.run(recorded([]), ["page"], None, priority="background"))
        await queued(lane, 1, "background")
        with pytest.raises(Busy, match="1 background model jobs are already waiting"):
            await lane.run(recorded([]), ["page2"], None, priority="background")
        search = asyncio.create_task(lane.run(lambda items: items, ["query"]))
        await queued(lane, 1, "interactive")
        assert lane.stats().waiting == {"interactive": Depth(1, 1), "background": Depth(1, 1)}
        blocker.release.set()
        assert await asyncio.gather(held, search, crawl) == [["blocker"], ["query"], ["PAGE"]]
        await lane.close()

    asyncio.run(main())


def test_a_background_jobs_wait_does_not_count_interactive_work_but_does_count_other_background_work() -> None:
    now = [0.0]
    calls: list[list[str]] = []

    def taking(seconds: float):
        def work(items: list[str]) -> list[str]:
            calls.append(items)
            now[0] += seconds
            return items
        return work

    blocker = Blocker()

    async def main() -> list:
        lane = ModelLane(10, 10, 10_000, max_wait_s=2.5, clock=lambda: now[0])
        held = await blocker.occupy(lane)
        crawls = [asyncio.create_task(lane.run(taking(3), ["slow page"], "a", priority="background")),
                  asyncio.create_task(lane.run(taking(0), ["late page"], "b", priority="background"))]
        search = asyncio.create_task(lane.run(taking(2), ["query"], "q"))
        await queued(lane, 3)
        now[0] = 1.0
        blocker.release.set()
        results = await asyncio.gather(held, search, *crawls, return_exceptions=True)
        await lane.close()
        return results

    _, search, slow, late = asyncio.run(main())
    # the slow page waited 3 s, all of them behind searches; the late page 3 s more behind the slow page
    assert search == ["query"] and slow == ["slow page"]
    assert isinstance(late, Busy) and "waited 3.0 s for the model besides interactive work" in str(late)
    assert calls == [["query"], ["slow page"]]


def test_each_model_call_times_the_kind_of_work_it_did() -> None:
    now = [0.0]

    def taking_1ms_a_char(items: list[str]) -> list[str]:
        now[0] += sum(map(len, items)) / 1000
        return items

    blocker = Blocker()

    async def main() -> ModelLane:
        lane = ModelLane(10, 10, 10_000, clock=lambda: now[0])
        held = await blocker.occupy(lane)
        jobs = [asyncio.create_task(lane.run(taking_1ms_a_char, texts, "passage", timed_as=kind))
                for texts, kind in ((["a" * 1000, "b" * 1000], "embed"), (["c" * 500], "rerank"),
                                    (["d" * 99], None))]
        await queued(lane, 3)
        blocker.release.set()
        await asyncio.gather(held, *jobs)
        await lane.close()
        return lane

    lane = asyncio.run(main())
    embed, rerank = lane.speed.speed("embed"), lane.speed.speed("rerank")
    # one call of 2,599 characters took 2.599 s: each kind is charged for its own characters
    assert (embed.ms_per_kchar, embed.ms_per_text, embed.calls) == (pytest.approx(1000), pytest.approx(1000), 1)
    assert (rerank.ms_per_kchar, rerank.ms_per_text, rerank.calls) == (pytest.approx(1000), pytest.approx(500), 1)


def test_a_new_search_job_would_wait_for_the_interactive_work_queued_and_the_rest_of_the_call_in_progress() -> None:
    now = [0.0]
    blocker = Blocker()

    async def main() -> tuple[float, float]:
        lane = ModelLane(10, 10, 10_000, clock=lambda: now[0])
        lane.speed.calibrate("rerank", 2000, 1000, 1)  # 2 ms a character
        lane.speed.calibrate("embed", 1000, 1000, 1)  # 1 ms a character
        held = asyncio.create_task(lane.run(blocker, ["x" * 500], "blocker", timed_as="rerank"))  # 1 s by its speed
        await asyncio.to_thread(blocker.started.wait, 5)
        work = recorded([])
        jobs = [asyncio.create_task(lane.run(work, ["a" * 100, "b" * 200], "pairs", timed_as="rerank")),
                asyncio.create_task(lane.run(work, ["c" * 300], "texts", timed_as="embed")),
                asyncio.create_task(lane.run(work, ["d" * 1000], "page", priority="background", timed_as="embed"))]
        await queued(lane, 3)
        now[0] = 0.25
        waiting = lane.queued_ms()
        blocker.release.set()
        await asyncio.gather(held, *jobs)
        idle = lane.queued_ms()
        await lane.close()
        return waiting, idle

    waiting, idle = asyncio.run(main())
    # 0.75 s left of the call in progress, 600 ms of pairs, 300 ms of texts; the background page waits behind them
    assert waiting == pytest.approx(750 + 600 + 300)
    assert idle == 0
