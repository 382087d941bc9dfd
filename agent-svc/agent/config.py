"""Every setting of agent-svc, read from the environment (documented in the README)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    searxng_url: str = Field("http://127.0.0.1:8080", description="Base URL of the SearXNG instance")
    searxng_timeout_s: float = Field(10.0, gt=0, description="Longest wait for one SearXNG answer")
    searxng_page_size: int = Field(
        10, ge=1, le=100, description="Results expected per SearXNG page, to decide how many pages to ask at once"
    )
    searxng_max_pages: int = Field(5, ge=1, le=20, description="Most SearXNG pages fetched for one source")
    searxng_config_ttl_s: float = Field(300.0, ge=0, description="How long SearXNG's /config (engines) is cached")
    semantic_svc_url: str = Field("http://127.0.0.1:8081", description="Base URL of semantic-svc")
    llm_base_url: str = Field("http://127.0.0.1:8091/v1", description="OpenAI-compatible LLM endpoint")
    llm_model: str = Field("default", description="Model name sent to the LLM endpoint")
    llm_api_key: str = Field("", description="API key for the LLM endpoint (empty for a local server)")
    fetch_allow_hosts: str = Field(
        "", description="Comma-separated hosts or CIDRs that page fetching may reach despite the SSRF guard"
    )
    log_level: str = Field("INFO", description="Python logging level")


@lru_cache
def get_settings() -> Settings:
    return Settings()
