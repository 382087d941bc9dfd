"""The process's services, made once at start-up: the settings and the clients of every upstream."""

from __future__ import annotations

from dataclasses import dataclass

from agent.config import Settings
from agent.fetch import Fetcher
from agent.ingest import Ingest
from agent.llm_client import LLMClient
from agent.searxng_client import SearxngClient
from agent.semantic_client import SemanticClient
from agent.worker_pool import WorkerPool


@dataclass(frozen=True)
class Services:
    settings: Settings
    searxng: SearxngClient
    semantic: SemanticClient
    fetcher: Fetcher
    cpu_pool: WorkerPool  # page extraction, off the event loop and out of its GIL
    llm: LLMClient  # rich answers
    ingest: Ingest  # pages into the vector index
