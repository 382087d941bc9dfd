"""The crawl stage's settings: crawls and batch scrapes."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section

# navigation a crawl does not follow: listings, accounts, feeds and wiki machinery hold no page worth indexing
DEFAULT_JUNK_PATHS = (
    r"(?i)(^|/)(about|about-us|blog|blogs|news|changelog|changes|release-?notes|tags?|categor(y|ies)|search|"
    r"login|log-in|signin|sign-in|signup|register|account|cart|share|print|feed|rss|atom|comments?)"
    r"(/|\.[a-z]+$|$)|(^|/)Special:|[?&](action|oldid|diff|printable)="
)


class CrawlSettings(Section):
    """Crawls and batch scrapes: how many, how fast, how long they run and are kept."""

    crawl_db: str = Field("./wisp-data/crawls.sqlite", description="SQLite file of the crawl jobs and frontiers "
                          "(unused with REDIS_URL: the jobs are in Redis)")
    crawl_concurrency: int = Field(8, ge=1, le=64, description="Pages one crawl fetches at once (maxConcurrency "
                                   "may ask for fewer); with REDIS_URL, tasks of the shared queue (pages of every "
                                   "job, extractions) one replica runs at once")
    crawl_host_concurrency: int = Field(2, ge=1, le=32, description="Requests to one host at once, when no delay "
                                        "applies")
    crawl_host_delay_s: float = Field(0.0, ge=0, le=60, description="Pause between requests to one host (the "
                                      "crawl's delay and robots.txt's Crawl-delay may ask for more)")
    crawl_page_timeout_s: float = Field(15.0, gt=0, le=300, description="Longest fetch, and longest extraction, of "
                                        "one crawled page")
    crawl_max_running: int = Field(2, ge=1, le=32, description="Crawls running at once; the others wait (with "
                                   "REDIS_URL no bound: on the shared queue every running job's pages take turns)")
    crawl_max_jobs: int = Field(20, ge=1, le=10_000, description="Unfinished crawls allowed at once; beyond them "
                                "a new crawl is a 429")
    crawl_max_jobs_per_key: int = Field(5, ge=1, le=10_000, description="Unfinished crawls and batch scrapes one "
                                        "API key may have; beyond them its new one is a 429 (keyless: no such bound)")
    crawl_max_duration_s: float = Field(21_600.0, gt=0, description="A crawl stops this long after it started, "
                                        "resumed runs included, and says how many pages it left")
    crawl_ttl_s: float = Field(86_400.0, gt=0, description="How long a crawl's status and documents are kept "
                               "(the index keeps its pages)")
    crawl_junk_paths: str = Field(DEFAULT_JUNK_PATHS, description="RE2 pattern of navigation paths a crawl does "
                                  "not follow (empty: none); includePaths overrides it")
