"""Research jobs end to end: real searx on the offline web, real semantic-svc, and a real LLM server (SmolLM2-135M
through llama.cpp's server), driven by the real firecrawl-py and tavily-python. A 135M model plans badly and
writes weak prose: these tests assert what a job must do whatever its LLM (complete, find a page for each part
of a two-part question, cite what it found), not wording; and that with its LLM down a job still completes with
its evidence and says why."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import agent_service
from firecrawl import AsyncFirecrawl, Firecrawl
from tavily import TavilyClient

from offline_web.processes import free_port
from offline_web.stack import llm_service
from tests.integration.test_sdk_js import call_js

# two parts on two sites: the second is searched on its own once the first round's notes leave it uncovered
QUESTION = "How do I squash the last few commits into one with git, and how does SQLite checkpoint the WAL?"
LLM_ENV = {"LLM_MAX_TOKENS": "120", "RICH_CONTEXT_CHARS": "2500"}
WAIT_S = 200  # effort low's 60 s wall clock, on a loaded 2-core machine with one LLM thread


@pytest.fixture(scope="module")
def research_agents(stack, semantic_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    workdir: Path = tmp_path_factory.mktemp("research")
    common = {"SEMANTIC_SVC_URL": semantic_url, "FETCH_ALLOW_HOSTS": "127.0.0.1", **LLM_ENV}
    with llm_service(workdir).started(timeout_s=120) as llm, \
         agent_service(stack.searx.url, workdir, "agent-research", LLM_BASE_URL=f"{llm.url}/v1", **common) as up, \
         agent_service(stack.searx.url, workdir, "agent-research-no-llm",
                       LLM_BASE_URL=f"http://127.0.0.1:{free_port()}/v1", **common) as down:
        yield {"llm": up.url, "down": down.url}


def hosts(sources: list[dict]) -> set[str]:
    """The sites of `sources`: the offline web serves each under its host's name (127.0.0.1:port/<host>/...)."""
    return {s["url"].split("/")[3] for s in sources}


def test_firecrawl_agent_finds_a_page_for_each_part_and_cites_them(research_agents: dict[str, str]) -> None:
    client = Firecrawl(api_key="fc-any", api_url=research_agents["llm"])
    done = client.agent(prompt=QUESTION, effort="low", poll_interval=2, timeout=WAIT_S)
    assert done.status == "completed", done
    status = httpx.get(f"{research_agents['llm']}/v2/agent/{done.id}").json()
    assert {"git-scm.com", "www.sqlite.org"} <= hosts(status["sources"]), status["sources"]
    assert isinstance(done.data, str) and done.data.strip() and done.credits_used >= 3


def test_tavily_research_completes_with_content_and_sources(research_agents: dict[str, str]) -> None:
    client = TavilyClient("any", api_base_url=research_agents["llm"])
    started = client.research(QUESTION, model="mini")
    status = client.get_research(started["request_id"])
    for _ in range(WAIT_S // 2):
        if status["status"] not in ("pending", "in_progress"):
            break
        time.sleep(2)
        status = client.get_research(started["request_id"])
    assert status["status"] == "completed", status
    assert status["content"] and status["sources"] and "Sources:" in status["content"]


def test_with_its_llm_down_a_job_completes_with_its_evidence_and_says_why(research_agents: dict[str, str]) -> None:
    client = Firecrawl(api_key="fc-any", api_url=research_agents["down"])
    done = client.agent(prompt=QUESTION, effort="low", poll_interval=2, timeout=WAIT_S)
    status = httpx.get(f"{research_agents['down']}/v2/agent/{done.id}").json()
    assert done.status == "completed" and done.data.startswith("Evidence found"), status
    assert "LLM" in status["warning"] and {"git-scm.com", "www.sqlite.org"} <= hosts(status["sources"])


def test_a_job_survives_agent_svc_being_killed(stack, tmp_path: Path) -> None:
    """Killed (SIGKILL: no shutdown code runs) right after the start, the job runs again from its start on the
    next agent-svc that opens the same RESEARCH_DB, under the same id."""
    dead_llm = {"LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "FETCH_ALLOW_HOSTS": "127.0.0.1"}
    first = agent_service(stack.searx.url, tmp_path, "agent-research-restart", **dead_llm)
    with first:
        started = httpx.post(first.url + "/v2/agent", json={"prompt": QUESTION, "effort": "low"}).json()
        assert first.process is not None
        first.process.kill()
        first.process.wait()
    with sqlite3.connect(tmp_path / "agent-research-restart-research.sqlite") as kept:
        assert kept.execute("SELECT status FROM background_jobs").fetchall() == [("processing",)]
    with agent_service(stack.searx.url, tmp_path, "agent-research-restart", **dead_llm) as second:
        done = Firecrawl(api_key="fc-any", api_url=second.url).get_agent_status(started["id"])
        deadline = time.monotonic() + WAIT_S
        while done.status == "processing" and time.monotonic() < deadline:
            time.sleep(1)
            done = Firecrawl(api_key="fc-any", api_url=second.url).get_agent_status(started["id"])
    assert done.status == "completed" and done.data.startswith("Evidence found"), done


def test_firecrawl_js_and_async_python_run_a_job_its_thread_and_its_trace(research_agents: dict[str, str]) -> None:
    url = research_agents["down"]  # its LLM is down: each job completes with its evidence, in seconds
    started, status, thread = call_js(url, {"method": "startAgent", "args": [{"prompt": QUESTION, "effort": "low"}]},
                                      {"method": "getAgentStatus", "args": ["$0"]},
                                      {"method": "getAgentThread", "args": ["$0"]})
    assert started["ok"] and status["ok"] and thread["ok"], (started, status, thread)
    [done] = call_js(url, {"method": "agent", "args": [{"prompt": QUESTION, "effort": "low", "pollInterval": 1,
                                                         "timeout": WAIT_S}]}, timeout_s=WAIT_S + 30)
    assert done["ok"] and done["result"]["status"] == "completed" and done["result"]["threadTurn"] == 1, done
    assert len(hosts(done["result"]["sources"])) >= 2
    finished = asyncio.run(AsyncFirecrawl(api_key="fc-any", api_url=url).agent(
        prompt=QUESTION, effort="low", poll_interval=1, timeout=WAIT_S))
    assert finished.status == "completed" and finished.data.startswith("Evidence found")
