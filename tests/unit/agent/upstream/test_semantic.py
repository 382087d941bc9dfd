import asyncio

import httpx
import pytest

from agent.core.ratings import Ratings
from agent.upstream.semantic import SemanticClient, SemanticUnavailable


def client(response: httpx.Response | Exception) -> SemanticClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(response, Exception):
            raise response
        return response

    return SemanticClient("http://semantic.test", httpx.AsyncClient(transport=httpx.MockTransport(handler)), 2.0)


def test_scores_come_back_as_floats() -> None:
    ratings = asyncio.run(client(httpx.Response(200, json={"scores": [1, 0.5]})).rerank("q", ["a", "b"]))
    assert ratings == Ratings((1.0, 0.5), None)  # an uncalibrated model: no probabilities


@pytest.mark.parametrize(("probabilities", "expected"), [
    ([0.9, 0.1], (0.9, 0.1)),
    ([0.9], None),  # not one per passage
    ([1.5, 0.1], None),  # not a probability
    (None, None),
])
def test_probabilities_come_back_when_they_are_probabilities(probabilities: object, expected: object) -> None:
    body = {"scores": [3, -1], "probabilities": probabilities}
    ratings = asyncio.run(client(httpx.Response(200, json=body)).similarity("q", ["a", "b"]))
    assert ratings.scores == (3.0, -1.0) and ratings.probabilities == expected


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(200, json={"scores": [0.1]}), "without one score per passage"),
        (httpx.Response(200, json=[1, 2]), "without one score per passage"),
        (httpx.Response(200, text="<html>"), "without one score per passage"),
        (httpx.Response(200, content=b'{"scores": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"), "without one score"),
        (httpx.Response(200, content=b'{"scores": [' + b"1" * 100_000 + b", 1]}"), "without one score per passage"),
        (httpx.Response(200, json={"scores": ["x", "y"]}), "without one score per passage"),
        (httpx.Response(503, json={"error": "loading models"}), "HTTP 503: loading models"),
        (httpx.ConnectError("refused"), "unreachable at http://semantic.test"),
        (httpx.ReadTimeout("slow"), "did not answer /similarity within"),
    ],
)
def test_every_failure_is_semantic_unavailable(response, message: str) -> None:
    with pytest.raises(SemanticUnavailable, match=message):
        asyncio.run(client(response).similarity("q", ["a", "b"]))


def test_the_lane_wait_is_the_reported_queue_and_the_calls_out_since() -> None:
    answered: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        answered.append(request.url.path)
        if len(answered) == 2:  # while this one waits, the client counts it
            assert semantic.lane_wait_s() == pytest.approx(3.0 + 2.0, abs=0.05)
        return httpx.Response(200, json={"scores": [0.5], "speed": {"kind": "rerank", "ms_per_kchar": 2000.0,
                                                                     "queued_ms": 3000.0}})

    semantic = SemanticClient("http://semantic.test", httpx.AsyncClient(transport=httpx.MockTransport(handler)), 2.0)
    assert semantic.lane_wait_s() == 0
    asyncio.run(semantic.rerank("q" * 10, ["p" * 990]))
    assert semantic.lane_wait_s() == pytest.approx(3.0, abs=0.05)  # semantic-svc said so, a moment ago
    asyncio.run(semantic.rerank("q" * 10, ["p" * 990]))  # 1,000 characters at 2 s per 1,000
