import asyncio
import logging

import httpx
import pytest

from agent.upstream.model_check import log_model_costs
from agent.upstream.semantic import SemanticClient

MODELS = {"embedder": {"model": "bge-m3"}, "reranker": {"model": "bge-reranker-v2-m3"},
          "speed": {"rerank": {"ms_per_kchar": 900.0, "ms_per_text": 300.0, "calls": 1, "source": "calibration"}},
          "warnings": ["bge-reranker-v2-m3: hybrid's rerank takes about 27 s, past the 8 s deadline"]}


def client(answers: list[httpx.Response]) -> SemanticClient:
    async def handle(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/models"
        return answers.pop(0)

    return SemanticClient("http://semantic.test", httpx.AsyncClient(transport=httpx.MockTransport(handle)), 5.0)


def test_semantic_svcs_warning_is_logged_and_its_speed_becomes_the_pace_once_it_answers(
        caplog: pytest.LogCaptureFixture) -> None:
    semantic = client([httpx.Response(503, json={"error": "loading"}), httpx.Response(200, json=MODELS)])
    with caplog.at_level(logging.INFO, logger="agent.upstream.model_check"):
        asyncio.run(log_model_costs(semantic, retry_s=0))
    assert semantic.pace("rerank") == 900.0 and semantic.pace("embed") is None
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warned] == [f"semantic-svc: {MODELS['warnings'][0]}"]


def test_a_semantic_svc_that_never_answers_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    semantic = client([httpx.Response(503, json={"error": "loading"})] * 24)
    with caplog.at_level(logging.INFO, logger="agent.upstream.model_check"):
        asyncio.run(log_model_costs(semantic, retry_s=0))
    assert [r.getMessage() for r in caplog.records] == ["semantic-svc did not answer /models within 0 s of start"]
