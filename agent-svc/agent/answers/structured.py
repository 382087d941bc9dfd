"""`output_schema`: the answer as JSON that validates against the caller's JSON Schema, or null with a warning,
never invalid JSON. The server's structured output constrains the model; the schema is applied to what comes back
(schemas.py: in a worker, fetching nothing), and one repair attempt shows the model its error."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agent.answers.schemas import schema_problem
from agent.answers.synthesis import messages
from agent.core.context import CpuPool
from agent.core.passage import Passage
from agent.upstream.llm import LLMClient, LLMUnavailable


async def structured(question: str, packed: Sequence[Passage], schema: dict[str, Any], system_prompt: str | None,
                     llm: LLMClient, remaining_s: Callable[[], float], pool: CpuPool, model: str | None = None
                     ) -> tuple[Any, str | None]:
    """(the JSON, None), or (None, why) when the model is unavailable or its output never validates."""
    chat = messages(question, packed, system_prompt, rules="Reply with JSON only, filled in from the numbered "
                    "sources.", after=f"\n\nJSON Schema of the reply: {json.dumps(schema)}")
    problem = "no reply"
    for _ in range(2):  # the answer, then one repair, each within what is left then
        try:
            reply = await llm.complete(chat, remaining_s(), schema=schema, model=model)
        except LLMUnavailable as e:
            return None, str(e)
        value, problem = await _validated(reply.text, schema, pool)
        if problem is None:
            return value, None
        chat += [{"role": "assistant", "content": reply.text},
                  {"role": "user", "content": f"That reply is invalid: {problem}. Reply with corrected JSON only."}]
    return None, f"the LLM's JSON did not validate after one repair ({problem})"


async def _validated(text: str, schema: dict[str, Any], pool: CpuPool) -> tuple[Any, str | None]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg})"
    except RecursionError:
        return None, "not JSON (nested too deep to read)"
    problem = await schema_problem(value, schema, pool)
    return (None, problem) if problem else (value, None)
