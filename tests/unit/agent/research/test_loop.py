"""The research loop on a small web: a bridge question's second hop found from the words its first hop's page
adds, with no LLM and with a poor one; a valid plan used; and every way a job is cut short (maxCredits, a cancel,
the deadline) ending with what it has and saying why."""

from __future__ import annotations

import asyncio
import itertools

import httpx
import pytest

from agent.core.research import CANCELLED, CONVERGED, CREDITS, DEADLINE, DONE, ResearchJob
from agent.research import budget, loop
from agent.research.budget import Budget
from agent.research.loop import Researcher, run_research
from agent.research.settings import ResearchSettings

from ..fake_searxng import FakeSemantic, WebhookReceiver
from .corpus import CATS, FALCON, PAGES, QUESTION, ZEPHYR, CorpusSearxng, ScriptedLLM


def researched(job: ResearchJob, llm: ScriptedLLM | None = None, engine: CorpusSearxng | None = None,
               cancelled=lambda: False):
    engine = engine or CorpusSearxng()
    llm_settings = {"llm_http": httpx.AsyncClient(transport=httpx.MockTransport(llm.handle))} if llm else \
        {"llm_base_url": ""}
    search = engine.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=3, **llm_settings)
    return asyncio.run(run_research(job, Researcher(ResearchSettings(), search, WebhookReceiver().sender()),
                                    cancelled))


def urls(result) -> list[str]:
    return [s.url for s in result.sources]


def test_without_an_llm_the_second_hop_is_found_from_the_words_the_first_page_adds() -> None:
    engine = CorpusSearxng()
    result = researched(ResearchJob(QUESTION), engine=engine)
    assert urls(result) == [ZEPHYR, FALCON] and CATS not in urls(result)
    assert "falcon" in engine.queries[1].lower()  # the follow-up asked about the tool the first page named
    assert "Ada Quill" in result.text and result.text.startswith("Evidence found")
    assert result.stop_reason in (CONVERGED, DONE) and not result.cut_short
    assert result.credits_used == len(engine.queries) and result.llm_calls == 0  # no LLM to call
    assert [s.kind for s in result.steps][:3] == ["plan", "search", "reflect"]


def test_a_poor_llm_changes_nothing_it_cannot_back() -> None:
    llm = ScriptedLLM(plan="Sure! Here are some queries: zephyr, falcon", answer="I cannot browse the web.")
    result = researched(ResearchJob(QUESTION), llm)
    assert urls(result) == [ZEPHYR, FALCON]
    assert "(from the question's parts)" in result.steps[0].detail
    assert llm.asked_for_queries() >= 2  # the plan and a follow-up were asked, and their replies set aside


def test_a_valid_plan_is_searched_in_the_first_round() -> None:
    llm = ScriptedLLM(plan='{"queries": ["falcon tool author", "zephyr database wal directory"]}',
                      answer="Ada Quill wrote Falcon [2], the tool that creates the wal directory [1].")
    engine = CorpusSearxng()
    result = researched(ResearchJob(QUESTION, effort="low"), llm, engine)
    assert engine.queries[:2] == [QUESTION, "falcon tool author"]
    assert set(urls(result)) == {ZEPHYR, FALCON}
    assert "Ada Quill wrote Falcon" in result.text and result.claims


def test_max_credits_stops_the_job_with_what_it_has() -> None:
    result = researched(ResearchJob(QUESTION, max_credits=1))
    assert result.stop_reason == CREDITS and result.cut_short and result.credits_used == 1
    assert urls(result) == [ZEPHYR] and "Falcon" in result.text


def test_a_cancel_stops_the_job_before_its_next_step_and_keeps_its_evidence() -> None:
    answers = itertools.chain([False], itertools.repeat(True))
    result = researched(ResearchJob(QUESTION), cancelled=lambda: next(answers))
    assert result.stop_reason == CANCELLED and urls(result) == [ZEPHYR] and result.llm_calls == 0


