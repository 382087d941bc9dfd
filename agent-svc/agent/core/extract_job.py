"""An extract job as the API asks for it (api/firecrawl/extract_wire.py), its stores keep it (state/extracts) and
extract/run.py runs it, and the result it ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExtractJob:
    urls: tuple[str, ...]  # pages to read as given
    sites: tuple[str, ...]  # seeds of the URLs given with a trailing /*: their sites' pages are read
    prompt: str | None
    schema: dict[str, Any] | None  # checked
    system_prompt: str | None = None
    web_search: bool = False
    main_only: bool = False  # Firecrawl's extract reads whole pages unless scrapeOptions say otherwise
    subdomains: bool = True
    external: bool = False
    site_limit: int = 10  # pages of one site
    timeout_s: float = 180.0
    show_sources: bool = False
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtractResult:
    data: Any = None
    sources: dict[str, list[str]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    error: str | None = None  # set: the job failed, and this says why
