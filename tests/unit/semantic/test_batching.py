import asyncio
import threading

import pytest

from semantic.batching import Busy, ModelLane


def test_concurrent_jobs_with_one_key_share_one_model_call() -> None:
    calls: list[list[str]] = []
    gate = threading.Event()

    def work(items: list[str]) -> list[str]:
        gate.wait(2)  # the first call blocks until every job is queued
        calls.append(items)
        return [s.upper() for s in items]

    async def main():
        lane = ModelLane(max_pending=10, max_batch=10)
        first = asyncio.create_task(lane.run(work, ["a"], "k"))
        await asyncio.sleep(0.05)
        rest = [asyncio.create_task(lane.run(work, [c, c + c], "k")) for c in "bcd"]
        await asyncio.sleep(0.05)
        gate.set()
        results = [await first] + [await t for t in rest]
        await lane.close()
        return results

    results = asyncio.run(main())
    assert results == [["A"], ["B", "BB"], ["C", "CC"], ["D", "DD"]]
    assert calls == [["a"], ["b", "bb", "c", "cc", "d", "dd"]]  # the three waiting jobs ran as one batch


def test_batches_respect_their_key_and_size() -> None:
    calls: list[list[int]] = []
    gate = threading.Event()

    def work(items):
        gate.wait(2)
        calls.append(items)
        return items

    async def main():
        lane = ModelLane(max_pending=10, max_batch=3)
        tasks = [asyncio.create_task(lane.run(work, [0], "a"))]
        await asyncio.sleep(0.05)
        tasks += [asyncio.create_task(lane.run(work, [i], key)) for i, key in
                  [(1, "a"), (2, "a"), (3, "a"), (4, "a"), (5, "b"), (6, None), (7, None)]]
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.gather(*tasks)
        await lane.close()

    asyncio.run(main())
    assert calls == [[0], [1, 2, 3], [4], [5], [6], [7]]


def test_a_full_queue_refuses_at_once() -> None:
    gate = threading.Event()

    async def main():
        lane = ModelLane(max_pending=2, max_batch=1)
        running = asyncio.create_task(lane.run(lambda items: gate.wait(2) and items, [1]))
        await asyncio.sleep(0.05)  # taken off the queue and running
        waiting = [asyncio.create_task(lane.run(lambda items: items, [i])) for i in (2, 3)]
        await asyncio.sleep(0.01)
        with pytest.raises(Busy, match="2 model jobs are already waiting"):
            await lane.run(lambda items: items, [4])
        gate.set()
        assert await running == [1] and [await w for w in waiting] == [[2], [3]]
        await lane.close()

    asyncio.run(main())


def test_a_model_error_reaches_only_its_callers() -> None:
    def failing(items):
        raise ValueError("model broke")

    async def main():
        lane = ModelLane(max_pending=5, max_batch=5)
        with pytest.raises(ValueError, match="model broke"):
            await lane.run(failing, [1])
        assert await lane.run(lambda items: items, [2]) == [2]
        await lane.close()

    asyncio.run(main())


def test_a_job_whose_caller_gave_up_is_not_computed() -> None:
    computed: list[list[int]] = []
    gate = threading.Event()

    def work(items):
        gate.wait(2)
        computed.append(items)
        return items

    async def main():
        lane = ModelLane(max_pending=10, max_batch=1)
        first = asyncio.create_task(lane.run(work, [1]))
        await asyncio.sleep(0.05)
        abandoned = asyncio.create_task(lane.run(work, [2]))
        kept = asyncio.create_task(lane.run(work, [3]))
        await asyncio.sleep(0.01)
        abandoned.cancel()
        gate.set()
        assert await first == [1] and await kept == [3]
        await lane.close()

    asyncio.run(main())
    assert computed == [[1], [3]]
