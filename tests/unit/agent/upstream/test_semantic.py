import asyncio

import httpx
import pytest

from agent.upstream.semantic import SemanticClient, SemanticUnavailable


def client(response: httpx.Response | Exception) -> SemanticClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(response, Exception):
            raise response
        return response

    return SemanticClient("http://semantic.test", httpx.AsyncClient(transport=httpx.MockTransport(handler)), 2.0)


def test_scores_come_back_as_floats() -> None:
    scores = asyncio.run(client(httpx.Response(200, json={"scores": [1, 0.5]})).rerank("q", ["a", "b"]))
    assert scores == [1.0, 0.5]


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
