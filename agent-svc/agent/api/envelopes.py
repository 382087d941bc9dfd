"""The one mapping from an error to what a client reads: which API's envelope a path answers in (Tavily's routes in
Tavily's `{detail: {error}}`, the OpenAI-compatible ones in OpenAI's `{error: {message, type}}`, every other route
in Firecrawl's), the app's exception handlers that answer with it, and the envelope of an error met after a
streamed response began. The gate's 401s and 429s and the body limit's 413s ask here too, so that a client's
parser always gets its own API's shape."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from wisp_obs.requests import id_header

from agent.api.firecrawl import envelope as firecrawl
from agent.api.openai import wire as openai_wire
from agent.api.tavily import wire as tavily
from agent.errors import WispError

log = logging.getLogger("agent")
Envelope = Callable[[WispError], dict[str, Any]]

_BY_PATH: dict[str, Envelope] = {**dict.fromkeys(tavily.PATHS, tavily.error_body),
                                 **dict.fromkeys(openai_wire.PATHS, openai_wire.error_body)}


def error_body_for(path: str) -> Envelope:
    """The envelope of `path`, or of the route it names an item of (Tavily's /research/{request_id})."""
    return _BY_PATH.get(path) or _BY_PATH.get(path.rsplit("/", 1)[0], firecrawl.error_body)


def as_wisp_error(error: Exception, where: str) -> WispError:
    """A WispError as it is (logged when it is the service's fault); anything else logged with its trace, `where`
    it happened, and a 500 that points at the log rather than a trace."""
    if isinstance(error, WispError):
        if error.status >= 500:
            log.warning("%s: %s", type(error).__name__, error.message)
        return error
    log.error("unhandled error %s", where, exc_info=error)
    return WispError(f"Internal server error ({type(error).__name__}); the details are in agent-svc's log")


def streamed_failure(path: str, error: Exception) -> tuple[dict[str, Any], int]:
    """The envelope and status of an error met after a streamed response began (its status line is sent)."""
    failure = as_wisp_error(error, f"in the stream of {path}")
    return error_body_for(path)(failure), failure.status


def answer_errors(app: FastAPI) -> None:
    """The app's exception handlers: every error a route raises, in its path's envelope."""

    @app.exception_handler(WispError)
    async def wisp_error(request: Request, error: WispError) -> JSONResponse:
        as_wisp_error(error, "")  # logged when it is the service's fault
        return JSONResponse(error_body_for(request.url.path)(error), status_code=error.status, headers=error.headers())

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        message = f"{request.method} {request.url.path}: {error.detail}"
        return JSONResponse(error_body_for(request.url.path)(WispError(message)), status_code=error.status_code)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        failure = as_wisp_error(error, f"on {request.method} {request.url.path}")
        # sent outside the middleware, which names every other response
        return JSONResponse(error_body_for(request.url.path)(failure), status_code=500, headers=id_header())
