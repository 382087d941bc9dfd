"""The shared state's settings: Redis, limits, recent scrapes."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class SharedStateSettings(Section):
    """The state replicas share: the Redis of REDIS_URL and the leases of its task queue."""

    redis_url: str = Field("", description="Redis or Valkey (redis://host:port/db) that agent-svc replicas share: "
                           "crawl, batch-scrape and extract jobs on its queue, rate limits and the costly-request "
                           "cap, recent scrapes and usage counts; empty: SQLite jobs (CRAWL_DB), in-process limits, "
                           "scrapes and counts, for one replica")
    job_lease_s: float = Field(10.0, ge=1, le=600, description="With REDIS_URL: how long a task (a crawl's page, an "
                               "extraction) of a replica that stopped renewing it waits before another replica "
                               "takes it over")
    job_sweep_s: float = Field(2.0, ge=1, le=60, description="With REDIS_URL: how often one replica looks for tasks "
                               "whose lease has lapsed")


class LimitsSettings(Section):
    """Rate limits and the cap on costly requests, per key."""

    rate_limit_per_min: int = Field(0, ge=0, description="POST requests per minute of one key (of one client "
                                    "address when keyless); 0: no limit")
    ranked_concurrency_per_key: int = Field(0, ge=0, description="Costly requests (modes other than keyword, "
                                            "rerank, rich, scrapeOptions formats, /v2/similar, scrapes, maps, "
                                            "extractions) one key (or address) may have in flight; 0: no cap")
    limits_redis_timeout_s: float = Field(0.25, gt=0, le=10, description="With REDIS_URL: longest wait for Redis "
                                          "in a limit check; past it, or on any Redis error, the request is counted "
                                          "by its replica alone and Redis is asked again a second later")
    costly_lease_s: float = Field(30.0, gt=0, description="With REDIS_URL: the lease of a costly request's "
                                  "slot, renewed every third of it while the request runs; the slots of a replica "
                                  "that died holding them come back after it")


class RecentSettings(Section):
    """The scrapes GET /v2/scrape/{id} finds."""

    scrape_keep_s: float = Field(3600.0, ge=0, description="How long GET /v2/scrape/{id} finds a scrape's Document "
                                 "(kept in memory, or with REDIS_URL in Redis for every replica; 0: not kept)")
    scrape_keep_count: int = Field(1000, ge=0, le=1_000_000, description="Most scrape Documents kept for GET "
                                   "/v2/scrape/{id} (with REDIS_URL: over all replicas); the oldest go first")
    scrape_keep_bytes: int = Field(64_000_000, ge=0, description="Most bytes (of JSON) of the scrape Documents kept "
                                   "for GET /v2/scrape/{id} (with REDIS_URL: over all replicas); the oldest go first")
