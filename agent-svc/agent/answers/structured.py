"""`output_schema`: the answer as JSON that validates against the caller's JSON Schema, or null with a warning,
never invalid JSON. The server's structured output constrains the model; `jsonschema` checks what comes back,
and one repair attempt shows the model its error."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import jsonschema

from agent.answers.synthesis import messages
from agent.core.passage import Passage
from agent.errors import BadRequest
from agent.upstream.llm import LLMClient, LLMUnavailable

MAX_SCHEMA_CHARS = 20_000
MAX_SCHEMA_DEPTH = 16


def checked_schema(schema: Any, field: str = "output_schema") -> dict[str, Any]:
    """The schema if it is a usable JSON Schema; a 400 naming the problem (and the request's `field`) otherwise."""
    if not isinstance(schema, dict):
        raise BadRequest(f"{field} must be a JSON Schema object")
    if len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        raise BadRequest(f"{field} is larger than {MAX_SCHEMA_CHARS} characters")
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise BadRequest(f"{field} nests deeper than {MAX_SCHEMA_DEPTH} levels")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        raise BadRequest(f"{field} is not a valid JSON Schema: {e.message}") from None
    except Exception as e:  # jsonschema on a hostile schema (`"$schema": []`): a bad schema all the same
        raise BadRequest(f"{field} is not a valid JSON Schema ({type(e).__name__})") from None
    return schema


async def structured(question: str, packed: Sequence[Passage], schema: dict[str, Any], system_prompt: str | None,
                     llm: LLMClient, remaining_s: Callable[[], float], model: str | None = None
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
        value, problem = _validated(reply.text, schema)
        if problem is None:
            return value, None
        chat += [{"role": "assistant", "content": reply.text},
                  {"role": "user", "content": f"That reply is invalid: {problem}. Reply with corrected JSON only."}]
    return None, f"the LLM's JSON did not validate after one repair ({problem})"


def _validated(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg})"
    problem = schema_problem(value, schema)
    return (None, problem) if problem else (value, None)


def schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    """Why `value` does not validate against `schema`; None when it does."""
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        return e.message[:300]
    except Exception as e:  # an unresolvable $ref, found only when validating
        return f"the schema cannot be applied ({type(e).__name__})"
    return None


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_SCHEMA_DEPTH:
        return level
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return max((_depth(v, level + 1) for v in children), default=level)
