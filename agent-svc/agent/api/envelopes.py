"""Which API's error envelope a path answers in: Tavily's routes in Tavily's (`{detail: {error}}`), the OpenAI-
compatible ones in OpenAI's (`{error: {message, type}}`), every other route in Firecrawl's. The gate's 401s and
429s, the body limit's 413s and the app's 404s, 405s and 500s all ask here, so that a client's parser always
gets its own API's shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.api.firecrawl import search_wire as firecrawl
from agent.api.openai import wire as openai_wire
from agent.api.tavily import wire as tavily
from agent.errors import WispError

Envelope = Callable[[WispError], dict[str, Any]]

_BY_PATH: dict[str, Envelope] = {**dict.fromkeys(tavily.PATHS, tavily.error_body),
                                 **dict.fromkeys(openai_wire.PATHS, openai_wire.error_body)}


def error_body_for(path: str) -> Envelope:
    return _BY_PATH.get(path, firecrawl.error_body)
