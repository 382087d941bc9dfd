"""Every setting of semantic-svc, read from the environment (documented in the README)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    embed_model: str = Field("BAAI/bge-m3", description="Embedding model: a hub name or a local folder")
    rerank_model: str = Field("BAAI/bge-reranker-v2-m3", description="Cross-encoder: a hub name or a local folder")
    qdrant_url: str = Field("", description="Qdrant server URL; empty means embedded Qdrant at QDRANT_PATH")
    qdrant_path: str = Field("./qdrant-data", description="Folder of the embedded Qdrant store")
    log_level: str = Field("INFO", description="Python logging level")


@lru_cache
def get_settings() -> Settings:
    return Settings()