def test_the_deadline_ends_the_search_and_the_report_is_written_from_the_notes(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    monkeypatch.setitem(budget.EFFORT_BUDGETS, "low", Budget(rounds=3, queries=2, results=5, llm_calls=3, wall_s=6.0,
                                                             write_share=0.5))
    gate = asyncio.Event()  # never set: the second round's search waits past the deadline

    class Stalling(CorpusSearxng):
        async def handle(self, request: httpx.Request) -> httpx.Response:
            if "falcon" in request.url.params.get("q", "").lower():
                await gate.wait()
            return await super().handle(request)

    result = researched(ResearchJob(QUESTION, effort="low"), engine=Stalling())
    assert result.stop_reason == DEADLINE and result.cut_short and urls(result) == [ZEPHYR]
    assert [s.kind for s in result.steps[-2:]] == ["write", "end"] and result.steps[-1].at_s < 6.0


def test_strict_urls_read_the_pages_given_and_search_their_sites_alone() -> None:
    engine = CorpusSearxng()
    result = researched(ResearchJob(QUESTION, urls=(FALCON,), strict_urls=True, effort="low"), engine=engine)
    assert urls(result)[0] == FALCON and result.steps[0].kind == "read"
    assert engine.queries and all("site:docs.test" in q for q in engine.queries)


def test_a_poor_plan_cannot_crowd_out_a_part_of_the_question() -> None:
    question = "Who wrote Falcon, and where does Zephyr keep its journal?"
    llm = ScriptedLLM(plan='{"queries": ["falcon author", "falcon history", "falcon written by"]}')
    engine = CorpusSearxng()
    result = researched(ResearchJob(question, effort="low"), llm, engine)
    assert engine.queries[:2] == [question, "Who wrote Falcon"]
    assert "where does Zephyr keep its journal" in " ".join(engine.queries) and set(urls(result)) >= {ZEPHYR, FALCON}


class FailingLLM(ScriptedLLM):
    """An LLM server that answers 503, or with `stall`, never answers."""

    def __init__(self, stall: bool = False) -> None:
        super().__init__()
        self.stall = stall

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.stall:
            await asyncio.Event().wait()
        return httpx.Response(503, json={"error": {"message": "overloaded"}})


@pytest.mark.parametrize("stall", [False, True])
def test_an_llm_that_fails_or_stalls_leaves_the_evidence_and_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                     stall: bool) -> None:
    monkeypatch.setattr(loop, "LLM_STEP_S", 0.2)
    monkeypatch.setitem(budget.EFFORT_BUDGETS, "low", Budget(rounds=2, queries=2, results=5, llm_calls=3, wall_s=8.0))
    llm = FailingLLM(stall)
    result = researched(ResearchJob(QUESTION, effort="low"), llm)
    assert urls(result) == [ZEPHYR, FALCON] and result.text.startswith("Evidence found") and llm.requests
    assert any("LLM" in w for w in result.warnings) and not result.cut_short


def test_a_cancel_that_comes_while_the_report_is_written_still_ends_the_job_as_cancelled() -> None:
    llm = ScriptedLLM(plan="not json", answer="Ada Quill wrote Falcon [2].")
    writing = lambda: any(not r.get("response_format") for r in llm.requests)  # noqa: E731 - the report was asked
    result = researched(ResearchJob(QUESTION, effort="low"), llm, cancelled=writing)
    assert result.stop_reason == CANCELLED and result.text.startswith("Ada Quill wrote Falcon [2].\n\nKey evidence:")


def test_a_written_report_ends_with_each_sources_key_passage_cited_by_its_number() -> None:
    llm = ScriptedLLM(plan="not json", answer="Ada Quill wrote Falcon [2].")
    result = researched(ResearchJob(QUESTION, effort="low"), llm=llm)
    answer, evidence = result.text.split("\n\nKey evidence:\n", 1)
    assert answer == "Ada Quill wrote Falcon [2]." and urls(result)[:2] == [ZEPHYR, FALCON]
    assert f"[1] Zephyr storage ({ZEPHYR})" in evidence and f"[2] Falcon history ({FALCON})" in evidence
    assert "> Falcon was written by Ada Quill in 2019" in evidence
