"""Every API's request bodies, read the same way: raw bytes → JSON within the request limits (gate/body_limits.py)
→ the surface's pydantic model, with what the schema refuses as zod-like issues (Firecrawl's clients know zod's
codes; Tavily's and OpenAI's envelopes word the same issues their own way)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError, ValidationInfo

from agent.answers.schemas import checked_schema
from agent.api.gate.body_limits import RequestLimits, parsed_json
from agent.errors import BadRequest, InvalidRequest

log = logging.getLogger(__name__)


M = TypeVar("M", bound=BaseModel)
DEFAULT_LIMITS = RequestLimits()
# how a body its schema refuses is answered: search's controllers word it themselves, every other endpoint's
# goes to Firecrawl's global zod handler (errors.InvalidRequest)
Refusal = Callable[[list[dict[str, Any]]], BadRequest]


async def read_request(request: Request, model: type[M], refusal: Refusal = InvalidRequest) -> M:
    """The request's body as `model`, within the service's request limits (see `parsed`)."""
    return parsed(await request.body(), model, request.app.state.request_limits, refusal)


def parsed(raw: bytes, model: type[M], limits: RequestLimits = DEFAULT_LIMITS,
           refusal: Refusal = InvalidRequest) -> M:
    """Raw body → the request model; raises InvalidJson, BadRequest past a limit, or `refusal` with zod-like
    issues."""
    body = parsed_json(raw, limits)
    if not isinstance(body, dict):
        raise refusal([_issue("invalid_type", [], "Invalid input: expected object")])
    try:
        request = model.model_validate(body, context={"limits": limits})
    except ValidationError as e:
        raise refusal([_issue_of(error) for error in e.errors()]) from None
    if request.model_extra:
        log.info("ignoring unknown request keys: %s", sorted(request.model_extra))
    return request


def limits_of(info: ValidationInfo) -> RequestLimits | None:
    """The request limits a model's validators check against (None: validated without any)."""
    return (info.context or {}).get("limits")


# pydantic error types → the zod issue codes Firecrawl's clients know
_ZOD_CODES = {
    "missing": "invalid_type", "string_type": "invalid_type", "int_type": "invalid_type", "bool_type": "invalid_type",
    "list_type": "invalid_type", "dict_type": "invalid_type", "model_type": "invalid_type",
    "int_from_float": "invalid_type", "greater_than": "too_small", "greater_than_equal": "too_small",
    "string_too_short": "too_small", "less_than": "too_big", "less_than_equal": "too_big",
    "string_too_long": "too_big", "too_long": "too_big", "too_short": "too_small", "float_type": "invalid_type",
    "literal_error": "invalid_value", "enum": "invalid_value", "value_error": "custom",
}


def _issue_of(error: dict[str, Any]) -> dict[str, Any]:
    path = list(error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "missing":
        message = "Required"
    # "custom" is a check of Wisp's own (a field validator's ValueError), as zod's refinements are
    return _issue(_ZOD_CODES.get(error["type"], "invalid_value"), path, message)


def _issue(code: str, path: list[Any], message: str) -> dict[str, Any]:
    return {"code": code, "path": path, "message": message}


def request_schema(value: Any, field: str = "schema") -> dict[str, Any] | None:
    """A request's JSON Schema (its `field`) checked (answers/schemas.py), or None when it gives none; a 400
    naming `field`."""
    if value in (None, {}):
        return None
    try:
        return checked_schema(value, field)
    except BadRequest as e:
        raise InvalidRequest.check(e.message, [field]) from None
