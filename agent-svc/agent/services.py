"""The process's services, made once at start-up: the settings and the clients of every upstream."""

from __future__ import annotations

from dataclasses import dataclass

from agent.config import Settings
from agent.index.ingest import Ingest
from agent.pages.fetch import Fetcher
from agent.pages.workers import WorkerPool
from agent.upstream.llm import LLMClient
from agent.upstream.searxng import SearxngClient
from agent.upstream.semantic import SemanticClient


@dataclass(frozen=True)
class Services:
    settings: Settings
    searxng: SearxngClient
    semantic: SemanticClient
    fetcher: Fetcher
    cpu_pool: WorkerPool  # page extraction, off the event loop and out of its GIL
    llm: LLMClient  # rich answers
    ingest: Ingest  # pages into the vector index
