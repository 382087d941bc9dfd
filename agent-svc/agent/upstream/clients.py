"""The clients of every upstream service, made once at start-up from the upstream settings and handed to the
stages that call them (never reached through a request's context). Each client carries how it is to be asked
(SearXNG's paging, the index's reach, the LLM's default model); no stage reads the upstream settings."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from agent.core.tiers import TierStore
from agent.upstream.llm import LLMClient
from agent.upstream.searxng import PagePolicy, SearxngClient
from agent.upstream.semantic import IndexReach, SemanticClient
from agent.upstream.settings import LLMSettings, SearxngSettings, SemanticSvcSettings, SourcesSettings
from agent.upstream.sources.routing import CandidateSources


@dataclass(frozen=True)
class Upstreams:
    searxng: SearxngClient
    semantic: SemanticClient
    llm: LLMClient  # rich answers and the LLM formats
    sources: CandidateSources | None = None  # SEARCH_SOURCES; None: SearXNG alone

    @classmethod
    def of(cls, searxng: SearxngSettings, semantic: SemanticSvcSettings, llm: LLMSettings, sources: SourcesSettings,
           http: httpx.AsyncClient, tiers: TierStore) -> Upstreams:
        """The clients the settings describe, sharing one HTTP client (the LLM's SDK has its own); `tiers`: where
        the extra sources' routing state is kept."""
        return cls(
            SearxngClient(searxng.searxng_url, http, searxng.searxng_timeout_s, searxng.searxng_config_ttl_s,
                          searxng.engine_health_window_s, PagePolicy(searxng.searxng_page_size,
                                                                     searxng.searxng_max_pages)),
            SemanticClient(semantic.semantic_svc_url, http, semantic.semantic_timeout_s, semantic.index_collection,
                           IndexReach(semantic.index_chunks_per_result, semantic.vector_floor),
                           semantic.semantic_admission),
            LLMClient(llm.llm_base_url, llm.llm_api_key, llm.llm_model, llm.llm_max_tokens, llm.llm_system_role),
            CandidateSources.of(sources, http, tiers) if sources.search_sources else None)
