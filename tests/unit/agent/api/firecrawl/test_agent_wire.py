"""Firecrawl's agent API as the real firecrawl-py drives it (agent(), start_agent, get_agent_status, cancel_agent),
served by uvicorn on a small web (tests/unit/agent/research/corpus.py); and bad input, a 400 in Firecrawl's
envelope before any job starts."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import Firecrawl
from pydantic import BaseModel

from agent.app import create_app
from agent.config import Settings

from ...fake_searxng import FakeSemantic, serving
from ...research.corpus import FALCON, PAGES, QUESTION, ZEPHYR, CorpusSearxng, ScriptedLLM
from ..served import served

LLM = ScriptedLLM(plan="not json", answer="Ada Quill wrote Falcon [2], which creates the wal directory [1].",
                  data='{"author": "Ada Quill", "tool": "Falcon"}')


class Authorship(BaseModel):
    author: str
    tool: str


@pytest.fixture(scope="module")
def wisp() -> Iterator[str]:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3, support_floor=0.3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(LLM.handle))))
    yield from served(app)


def test_agent_completes_with_a_cited_answer_its_sources_and_claims(wisp: str) -> None:
    done = Firecrawl(api_key="fc-any", api_url=wisp).agent(prompt=QUESTION, effort="low", poll_interval=1, timeout=60)
    assert done.status == "completed" and done.data.startswith("Ada Quill wrote Falcon [2]")
    assert done.model == "spark-1-pro" and done.effort == "low" and done.credits_used >= 2
    status = httpx.get(f"{wisp}/v2/agent/{done.id}").json()
    assert [s["url"] for s in status["sources"]] == [ZEPHYR, FALCON] and status["claims"]


def test_agent_with_a_schema_returns_an_object_that_validates(wisp: str) -> None:
    done = Firecrawl(api_key="fc-any", api_url=wisp).agent(prompt=QUESTION, schema=Authorship, effort="low",
                                                           poll_interval=1, timeout=60)
    assert done.status == "completed" and Authorship.model_validate(done.data) == Authorship(author="Ada Quill",
                                                                                              tool="Falcon")


def test_chat_mode_answers_in_message(wisp: str) -> None:
    done = Firecrawl(api_key="fc-any", api_url=wisp).agent(prompt=QUESTION, mode="chat", effort="low",
                                                           poll_interval=1, timeout=60)
    assert done.status == "completed" and done.message.startswith("Ada Quill") and done.data is None


def test_a_cancelled_job_is_failed_with_its_partial_result_and_a_finished_one_is_a_409() -> None:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    slow = CorpusSearxng(delay_s=1.0)  # each search takes a second: the job is running when the DELETE comes
    serving(app, slow.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3, llm_base_url=""))
    for wisp in served(app):
        client = Firecrawl(api_key="fc-any", api_url=wisp)
        started = client.start_agent(None, prompt=QUESTION, effort="high")
        assert client.cancel_agent(started.id) is True
        ended = client.get_agent_status(started.id)
        for _ in range(60):
            if ended.status != "processing":
                break
            time.sleep(0.5)
            ended = client.get_agent_status(started.id)
        assert ended.status == "failed" and ended.stop_reason == "cancelled" and len(slow.queries) < 3
        again = httpx.delete(f"{wisp}/v2/agent/{started.id}")
        assert again.status_code == 409 and again.json()["success"] is False


def test_a_finished_jobs_trace_is_its_steps_as_firecrawls_events(wisp: str) -> None:
    client = Firecrawl(api_key="fc-any", api_url=wisp)
    done = client.agent(prompt=QUESTION, effort="low", poll_interval=1, timeout=60)
    trace = client.get_agent_trace(done.id)
    kinds = [e.type for e in trace.events]
    assert kinds[0] == "run.started" and kinds[-1] == "run.finished" and trace.events[-1].outcome == "succeeded"
    progress = [e for e in trace.events if e.type == "progress.reported"]
    assert progress[0].phase == "planning" and any(e.message.startswith("search: ") for e in progress)
    assert [e.producer_sequence for e in trace.events] == list(range(len(trace.events)))


def test_another_clients_or_an_unknown_job_is_a_404(wisp: str) -> None:
    reply = httpx.get(f"{wisp}/v2/agent/no-such-job")
    assert reply.status_code == 404 and reply.json() == {"success": False, "error": "Agent job not found"}


@pytest.mark.parametrize(("body", "field"), [
    ({"prompt": ""}, "prompt"),
    ({"prompt": "   "}, "prompt"),
    ({"prompt": "x" * 10_001}, "prompt"),
    ({}, "prompt"),
    ({"prompt": "q", "schema": {"type": 5}}, "schema"),
    ({"prompt": "q", "model": "gpt-5"}, "model"),
    ({"prompt": "q", "effort": "max"}, "effort"),
    ({"prompt": "q", "maxCredits": 0}, "maxCredits"),
    ({"prompt": "q", "webhook": "http://127.0.0.1:9/hook"}, "webhook"),
    ({"prompt": "q", "threadId": "t1"}, "threadId"),
    ({"prompt": "q", "urls": ["file:///etc/passwd"]}, "urls"),
    ({"prompt": "q", "strictConstrainToURLs": True}, "urls"),
])
def test_bad_input_is_a_400_in_firecrawls_envelope(wisp: str, body: dict, field: str) -> None:
    reply = httpx.post(f"{wisp}/v2/agent", json=body)
    assert reply.status_code == 400, reply.text
    error = reply.json()
    assert error["success"] is False and field in str(error)


def test_a_schema_no_value_satisfies_is_a_failed_job_with_its_evidence_as_partial() -> None:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    llm = ScriptedLLM(plan="not json", data='{"author": 7}')  # the extraction's JSON never validates
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle))))
    for url in served(app):
        done = Firecrawl(api_key="fc-any", api_url=url).agent(
            prompt=QUESTION, schema=Authorship, effort="low", poll_interval=1, timeout=60)
        assert done.status == "failed" and done.partial_schema_valid is False and "Ada Quill" in done.partial
        assert "schema" in done.error
