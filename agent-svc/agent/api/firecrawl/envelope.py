"""Firecrawl's error envelope (`{success: false, error, code?, details?}`), which every route outside Tavily's and
OpenAI's answers in (api/envelopes.py picks it by path)."""

from __future__ import annotations

from typing import Any

from agent.errors import WispError


def error_body(error: WispError) -> dict[str, Any]:
    """The one mapping from an exception to Firecrawl's error envelope."""
    body: dict[str, Any] = {"success": False, "error": error.message}
    if error.code:
        body["code"] = error.code
    if error.details is not None:
        body["details"] = error.details
    return body
