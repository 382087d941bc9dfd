"""The clients of every upstream service with the settings they serve, made once at start-up and handed to the
stages that call them (never reached through a request's context)."""

from __future__ import annotations

from dataclasses import dataclass

from agent.config import Settings
from agent.upstream.llm import LLMClient
from agent.upstream.searxng import SearxngClient
from agent.upstream.semantic import SemanticClient


@dataclass(frozen=True)
class Upstreams:
    settings: Settings
    searxng: SearxngClient
    semantic: SemanticClient
    llm: LLMClient  # rich answers and the LLM formats
