"""A chat's search: the earlier turns condense the last user message into a standalone question (with the LLM
when one is configured, else the last message alone, with a warning), then the rich search runs on it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.search.service import Search
from agent.upstream.llm import LLMClient, LLMUnavailable

CONDENSE_RULES = ("Rewrite the user's last message as one standalone search question that needs no earlier turn "
                  "to be understood. Reply with the question only.")
CONDENSE_BUDGET_S = 10.0
CONDENSE_CHARS = 8000  # the conversation's tail the LLM reads: a long chat must not outgrow its context


async def run_chat(query: SearchQuery, turns: Sequence[tuple[str, str]], search: Search,
                   on_text: Callable[[str], None] | None = None) -> SearchOutcome:
    """`query` (whose text is the last user message) searched as the standalone question that `turns`, the
    conversation as (role, content), make of it."""
    question, warning = await standalone_question(query.query, turns, search.services.upstreams.llm)
    outcome = await search.run(replace(query, query=question), on_text)
    return outcome.warned(warning)


async def standalone_question(last: str, turns: Sequence[tuple[str, str]], llm: LLMClient
                              ) -> tuple[str, str | None]:
    """The question to search for, and a warning when the earlier turns could not be used."""
    if len(turns) <= 1:
        return last, None
    if not llm.base_url:
        return last, "no LLM is configured to condense the earlier turns: the last message alone was searched"
    chat = [{"role": "system", "content": CONDENSE_RULES},
            {"role": "user", "content": "\n".join(f"{role}: {content}" for role, content in turns)[-CONDENSE_CHARS:]}]
    try:
        reply = await llm.complete(chat, CONDENSE_BUDGET_S)
    except LLMUnavailable as e:
        return last, f"{e}: the earlier turns were not condensed, the last message alone was searched"
    return reply.text.splitlines()[0].strip() or last, None
