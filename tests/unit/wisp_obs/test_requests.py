"""The request middleware on a real FastAPI app: ids, route templates, the metrics hook and the access line."""

import asyncio
import logging
import uuid

import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from wisp_obs.requests import UNMATCHED, ObservedRequests, RequestInfo, current, id_header, request_id, uuid7

ACCESS = "test.access"


class Observed:
    def __init__(self) -> None:
        self.calls: list[tuple[RequestInfo, int, float]] = []

    def __call__(self, info: RequestInfo, status: int, seconds: float) -> None:
        self.calls.append((info, status, seconds))


def make_app(observed: Observed, trust_incoming_id: bool = False) -> FastAPI:
    app = FastAPI()
    app.add_middleware(ObservedRequests, observe=observed, access_log=logging.getLogger(ACCESS),
                       trust_incoming_id=trust_incoming_id)

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict:
        current().extra["mode"] = "keyword"
        return {"id": request_id(), "item": item_id}

    @app.get("/in-task")
    async def in_task() -> dict:  # a task the handler starts still sees its request
        return {"id": await asyncio.create_task(_id_later())}

    @app.get("/boom")
    async def boom() -> dict:
        raise RuntimeError("boom")

    @app.get("/healthz")
    async def healthz() -> dict:
        return {}

    inner = FastAPI()

    @inner.get("/things/{thing}")
    async def thing(thing: str) -> dict:
        return {}

    app.mount("/mounted", inner)

    async def bare(scope, receive, send) -> None:  # an ASGI app without routes, as some SDKs mount
        await JSONResponse({})(scope, receive, send)

    app.mount("/bare", bare)

    @app.exception_handler(Exception)
    async def unexpected(_, error: Exception) -> JSONResponse:
        return JSONResponse({"error": "internal"}, status_code=500, headers=id_header())

    return app


async def _id_later() -> str:
    await asyncio.sleep(0)
    return request_id()


@pytest.fixture
def observed() -> Observed:
    return Observed()


@pytest.fixture
def client(observed: Observed) -> TestClient:
    return TestClient(make_app(observed), raise_server_exceptions=False)


def test_the_id_is_a_uuid7_in_the_header_and_the_body(client: TestClient, observed: Observed) -> None:
    response = client.get("/items/42")
    assert response.headers["X-Request-Id"] == response.json()["id"]
    assert uuid.UUID(response.json()["id"]).version == 7
    [(info, status, seconds)] = observed.calls
    assert (info.id, info.route, info.method, info.path, status) == (response.json()["id"], "/items/{item_id}", "GET",
                                                                     "/items/42", 200)
    assert info.extra == {"mode": "keyword"} and 0 < seconds < 5


def test_every_request_has_its_own_id(client: TestClient) -> None:
    ids = {client.get("/items/1").headers["X-Request-Id"] for _ in range(5)}
    assert len(ids) == 5


def test_tasks_started_by_the_handler_see_its_request(client: TestClient) -> None:
    response = client.get("/in-task")
    assert response.json()["id"] == response.headers["X-Request-Id"]


def test_unmatched_paths_and_odd_methods_keep_labels_bounded(client: TestClient, observed: Observed) -> None:
    assert client.get("/no/such/path/123").status_code == 404
    assert client.request("BREW", "/items/1").status_code == 405
    (missing, _, _), (odd, status, _) = observed.calls
    assert missing.route == UNMATCHED
    assert (odd.method, odd.route, status) == ("OTHER", "/items/{item_id}", 405)


def test_a_mounted_apps_route_keeps_the_mounts_path(client: TestClient, observed: Observed) -> None:
    assert client.get("/mounted/things/7").status_code == 200
    assert client.get("/bare/anything/9").status_code == 200
    assert [info.route for info, _, _ in observed.calls] == ["/mounted/things/{thing}", "/bare"]


def test_an_unhandled_error_is_a_500_observed_and_named(client: TestClient, observed: Observed) -> None:
    response = client.get("/boom")
    assert response.status_code == 500
    [(info, status, _)] = observed.calls
    assert status == 500 and response.headers["X-Request-Id"] == info.id


def test_the_access_line_has_route_status_and_duration(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, ACCESS):
        client.get("/items/7")
    [line] = [r for r in caplog.records if r.name == ACCESS]
    assert line.levelno == logging.INFO and line.getMessage().startswith("GET /items/7 200 ")
    assert (line.route, line.status, line.method, line.path, line.mode) == ("/items/{item_id}", 200, "GET", "/items/7",
                                                                            "keyword")
    assert isinstance(line.duration_ms, float)


def test_probe_routes_log_at_debug(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, ACCESS):
        client.get("/healthz")
    assert not [r for r in caplog.records if r.name == ACCESS]


def test_an_incoming_id_is_ignored_unless_trusted(observed: Observed) -> None:
    sent = uuid7()
    untrusting = TestClient(make_app(observed))
    assert untrusting.get("/items/1", headers={"X-Request-Id": sent}).headers["X-Request-Id"] != sent
    trusting = TestClient(make_app(observed, trust_incoming_id=True))
    assert trusting.get("/items/1", headers={"X-Request-Id": sent}).headers["X-Request-Id"] == sent
    assert trusting.get("/items/1", headers={"X-Request-Id": sent.upper()}).headers["X-Request-Id"] == sent
    for malformed in ("not-an-id", "x" * 36, sent + "0", "'; DROP TABLE"):
        answered = trusting.get("/items/1", headers={"X-Request-Id": malformed}).headers["X-Request-Id"]
        assert uuid.UUID(answered).version == 7


def test_outside_a_request_each_id_is_new() -> None:
    assert current() is None and id_header() == {}
    assert request_id() != request_id()


def test_ids_are_time_ordered_uuid7() -> None:
    first, second = uuid.UUID(uuid7()), uuid.UUID(uuid7())
    assert first.version == 7 and first.variant == uuid.RFC_4122
    assert first.int >> 80 <= second.int >> 80
