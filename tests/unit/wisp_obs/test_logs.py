"""Log lines: one JSON object each, with the request's id; what configure() installs; what is never written."""

import io
import json
import logging
from collections.abc import Callable, Iterator

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from wisp_obs import logs
from wisp_obs.requests import ObservedRequests

Configure = Callable[[logs.LogFormat], io.StringIO]


@pytest.fixture
def configure() -> Iterator[Configure]:
    """configure() with its handler writing into a buffer; the root logger as it was afterwards."""
    root = logging.getLogger()
    level = root.level

    def configured(log_format: logs.LogFormat) -> io.StringIO:
        logs.configure("INFO", log_format)
        buffer = io.StringIO()
        [handler] = [h for h in root.handlers if isinstance(h, logs._WispHandler)]
        handler.setStream(buffer)
        return buffer

    yield configured
    for handler in [h for h in root.handlers if isinstance(h, logs._WispHandler)]:
        root.removeHandler(handler)
    root.setLevel(level)


def lines(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def test_a_line_is_one_json_object_with_the_extra_fields(configure: Configure) -> None:
    buffer = configure("json")
    logging.getLogger("wisp.test").info("hello %s", "world", extra={"route": "/v2/search", "status": 200})
    [line] = lines(buffer)
    assert line.pop("time").endswith("+00:00")
    assert line == {"level": "INFO", "logger": "wisp.test", "message": "hello world", "request_id": None,
                    "route": "/v2/search", "status": 200}


def test_an_exception_is_one_line_with_its_traceback(configure: Configure) -> None:
    buffer = configure("json")
    try:
        raise ValueError("bad value")
    except ValueError:
        logging.getLogger("wisp.test").exception("it failed")
    [line] = lines(buffer)
    assert line["level"] == "ERROR" and "ValueError: bad value" in line["exception"]
    assert "Traceback" in line["exception"]


def _app() -> FastAPI:
    app = FastAPI()
    app.add_middleware(ObservedRequests, observe=lambda *_: None, access_log=logging.getLogger("wisp.access"))

    @app.post("/search")
    async def search(request: Request) -> dict:
        await request.body()
        logging.getLogger("wisp.handler").warning("searching")
        return {}

    return app


def test_lines_written_for_a_request_carry_its_id(configure: Configure) -> None:
    buffer = configure("json")
    response = TestClient(_app()).post("/search", json={"query": "a private query"},
                                       headers={"Authorization": "Bearer secret-key-123"})
    handler_line, access_line = [line for line in lines(buffer) if line["logger"].startswith("wisp.")]
    assert handler_line["request_id"] == access_line["request_id"] == response.headers["X-Request-Id"]
    assert (access_line["route"], access_line["status"], access_line["method"]) == ("/search", 200, "POST")
    assert access_line["duration_ms"] >= 0
    assert "secret-key-123" not in buffer.getvalue() and "private query" not in buffer.getvalue()


def test_the_text_format_names_the_request(configure: Configure) -> None:
    buffer = configure("text")
    response = TestClient(_app()).post("/search", json={})
    handler_line = next(line for line in buffer.getvalue().splitlines() if "wisp.handler" in line)
    assert f"WARNING wisp.handler [{response.headers['X-Request-Id']}] searching" in handler_line


def test_configuring_again_replaces_only_its_own_handler(configure: Configure) -> None:
    foreign = logging.NullHandler()
    logging.getLogger().addHandler(foreign)
    try:
        configure("json")
        configure("text")
        root = logging.getLogger()
        assert len([h for h in root.handlers if isinstance(h, logs._WispHandler)]) == 1
        assert foreign in root.handlers
    finally:
        logging.getLogger().removeHandler(foreign)


def test_uvicorn_lines_go_the_same_way_and_its_access_log_is_off(configure: Configure) -> None:
    buffer = configure("json")
    assert not logging.getLogger("uvicorn.access").hasHandlers()  # uvicorn then writes no access line at all
    logging.getLogger("uvicorn.error").warning("from uvicorn")
    assert lines(buffer)[-1]["logger"] == "uvicorn.error"
