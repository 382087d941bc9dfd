"""The extraction stage's settings."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class ExtractSettings(Section):
    """Extraction jobs: what a prompt-only one searches, how many run and are kept."""

    extract_web_results: int = Field(5, ge=1, le=20, description="Search results read when `enableWebSearch` is set "
                                     "or no URL is given")
    extract_ttl_s: float = Field(86_400.0, gt=0, description="How long an extraction's status and data are kept "
                                 "(its expiresAt), in memory: a restart forgets them")
    extract_max_jobs: int = Field(100, ge=1, le=100_000, description="Extractions kept at once; when all are "
                                  "unfinished a new one is a 429")
    extract_max_jobs_per_key: int = Field(10, ge=1, le=100_000, description="Unfinished extractions one API key may "
                                          "have; beyond them its new one is a 429 (keyless: no such bound)")
    extract_max_running: int = Field(2, ge=1, le=32, description="Extractions running at once; the others wait "
                                     "(processing)")
