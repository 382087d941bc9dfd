"""The research stage's settings: what a job may spend, and how many are kept and run."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class ResearchSettings(Section):
    """Research jobs: their notes and how many run and are kept."""

    research_note_chars: int = Field(600, ge=100, le=4000, description="research: characters of one note (a "
                                     "passage kept as evidence): notes, not pages, are what a job keeps")
    research_max_notes: int = Field(48, ge=4, le=200, description="research: notes a job keeps; the report is "
                                    "written from them")
    research_db: str = Field("./wisp-data/research.sqlite", description="SQLite file of the research jobs, so that a "
                             "restart runs the unfinished ones again (unused with REDIS_URL: the jobs are in Redis)")
    research_ttl_s: float = Field(86_400.0, gt=0, description="How long a research job's status and result are kept "
                                  "(its expiresAt)")
    research_max_jobs: int = Field(100, ge=1, le=100_000, description="Research jobs kept at once; when all are "
                                   "unfinished a new one is a 429")
    research_max_jobs_per_key: int = Field(5, ge=1, le=100_000, description="Unfinished research jobs one API key "
                                           "may have; beyond them its new one is a 429 (keyless: no such bound)")
    webhook_secret: str = Field("", description="Signs each webhook delivery: X-Firecrawl-Signature: sha256=<HMAC-"
                                "SHA256 of the body> (empty: unsigned)")
    webhook_timeout_s: float = Field(10.0, gt=0, le=120, description="One webhook delivery's timeout; a failed "
                                     "one is retried twice (after 1 s and 4 s)")
    research_max_running: int = Field(1, ge=1, le=32, description="Research jobs running at once; the others wait "
                                      "(processing)")
