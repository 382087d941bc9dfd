"""Per-host politeness: a pause between the starts of requests to one host, and a bound on them at once."""

import asyncio
import time

from agent.state.politeness import MAX_DELAY_S
from agent.state.politeness.memory import MAX_IDLE_HOSTS, HostGate


async def visit(gate: HostGate, host: str, delay_s: float, log: list[tuple[str, str, float]],
                hold_s: float = 0.0) -> None:
    async with gate.turn(host, delay_s):
        log.append((host, "start", time.monotonic()))
        await asyncio.sleep(hold_s)
        log.append((host, "end", time.monotonic()))


def most_at_once(log: list[tuple[str, str, float]]) -> int:
    inside = peak = 0
    for _, event, _ in sorted(log, key=lambda entry: entry[2]):
        inside += 1 if event == "start" else -1
        peak = max(peak, inside)
    return peak


def starts(log: list[tuple[str, str, float]], host: str) -> list[float]:
    return [at for h, event, at in log if h == host and event == "start"]


def test_a_delay_spaces_the_starts_on_one_host_and_not_on_another() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        gate = HostGate(concurrency=4)
        await asyncio.gather(visit(gate, "a.test", 0.2, log), visit(gate, "a.test", 0.2, log),
                             visit(gate, "b.test", 0.2, log))

    asyncio.run(main())
    first, second = starts(log, "a.test")
    assert second - first >= 0.2 - 0.01  # the event loop's clock may round the sleep a little early
    assert first <= starts(log, "b.test")[0] < second  # another host does not wait for a.test's pause


def test_with_a_delay_requests_to_a_host_go_one_at_a_time() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        gate = HostGate(concurrency=4)
        await asyncio.gather(*(visit(gate, "a.test", 0.01, log, hold_s=0.02) for _ in range(3)))

    asyncio.run(main())
    assert most_at_once(log) == 1


def test_without_a_delay_at_most_concurrency_requests_run_on_a_host() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        gate = HostGate(concurrency=2)
        await asyncio.gather(*(visit(gate, "a.test", 0.0, log, hold_s=0.02) for _ in range(5)),
                             *(visit(gate, "b.test", -1.0, log, hold_s=0.02) for _ in range(2)))

    asyncio.run(main())
    assert most_at_once([e for e in log if e[0] == "a.test"]) == 2
    assert most_at_once(log) == 4  # a negative delay is none: b.test's two run together, beside a.test's


def test_a_huge_delay_is_capped_at_a_minute() -> None:
    async def main() -> float:
        gate = HostGate(concurrency=1)
        async with gate.turn("a.test", 10_000.0):
            pass
        return gate._next_start["a.test"] - time.monotonic()

    assert 0 < asyncio.run(main()) <= MAX_DELAY_S


def test_jobs_sharing_the_gate_stay_within_the_hosts_concurrency_together() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        gate = HostGate(concurrency=2)  # a crawl (robots.txt's pause) and a batch (none) on one host
        await asyncio.gather(*(visit(gate, "a.test", 0.01, log, hold_s=0.02) for _ in range(3)),
                             *(visit(gate, "a.test", 0.0, log, hold_s=0.02) for _ in range(4)))

    asyncio.run(main())
    assert most_at_once(log) == 2


def test_a_request_without_a_pause_waits_for_the_pause_another_job_asked() -> None:
    log: list[tuple[str, str, float]] = []

    async def main() -> None:
        gate = HostGate(concurrency=4)
        await visit(gate, "a.test", 0.2, log)
        await visit(gate, "a.test", 0.0, log)

    asyncio.run(main())
    first, second = starts(log, "a.test")
    assert second - first >= 0.2 - 0.01


def test_idle_hosts_whose_pause_is_over_are_forgotten() -> None:
    async def main() -> HostGate:
        gate = HostGate(concurrency=1)
        for n in range(MAX_IDLE_HOSTS + 5):
            async with gate.turn(f"h{n}.test", 0.0):
                pass
        async with gate.turn("paused.test", 30.0):
            pass
        async with gate.turn("last.test", 0.0):
            pass
        return gate

    gate = asyncio.run(main())
    assert len(gate._users) <= MAX_IDLE_HOSTS + 1 and "paused.test" in gate._next_start  # its pause is kept
