"""Firecrawl's agent API as the real firecrawl-py drives it (agent(), start_agent, get_agent_status, cancel_agent),
served by uvicorn on a small web (tests/unit/agent/research/corpus.py); and bad input, a 400 in Firecrawl's
envelope before any job starts."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import AgentWebhookConfig
from pydantic import BaseModel

from agent.app import create_app
from agent.config import Settings

from ...fake_searxng import FakeSemantic, WebhookReceiver, serving
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
    ({"prompt": "q", "webhook": "http://10.0.0.7/hook"}, "webhook"),  # private: the SSRF guard's refusal
    ({"prompt": "q", "webhook": "http://169.254.169.254/latest/meta-data"}, "webhook"),
    ({"prompt": "q", "webhook": "file:///etc/passwd"}, "webhook"),
    ({"prompt": "q", "webhook": {"url": WebhookReceiver.URL, "events": ["page"]}}, "webhook"),
    ({"prompt": "q", "webhook": {"url": WebhookReceiver.URL, "secret": "x"}}, "webhook"),
    ({"prompt": "q", "webhook": 7}, "webhook"),
    ({"prompt": "q", "threadId": "  "}, "threadId"),
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


def test_a_webhook_gets_the_jobs_events_in_order_signed_with_its_metadata() -> None:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    receiver = WebhookReceiver(secret="s3cret")
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3, support_floor=0.3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(LLM.handle))),
            receiver)
    for wisp in served(app):
        webhook = AgentWebhookConfig(url=WebhookReceiver.URL, headers={"X-Run": "7"}, metadata={"batch": "b1"})
        done = Firecrawl(api_key="fc-any", api_url=wisp).agent(prompt=QUESTION, effort="low", webhook=webhook,
                                                               poll_interval=1, timeout=60)
        assert done.status == "completed"
        types = receiver.types
        assert types[0] == "agent.started" and types[-1] == "agent.completed" and "agent.action" in types
        assert all(b["id"] == done.id and b["metadata"] == {"batch": "b1"} for b in receiver.bodies)
        assert receiver.bodies[-1]["data"][0]["data"] == done.data and receiver.bodies[-1]["success"] is True
        assert len({b["webhookId"] for b in receiver.bodies}) == len(types)
        for request in receiver.received:
            signature = hmac.new(b"s3cret", request.content, hashlib.sha256).hexdigest()
            assert request.headers["x-firecrawl-signature"] == f"sha256={signature}"
            assert request.headers["x-run"] == "7" and request.headers["host"] == "127.0.0.1:9"


def test_a_webhook_gets_only_the_events_it_asked_for_and_a_cancel() -> None:
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    receiver = WebhookReceiver()
    serving(app, CorpusSearxng(delay_s=1.0).search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3,
                                                   llm_base_url=""), receiver)
    for wisp in served(app):
        started = httpx.post(f"{wisp}/v2/agent", json={
            "prompt": QUESTION, "effort": "high",
            "webhook": {"url": WebhookReceiver.URL, "events": ["completed", "cancelled"]}}).json()
        httpx.delete(f"{wisp}/v2/agent/{started['id']}")
        for _ in range(60):
            if receiver.types:
                break
            time.sleep(0.5)
        assert receiver.types == ["agent.cancelled"] and receiver.bodies[0]["success"] is False


def test_a_receiver_that_is_down_gets_the_start_and_the_end_tried_and_the_job_completes(monkeypatch) -> None:
    from agent.pages import webhooks

    monkeypatch.setattr(webhooks, "RETRY_DELAYS_S", (0.0, 0.0))
    app = create_app(Settings.of(searxng_url="http://searx.test"))
    receiver = WebhookReceiver(status=503)
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3, support_floor=0.3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(LLM.handle))),
            receiver)
    for wisp in served(app):
        done = Firecrawl(api_key="fc-any", api_url=wisp).agent(prompt=QUESTION, effort="low",
                                                               webhook=WebhookReceiver.URL, poll_interval=1,
                                                               timeout=60)
        assert done.status == "completed"
        assert receiver.types == ["agent.started"] * 3 + ["agent.completed"] * 3  # each tried 3 times, no actions


def test_a_thread_continues_with_its_earlier_turns_and_lists_its_runs(wisp: str) -> None:
    client = Firecrawl(api_key="fc-any", api_url=wisp)
    first = client.agent(prompt=QUESTION, effort="low", poll_interval=1, timeout=60)
    status = client.get_agent_status(first.id)
    assert status.thread_id == first.id and status.thread_turn == 1
    second = client.agent(prompt="And in which year?", thread_id=first.id, effort="low", poll_interval=1, timeout=60)
    again = client.get_agent_status(second.id)
    assert second.status == "completed" and again.thread_id == first.id and again.thread_turn == 2
    steps = [e.message for e in client.get_agent_trace(second.id).events if e.type == "progress.reported"]
    assert steps[0].startswith("plan: turn 2 of its thread, asked as: And in which year?")  # the first turn's words
    thread = client.get_agent_thread(first.id, include_data=True).thread
    assert thread.status == "idle" and [r.turn for r in thread.runs] == [1, 2]
    assert [r.prompt for r in thread.runs] == [QUESTION, "And in which year?"] and thread.runs[0].data == first.data
    assert client.get_agent_thread(first.id).thread.runs[0].data is None


def test_an_unknown_thread_or_a_later_runs_id_is_a_404_in_firecrawls_envelope(wisp: str) -> None:
    for thread_id in ("no-such-thread",):
        reply = httpx.post(f"{wisp}/v2/agent", json={"prompt": "q", "threadId": thread_id})
        assert reply.status_code == 404 and reply.json() == {"success": False, "error": "Agent thread not found"}
        assert httpx.get(f"{wisp}/v2/agent/threads/{thread_id}").status_code == 404
    first = httpx.post(f"{wisp}/v2/agent", json={"prompt": QUESTION, "effort": "low"}).json()["id"]
    busy = httpx.post(f"{wisp}/v2/agent", json={"prompt": "and then?", "threadId": first})
    for _ in range(60):
        if httpx.get(f"{wisp}/v2/agent/{first}").json()["status"] != "processing":
            break
        time.sleep(0.5)
    assert busy.status_code in (200, 409)  # 409 while the first turn runs; it may already have ended
    later = busy.json()["id"] if busy.status_code == 200 else None
    if later is not None:
        assert httpx.get(f"{wisp}/v2/agent/threads/{later}").status_code == 404
