"""The exceptions agent-svc raises on purpose, under one root: a `WispError` is answered with its HTTP status
(`api.firecrawl.error_body` turns each into Firecrawl's envelope, in one place); a `Degraded` is caught by the
stage's caller, which falls back and warns why."""

from __future__ import annotations

from typing import Any


class AgentError(Exception):
    """Every exception agent-svc raises on purpose."""


class WispError(AgentError):
    """An error with an HTTP status and a message a client can act on."""

    status = 500
    code: str | None = None

    def __init__(self, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def headers(self) -> dict[str, str]:
        """HTTP headers the error's response carries."""
        return {}


class BadRequest(WispError):
    status = 400


class InvalidJson(BadRequest):
    code = "BAD_REQUEST_INVALID_JSON"

    def __init__(self) -> None:
        super().__init__("Bad request, malformed JSON")


class InvalidRequestBody(BadRequest):
    """A search body its schema refuses: Firecrawl's search controllers answer these themselves, with this
    message and the zod issues in `details`."""

    def __init__(self, details: list[dict[str, Any]]) -> None:
        super().__init__("Invalid request body", details)


class Forbidden(WispError):
    status = 403


class NotFound(WispError):
    status = 404


class JobNotFound(NotFound):
    """No crawl, batch scrape or extraction of that id: never started, expired, of another kind, or another
    client's (Firecrawl answers another team's extraction as one it does not have)."""

    def __init__(self, message: str = "Job not found") -> None:
        super().__init__(message)


class AlreadyFinished(WispError):
    status = 409

    def __init__(self, status: str, what: str = "Crawl") -> None:
        super().__init__(f"{what} is already {status}")


class ThreadBusy(WispError):
    """A research thread's last job is still running: a follow-up waits for its answer."""

    status = 409


class PastTimeLimit(WispError):
    """More URLs for a job past CRAWL_MAX_DURATION_S: it would stop at once, leaving them unvisited."""

    status = 409


class InvalidRequest(BadRequest):
    """Any other body its schema refuses (scrape, crawl, ...), as Firecrawl's global zod handler answers it: code
    BAD_REQUEST, the zod issues in `details`, and as `error` the first issue's message when that issue is a
    custom check (a refinement such as waitFor's), else "Bad Request"."""

    code = "BAD_REQUEST"

    def __init__(self, details: list[dict[str, Any]]) -> None:
        first = details[0] if details else {}
        super().__init__(first["message"] if first.get("code") == "custom" else "Bad Request", details)

    @classmethod
    def check(cls, message: str, path: list[str | int] | None = None) -> InvalidRequest:
        """One failed custom check on the field at `path` (the body itself when None)."""
        return cls([{"code": "custom", "path": path or [], "message": message}])


class UnsupportedFile(BadRequest):
    """An upload to /v2/parse of a type Wisp does not read (an image, a spreadsheet, a ZIP archive)."""

    code = "UNSUPPORTED_FILE_TYPE"  # Firecrawl's


class UnreadableFile(BadRequest):
    """An upload to /v2/parse of a type Wisp reads that gives no text: empty, corrupt, or not what it says."""

    code = "PARSE_UNREADABLE_FILE"


class UnsupportedParseOption(BadRequest):
    """A /v2/parse option that needs a page to load (actions, waitFor, a screenshot, ...): nothing loads."""

    code = "PARSE_UNSUPPORTED_OPTIONS"  # Firecrawl's


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


class SharedStateUnavailable(WispError):
    """The state replicas share (Redis) cannot be reached: the job routes answer this until it is back."""

    status = 503
    code = "SHARED_STATE_UNAVAILABLE"


class TooManyCrawls(WispError):
    """CRAWL_MAX_JOBS crawls and batch scrapes are unfinished."""

    status = 429
    code = "TOO_MANY_CRAWLS"


class TooManyExtracts(WispError):
    """EXTRACT_MAX_JOBS extractions are unfinished."""

    status = 429
    code = "TOO_MANY_EXTRACTS"


class TooManyResearchJobs(WispError):
    """RESEARCH_MAX_JOBS research jobs are unfinished."""

    status = 429
    code = "TOO_MANY_RESEARCH_JOBS"


class Unauthorized(WispError):
    """No key, or not one of API_KEYS (Firecrawl's wording: "Unauthorized", "Unauthorized: Invalid token")."""

    status = 401

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}


class RateLimited(WispError):
    """A client's per-minute limit or its cap on costly requests in flight is spent."""

    status = 429

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


class Degraded(AgentError):
    """A stage could not do its part; the caller falls back (to snippets, to SearXNG's order) and warns why."""
