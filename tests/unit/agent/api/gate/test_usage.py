import asyncio

import pytest
from starlette.datastructures import State

from agent.api.gate.admission import CLIENT
from agent.api.gate.usage import Metering, client_of, owner_of
from agent.state.usage import Meter
from agent.state.usage.memory import Usage


class Inner:
    """The app behind the meter: answers `status`, and reports what the meter counted while it ran."""

    def __init__(self, usage: Meter, status: int = 200, fail: bool = False) -> None:
        self.usage, self.status, self.fail = usage, status, fail
        self.in_flight: list[int] = []

    async def __call__(self, scope, receive, send) -> None:
        self.in_flight.append(self.usage.in_flight(client_of(scope)))
        if self.fail:
            raise RuntimeError("handler failed")
        await send({"type": "http.response.start", "status": self.status, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def metering(inner: Inner, usage: Meter) -> Metering:
    return Metering(inner, State({"usage": usage}))


async def request(meter: Metering, method: str = "POST", path: str = "/v2/search",
                  client: str | None = "key:a") -> None:
    async def send(_: dict) -> None:
        pass

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": method, "path": path, "headers": [], "client": ("10.0.0.7", 5000)}
    if client:
        scope[CLIENT] = client
    await meter(scope, receive, send)


def call(meter: Metering, method: str = "POST", path: str = "/v2/search", client: str | None = "key:a") -> None:
    asyncio.run(request(meter, method, path, client))


def test_a_successful_request_that_starts_work_is_one_credit_of_its_client() -> None:
    usage = Usage()
    inner = Inner(usage)
    meter = metering(inner, usage)
    call(meter)
    call(meter, path="/v2/scrape")
    call(meter, "GET", "/v2/crawl/active")  # a read starts nothing
    call(meter, path="/mcp")  # an MCP session's tool calls are counted where they land
    call(meter, client="key:b")
    assert usage.of("key:a").credits == 2 and usage.of("key:b").credits == 1
    assert usage.of("key:a").last_success is not None and usage.of("key:c").credits == 0
    assert inner.in_flight == [1, 1, 1, 1, 1] and usage.of("key:a").in_flight == 0


def test_refused_and_failed_requests_cost_nothing_and_leave_no_request_in_flight() -> None:
    usage = Usage()
    call(metering(Inner(usage, status=400), usage))
    call(metering(Inner(usage, status=429), usage))
    with pytest.raises(RuntimeError):
        call(metering(Inner(usage, fail=True), usage))
    assert usage.of("key:a").credits == 0 and usage.of("key:a").in_flight == 0


def test_keyless_clients_are_counted_by_address() -> None:
    usage = Usage()
    call(metering(Inner(usage), usage), client=None)
    assert usage.of("addr:10.0.0.7").credits == 1


def test_jobs_are_a_keys_and_keyless_ones_everyones() -> None:
    # an address is no identity: a keyless client that starts a crawl from one host may poll it from another
    assert owner_of({"type": "http", CLIENT: "key:ab12", "client": ("10.0.0.1", 1)}) == "key:ab12"
    assert owner_of({"type": "http", CLIENT: "addr:10.0.0.1", "client": ("10.0.0.1", 1)}) is None
    assert owner_of({"type": "http", "client": ("10.0.0.1", 1)}) is None


def test_past_its_bound_the_least_recent_idle_client_is_forgotten() -> None:
    usage = Usage(max_clients=2)
    usage.began("key:busy")
    for client in ("key:a", "key:b"):
        usage.began(client)
        usage.ended(client, credited=True)
    assert usage.of("key:busy").in_flight == 1 and usage.of("key:a").credits == 0
    assert usage.of("key:b").credits == 1


def test_the_counts_read_back_cover_the_period_since_start() -> None:
    usage = Usage()
    call(metering(Inner(usage), usage))
    counted = asyncio.run(usage.counted("key:a"))
    assert counted.credits == 1 and counted.started == usage.started <= counted.last_success
    assert asyncio.run(usage.counted("key:b")).last_success is None
