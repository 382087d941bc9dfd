"""A research job asked for in a chat (the OpenAI-compatible `wisp-research` model, as sonar-deep-research is
asked): the conversation condensed into one question, the job run within the request, and its report as the
outcome a chat answer is shaped from (the answer with its claims, one passage a source)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wisp_text.chunking import Chunk

from agent.core.hits import Hit
from agent.core.outcome import Answer, CheckedClaim, Citation, SearchOutcome
from agent.core.passage import Passage
from agent.core.query import SearchQuery
from agent.core.research import ResearchJob, ResearchResult
from agent.research.loop import Researcher, run_research
from agent.search.chat import standalone_question

CHAT_EFFORT = "medium"


async def run_research_chat(query: SearchQuery, turns: Sequence[tuple[str, str]], model: str,
                            researcher: Researcher, on_text: Callable[[str], None] | None = None) -> SearchOutcome:
    """The research job of `query`'s last message (with the earlier `turns`), as a chat's outcome."""
    llm = researcher.search.services.upstreams.llm
    question, warning = await standalone_question(query.query, turns, llm)
    job = ResearchJob(question, schema=query.output_schema, effort=CHAT_EFFORT, model=model,
                      system_prompt=query.system_prompt)
    return research_outcome(await run_research(job, researcher, on_text=on_text), model).warned(warning)


def research_outcome(result: ResearchResult, model: str) -> SearchOutcome:
    """The report as a search's outcome: its text (or the schema's value) the answer, each source a result and
    one packed passage (numbered as the report cites them), a job cut short a warning."""
    sources = result.sources
    hits = [Hit(s.url, s.title, s.snippet) for s in sources]
    packed = tuple(Passage(s.url, s.title, Chunk(0, s.snippet, ""), float(len(sources) - n))
                   for n, s in enumerate(sources))
    claims = tuple(CheckedClaim(str(c["text"]), tuple(c["citations"]), bool(c["supported"]), c["score"],
                                c.get("reason")) for c in result.claims)
    answer = Answer(result.text, tuple(Citation(n, s.url, s.title) for n, s in enumerate(sources, 1)), claims,
                    abstained=False, json=result.data, model=model, timings_ms={})
    stopped = f"the research stopped early ({result.stop_reason}): this is what it found" if result.cut_short else None
    return SearchOutcome({"web": hits}, packed=packed, answer=answer).warned(*result.warnings, stopped)
