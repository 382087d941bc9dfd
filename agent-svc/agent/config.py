"""Every setting of agent-svc, gathered: each stage declares its own section (a `Section`, read from the
environment under the variable names documented in docs/configuration.md) next to its code, and this root only
collects them. Only the composition root (app.py) reads it; it hands each stage its own section.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from wisp_obs.logs import LogFormat

from agent.answers.settings import RichSettings
from agent.api.gate.settings import GateSettings
from agent.api.settings import RequestSettings
from agent.core.section import Section
from agent.extract.settings import ExtractSettings
from agent.index.crawl.settings import CrawlSettings
from agent.index.settings import IndexSettings
from agent.pages.browser.settings import BrowserSettings
from agent.pages.settings import PageCacheSettings, PagesSettings
from agent.ranking.modes import MODES
from agent.ranking.settings import ModeSettings, RankingSettings
from agent.research.settings import ResearchSettings
from agent.search.settings import SearchSettings
from agent.state.settings import LimitsSettings, RecentSettings, SharedStateSettings
from agent.upstream.settings import LLMSettings, SearxngSettings, SemanticSvcSettings, SourcesSettings


class ServiceSettings(Section):
    """The process itself: its logs and the hosts its MCP endpoint answers."""

    log_format: LogFormat = Field("json", description="Log lines: json (one object a line) or text")
    log_level: str = Field("INFO", description="Python logging level")
    mcp_allowed_hosts: str = Field("127.0.0.1:*,localhost:*,[::1]:*", description="Host headers /mcp accepts "
                                   "(comma-separated, host:* for any port; empty: any), against DNS rebinding")


def _mode_sections() -> list[type[Section]]:
    return [mode.settings for mode in MODES.values() if mode.settings is not None]


class Settings(BaseModel):
    """agent-svc's settings, one section per stage."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    service: ServiceSettings = Field(default_factory=ServiceSettings)
    searxng: SearxngSettings = Field(default_factory=SearxngSettings)
    semantic: SemanticSvcSettings = Field(default_factory=SemanticSvcSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sources: SourcesSettings = Field(default_factory=SourcesSettings)
    pages: PagesSettings = Field(default_factory=PagesSettings)
    page_cache: PageCacheSettings = Field(default_factory=PageCacheSettings)
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    ranking: RankingSettings = Field(default_factory=RankingSettings)
    modes: ModeSettings = Field(default_factory=lambda: ModeSettings(kind() for kind in _mode_sections()))
    rich: RichSettings = Field(default_factory=RichSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    index: IndexSettings = Field(default_factory=IndexSettings)
    crawl: CrawlSettings = Field(default_factory=CrawlSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    research: ResearchSettings = Field(default_factory=ResearchSettings)
    shared: SharedStateSettings = Field(default_factory=SharedStateSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    recent: RecentSettings = Field(default_factory=RecentSettings)
    gate: GateSettings = Field(default_factory=GateSettings)
    requests: RequestSettings = Field(default_factory=RequestSettings)

    @model_validator(mode="after")
    def a_redis_cache_needs_redis_url(self) -> Settings:
        if self.page_cache.page_cache == "redis" and not self.shared.redis_url:
            raise ValueError("PAGE_CACHE=redis keeps pages in the Redis of REDIS_URL, which is not set")
        return self

    @classmethod
    def sections(cls) -> list[type[Section]]:
        """Every section's class, the modes' included."""
        fixed = [field.annotation for name, field in cls.model_fields.items() if name != "modes"]
        return [*fixed, *_mode_sections()]  # type: ignore[list-item]

    @classmethod
    def of(cls, **variables: Any) -> Settings:
        """The settings the environment gives with these variables (lower-cased names) set as well: each goes
        to the section that declares it. For tests and tools; a name no section declares is a TypeError."""
        owners = {name: kind for kind in cls.sections() for name in kind.model_fields}
        if unknown := set(variables) - set(owners):
            raise TypeError(f"no section declares {', '.join(sorted(unknown))}")

        def made(kind: type[Section]) -> Section:
            return kind(**{name: value for name, value in variables.items() if owners[name] is kind})

        fields = {name: made(field.annotation) for name, field in cls.model_fields.items()  # type: ignore[arg-type]
                  if name != "modes"}
        return cls(**fields, modes=ModeSettings(made(kind) for kind in _mode_sections()))


# variables that once meant something and are now ignored: each with what replaced it
RETIRED = {
    "HYBRID_MARGIN": "RELEVANCE_MARGIN, a probability of relevance (it was a raw score of one model)",
    "SEMANTIC_MARGIN": "RELEVANCE_MARGIN, a probability of relevance (it was a cosine of one model)",
}


def retired_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each retired variable set in `environ`."""
    return [f"{name} is no longer read: it is replaced by {replacement}; unset it"
            for name, replacement in RETIRED.items() if name in environ or name.lower() in environ]


@lru_cache
def get_settings() -> Settings:
    return Settings()
