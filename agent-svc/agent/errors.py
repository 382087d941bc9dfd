"""The exceptions agent-svc raises on purpose; `firecrawl.error_body` turns each into Firecrawl's envelope."""

from __future__ import annotations

from typing import Any


class WispError(Exception):
    """An error with an HTTP status and a message a client can act on."""

    status = 500
    code: str | None = None

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class BadRequest(WispError):
    status = 400


class InvalidJson(BadRequest):
    code = "BAD_REQUEST_INVALID_JSON"

    def __init__(self) -> None:
        super().__init__("Bad request, malformed JSON")


class InvalidRequestBody(BadRequest):
    def __init__(self, details: list[dict[str, Any]]) -> None:
        super().__init__("Invalid request body", details)


class PayloadTooLarge(WispError):
    status = 413
    code = "PAYLOAD_TOO_LARGE"


class SearchTimeout(WispError):
    """The request's own `timeout` ran out (Firecrawl answers 408 for its scrape-phase timeout)."""

    status = 408
    code = "SEARCH_TIMEOUT"


class UpstreamError(WispError):
    """SearXNG (or another upstream) failed; the message names the cause."""

    status = 502
    code = "UPSTREAM_ERROR"


class Degraded(Exception):
    """A stage could not do its part; the caller falls back (to snippets, to SearXNG's order) and warns why."""
