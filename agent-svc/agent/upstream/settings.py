"""The upstream services' settings: SearXNG, semantic-svc and its index, the LLM, the extra sources (their
entries' shape is in sources/settings.py). Their clients are made from these at start-up; no other stage reads
them."""

from __future__ import annotations

from pydantic import Field, field_validator

from agent.core.section import Section
from agent.upstream.sources.settings import SourceConfig, distinct_sources

# bench/vector_eval.py on the dev set with the offline embedder, 3 crawled sites (845 pages, 10,007 chunks): the
# best chunk of the 16 queries about them scored cosine 0.613–0.848, of the 47 others 0.298–0.560; the midpoint,
# 0.586, is this probability of relevance under the embedder's calibration (semantic-svc's relevance set)
VECTOR_FLOOR = 0.56


class SearxngSettings(Section):
    """SearXNG: where it answers, how long to wait, how many pages to ask."""

    searxng_url: str = Field("http://127.0.0.1:8080", description="Base URL of the SearXNG instance")
    searxng_timeout_s: float = Field(10.0, gt=0, description="Longest wait for one SearXNG answer")
    searxng_page_size: int = Field(
        10, ge=1, le=100, description="Results expected per SearXNG page, to decide how many pages to ask at once"
    )
    searxng_max_pages: int = Field(5, ge=1, le=20, description="Most SearXNG pages fetched for one source")
    searxng_config_ttl_s: float = Field(300.0, ge=0, description="How long SearXNG's /config (engines) is cached")
    engine_health_window_s: float = Field(600.0, gt=0, description="/readyz: how far back SearXNG's answers tell "
                                          "which engines answer")


class SemanticSvcSettings(Section):
    """semantic-svc and its vector index: where, how long to wait, what counts as an answer in the index."""

    semantic_svc_url: str = Field("http://127.0.0.1:8081", description="Base URL of semantic-svc")
    semantic_timeout_s: float = Field(
        8.0, gt=0, description="Longest wait for one semantic-svc answer (the pipeline's time left bounds it too)")
    index_collection: str = Field("", max_length=200, description="Qdrant collection of the vector index (empty: "
                                  "semantic-svc's QDRANT_COLLECTION)")
    vector_floor: float = Field(
        VECTOR_FLOOR, ge=0, le=1, description="vector modes: a query whose best indexed chunk's probability of "
        "relevance lies below this has no answer in the index (a probability: the same for every embedder)")
    index_chunks_per_result: int = Field(4, ge=1, le=25, description="vector modes: chunks asked of the index per "
                                         "result wanted (a page's chunks crowd the nearest ones)")
    semantic_admission: bool = Field(
        True, description="Weigh the work queued in semantic-svc's model lane (it reports it with every answer): a "
        "ranked search whose texts it would not reach before the deadline is not sent (its mode ranks without the "
        "model), and batches are sized to the time left after the queue; false: every search joins the queue")


class LLMSettings(Section):
    """The OpenAI-compatible LLM of rich answers, the LLM formats and extractions."""

    llm_base_url: str = Field("http://127.0.0.1:8091/v1", description="OpenAI-compatible LLM server for rich "
                              "answers (llama.cpp's server, vLLM, Ollama's /v1, or a hosted API)")
    llm_model: str = Field("default", description="Model asked for; a request's `llm.model` may choose another")
    llm_api_key: str = Field("", description="API key of the LLM server (a hosted provider needs one)")
    llm_system_role: bool = Field(True, description="false: send the system message at the top of the user turn, "
                                  "for chat templates that drop system messages (Gemma's)")
    llm_max_tokens: int = Field(320, ge=16, le=8192, description="Longest answer, in tokens")


class SourcesSettings(Section):
    """Extra candidate sources queried beside SearXNG, and their bounds."""

    search_sources: list[SourceConfig] = Field(
        default_factory=list, max_length=8, description="Extra candidate sources, a JSON list (docs/configuration.md"
        ", \"Extra sources\"); empty: SearXNG alone")
    sources_timeout_s: float = Field(5.0, gt=0, le=30, description="Longest wait for the extra sources, within the "
                                     "time the pipeline leaves for SearXNG")
    source_max_bytes: int = Field(4_000_000, ge=10_000, le=50_000_000, description="Largest answer read from one "
                                  "extra source")
    source_text_chars: int = Field(20_000, ge=500, le=200_000, description="Most characters of page text kept of "
                                   "one extra source's result")

    @field_validator("search_sources")
    @classmethod
    def _distinct_sources(cls, sources: list[SourceConfig]) -> list[SourceConfig]:
        return distinct_sources(sources)
