"""Every setting of agent-svc, read from the environment (documented in the README)."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from wisp_obs.logs import LogFormat

# `wisp_eval fit` on the 56 answerable dev queries (offline reranker): every fold chose these for hybrid mode,
# held-out nDCG@5 0.658 against rrf's 0.637; semantic mode's folds disagreed, and these hold for it too
FITTED_WEIGHTS = {"score": 1.0, "prior": 0.5}
# bench/vector_eval.py on the dev set with the offline embedder, 3 crawled sites (845 pages, 10,007 chunks): the
# best chunk of the 16 queries about them scored 0.613–0.848, of the 47 others 0.298–0.560; the midpoint
VECTOR_FLOOR = 0.586
# navigation a crawl does not follow: listings, accounts, feeds and wiki machinery hold no page worth indexing
DEFAULT_JUNK_PATHS = (
    r"(?i)(^|/)(about|about-us|blog|blogs|news|changelog|changes|release-?notes|tags?|categor(y|ies)|search|"
    r"login|log-in|signin|sign-in|signup|register|account|cart|share|print|feed|rss|atom|comments?)"
    r"(/|\.[a-z]+$|$)|(^|/)Special:|[?&](action|oldid|diff|printable)="
)

PageCacheKind = Literal["disk", "memory", "redis", "off"]


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
    default_retrieval_mode: str = Field(
        "keyword", description="Mode of requests that name none: the Firecrawl SDKs cannot send retrieval_mode"
    )
    default_search_type: str = Field(
        "fast", description="Search type of requests that name none (rich: every answer cited, for the SDKs)")
    semantic_timeout_s: float = Field(
        8.0, gt=0, description="Longest wait for one semantic-svc answer (the pipeline's time left bounds it too)")
    pipeline_deadline_s: float = Field(
        8.0, gt=0, description="Deadline of a ranked search from its start (the request's timeout when smaller)"
    )
    rank_reserve_s: float = Field(1.5, ge=0, description="Time kept for ranking when fetching stops")
    fetch_top: int = Field(8, ge=0, le=12, description="Candidates fetched and extracted in the ranked modes")
    fetch_max_bytes: int = Field(5_000_000, ge=10_000, description="Largest page body read")
    rank_max_bytes: int = Field(
        1_000_000, ge=10_000, description="ranked modes: how much of a page's HTML is extracted for ranking "
        "(about 1.5 s per MB); Documents always get the whole page")
    fetch_max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed per fetch")
    fetch_user_agent: str = Field(
        "Mozilla/5.0 (compatible; Wisp/0.1; +https://github.com/wisp)", description="User-Agent of page fetches"
    )
    # the page cache (pages/cache.py): Firecrawl's maxAge and storeInCache
    page_cache: PageCacheKind = Field("disk", description="Where fetched pages are kept for maxAge: disk (shared by "
                                      "the processes of one machine), memory, redis (REDIS_URL: shared by every "
                                      "replica), or off")
    page_cache_dir: str = Field("./wisp-data/page-cache", description="Directory of the disk page cache")
    page_cache_max_bytes: int = Field(1_000_000_000, ge=10_000_000, description="Compressed bytes the page cache "
                                      "holds at most; the least recently used pages go first")
    page_cache_ttl_s: int = Field(172_800, ge=1, description="redis page cache: how long a page is kept at most, "
                                  "whatever maxAge later asks (2 days: Firecrawl's cloud default)")
    default_max_age_ms: int = Field(0, ge=0, description="maxAge of requests that name none (0: always fetch; "
                                    "Firecrawl's cloud uses 2 days)")
    semantic_pool: int = Field(10, ge=1, le=50, description="SearXNG candidates semantic mode ranks")
    hybrid_pool: int = Field(20, ge=1, le=50, description="SearXNG candidates hybrid mode ranks (a second page)")
    reformulate: bool = Field(False, description="Also search a keyword form of question-like queries")
    semantic_margin: float = Field(0.45, ge=0, description="semantic mode: keep results within this cosine of the top")
    semantic_chunks_per_page: int = Field(2, ge=1, le=8, description="semantic mode: chunks of a page it scores")
    semantic_fusion: str = Field("linear", description="semantic mode: the final order's fusion (rrf, linear)")
    semantic_fusion_weights: dict[str, float] = Field(
        default_factory=lambda: dict(FITTED_WEIGHTS),
        description="semantic mode: the weight of each page feature in fusion")
    hybrid_margin: float = Field(2.2, ge=0, description="hybrid mode: keep passages within this score of the top")
    hybrid_fusion: str = Field("linear", description="hybrid mode: the final order's fusion (rrf, linear)")
    hybrid_fusion_weights: dict[str, float] = Field(
        default_factory=lambda: dict(FITTED_WEIGHTS),
        description="hybrid mode: the weight of each page feature in fusion")
    shortlist: int = Field(16, ge=1, le=64, description="hybrid mode: page chunks of the BM25 shortlist the "
                           "reranker scores (every candidate's best chunk first; snippets on top)")
    rrf_k: int = Field(10, ge=1, le=1000, description="k of reciprocal rank fusion (1/(k+rank)): small pools (about 20 "
                       "candidates) want a smaller k than the usual 60, which keeps the top ranks decisive")
    pack_chars: int = Field(10_000, ge=500, description="Budget of the packed context, in characters")
    pack_per_url: int = Field(3, ge=1, description="Most passages of one page in the packed context")
    extract_workers: int = Field(2, ge=1, le=32, description="Processes extracting pages in parallel")
    extract_worker_max_rss_mb: float = Field(
        768, ge=100, description="An extraction worker larger than this after a page is replaced, which returns "
        "its memory (a hostile page can grow one past 1 GB)")
    chunk_chars: int = Field(1200, ge=200, le=8000, description="Chunk size, in characters")
    recency_weight: float = Field(0.5, ge=0, description="For time-sensitive queries: share of the margin a fresh "
                                  "page gains")
    fetch_allow_hosts: str = Field(
        "", description="Comma-separated hosts or CIDRs that page fetching may reach despite the SSRF guard"
    )
    llm_base_url: str = Field("http://127.0.0.1:8091/v1", description="OpenAI-compatible LLM server for rich "
                              "answers (llama.cpp's server, vLLM, Ollama's /v1, or a hosted API)")
    llm_model: str = Field("default", description="Model asked for; a request's `llm.model` may choose another")
    llm_api_key: str = Field("", description="API key of the LLM server (a hosted provider needs one)")
    llm_system_role: bool = Field(True, description="false: send the system message at the top of the user turn, "
                                  "for chat templates that drop system messages (Gemma's)")
    llm_max_tokens: int = Field(320, ge=16, le=8192, description="Longest answer, in tokens")
    rich_deadline_s: float = Field(60.0, gt=0, description="Deadline of a rich answer from the search's start "
                                   "(the request's timeout when smaller)")
    verify_reserve_s: float = Field(1.5, ge=0, description="Time a rich answer keeps from the LLM for its claim "
                                    "check (0.5–1.2 s measured)")
    rich_snippet_sources: int = Field(8, ge=1, le=50, description="A rich answer over a mode without passages "
                                      "(keyword) reads this many results' snippets")
    rich_context_chars: int = Field(4000, ge=500, description="Budget of the sources given to the LLM, in characters")
    # calibrated on the dev set with the offline embedder (README, rich answers): every answerable query's best
    # packed passage reaches 0.449, 5 of the 7 unanswerable stay below 0.391; a sentence copied from its source
    # scores at least 0.665, a sentence checked against another query's sources above 0.55 in 2 of 63
    rich_abstain_below: float = Field(
        0.42, ge=-1, le=1, description="Abstain without asking the LLM when no source passage reaches this cosine "
        "to the question")
    support_floor: float = Field(0.55, ge=-1, le=1, description="A claim is supported when a window of the "
                                 "passages it cites reaches this cosine to it")
    index_collection: str = Field("", max_length=200, description="Qdrant collection of the vector index (empty: "
                                  "semantic-svc's QDRANT_COLLECTION)")
    vector_floor: float = Field(
        VECTOR_FLOOR, ge=-1, le=1, description="vector modes: a query whose best indexed chunk lies below this cosine "
        "to it has no answer in the index (calibrated for the offline embedder; recalibrate for another)")
    index_chunks_per_result: int = Field(4, ge=1, le=25, description="vector modes: chunks asked of the index per "
                                         "result wanted (a page's chunks crowd the nearest ones)")
    hybrid_vector_index_weight: float = Field(
        1.0, ge=0, description="hybrid_vector: the index's weight against SearXNG's (1.0) in rank fusion")
    index_organic: bool = Field(
        False, description="Also index the pages the ranked modes fetch (seed 001 kept it off: it leaks the queries "
        "an evaluation asks into the index that answers them)")
    crawl_db: str = Field("./wisp-data/crawls.sqlite", description="SQLite file of the crawl jobs and frontiers "
                          "(unused with REDIS_URL: the jobs are in Redis)")
    crawl_max_pages: int = Field(10_000, ge=1, le=1_000_000, description="Most pages of one crawl (Firecrawl's "
                                 "default limit)")
    crawl_concurrency: int = Field(8, ge=1, le=64, description="Pages one crawl fetches at once (maxConcurrency "
                                   "may ask for fewer); with REDIS_URL, tasks of the shared queue (pages of every "
                                   "job, extractions) one replica runs at once")
    crawl_host_concurrency: int = Field(2, ge=1, le=32, description="Requests to one host at once, when no delay "
                                        "applies")
    crawl_host_delay_s: float = Field(0.0, ge=0, le=60, description="Pause between requests to one host (the "
                                      "crawl's delay and robots.txt's Crawl-delay may ask for more)")
    crawl_page_timeout_s: float = Field(15.0, gt=0, le=300, description="Longest fetch, and longest extraction, of "
                                        "one crawled page")
    crawl_index_timeout_s: float = Field(60.0, gt=0, description="Longest wait for semantic-svc to index one "
                                         "crawled page (a long page is many chunks)")
    crawl_index_concurrency: int = Field(1, ge=1, le=16, description="Pages being indexed at once, all crawls "
                                         "together: interactive searches share semantic-svc's model")
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
    batch_max_urls: int = Field(1000, ge=1, le=10_000, description="Most URLs of one batch scrape, appendToId's "
                                "included (Firecrawl sets no bound but its body size; its SDKs send 100 at a time)")
    crawl_junk_paths: str = Field(DEFAULT_JUNK_PATHS, description="RE2 pattern of navigation paths a crawl does "
                                  "not follow (empty: none); includePaths overrides it")
    # request limits: past them a request is a 413 (body) or a 400 naming the bound
    max_body_bytes: int = Field(2_000_000, ge=10_000, description="Largest request body, in bytes")
    max_json_depth: int = Field(32, ge=4, le=512, description="Deepest nesting of a request's JSON")
    max_list_items: int = Field(10_000, ge=10, description="Longest list anywhere in a request's JSON")
    max_query_chars: int = Field(2000, ge=10, description="Longest search query, in characters (SearXNG's engines "
                                 "take about this much)")
    max_domains: int = Field(1000, ge=1, description="Most includeDomains or excludeDomains of one search")
    # /v2/scrape and /v1/scrape
    scrape_timeout_s: float = Field(30.0, gt=0, le=300, description="Deadline of a scrape that names no `timeout` "
                                    "(fetch, extraction and the LLM formats together; /v1 clients send 30 s)")
    # /v2/extract and /v1/extract
    extract_max_urls: int = Field(10, ge=1, le=1000, description="Most `urls` of one extraction (Firecrawl's bound)")
    extract_site_pages: int = Field(10, ge=1, le=1000, description="Pages read of a site named with a trailing /* "
                                    "(the first its map lists; `limit` may ask for fewer)")
    extract_web_results: int = Field(5, ge=1, le=20, description="Search results read when `enableWebSearch` is set "
                                     "or no URL is given")
    extract_timeout_s: float = Field(180.0, gt=0, le=3600, description="Deadline of one extraction: pages and LLM "
                                     "together (a request's `timeout` may ask for less)")
    extract_ttl_s: float = Field(86_400.0, gt=0, description="How long an extraction's status and data are kept "
                                 "(its expiresAt), in memory: a restart forgets them")
    extract_max_jobs: int = Field(100, ge=1, le=100_000, description="Extractions kept at once; when all are "
                                  "unfinished a new one is a 429")
    extract_max_jobs_per_key: int = Field(10, ge=1, le=100_000, description="Unfinished extractions one API key may "
                                          "have; beyond them its new one is a 429 (keyless: no such bound)")
    extract_max_running: int = Field(2, ge=1, le=32, description="Extractions running at once; the others wait "
                                     "(processing)")
    # /v2/map and /v1/map
    map_timeout_s: float = Field(10.0, gt=0, le=300, description="Deadline of a map that names no `timeout`: "
                                 "what the sources gave by then is the map")
    map_max_pages: int = Field(10, ge=1, le=100, description="Pages a map fetches for their links: the seed and "
                               "the first pages it links to")
    scrape_keep_s: float = Field(3600.0, ge=0, description="How long GET /v2/scrape/{id} finds a scrape's Document "
                                 "(kept in memory, or with REDIS_URL in Redis for every replica; 0: not kept)")
    scrape_keep_count: int = Field(1000, ge=0, le=1_000_000, description="Most scrape Documents kept for GET "
                                   "/v2/scrape/{id} (with REDIS_URL: over all replicas); the oldest go first")
    scrape_keep_bytes: int = Field(64_000_000, ge=0, description="Most bytes (of JSON) of the scrape Documents kept "
                                   "for GET /v2/scrape/{id} (with REDIS_URL: over all replicas); the oldest go first")
    # observability
    log_format: LogFormat = Field("json", description="Log lines: json (one object a line) or text")
    engine_health_window_s: float = Field(600.0, gt=0, description="/readyz: how far back SearXNG's answers tell "
                                          "which engines answer")
    # the state replicas share (docs/scaling.md)
    redis_url: str = Field("", description="Redis or Valkey (redis://host:port/db) that agent-svc replicas share: "
                           "crawl, batch-scrape and extract jobs on its queue, rate limits and the costly-request "
                           "cap, recent scrapes and usage counts; empty: SQLite jobs (CRAWL_DB), in-process limits, "
                           "scrapes and counts, for one replica")
    job_lease_s: float = Field(10.0, ge=1, le=600, description="With REDIS_URL: how long a task (a crawl's page, an "
                               "extraction) of a replica that stopped renewing it waits before another replica "
                               "takes it over")
    job_sweep_s: float = Field(2.0, ge=1, le=60, description="With REDIS_URL: how often one replica looks for tasks "
                               "whose lease has lapsed")
    # keys and limits (api/gate/auth.py, api/gate/admission.py)
    api_keys: SecretStr = Field(SecretStr(""), description="Comma-separated API keys; when any is set, every route "
                                "but /healthz and /readyz needs `Authorization: Bearer <key>`")
    api_keys_file: str = Field("", description="File of API keys, one a line (`#` comments), added to API_KEYS")
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
    # MCP server (/mcp)
    mcp_allowed_hosts: str = Field("127.0.0.1:*,localhost:*,[::1]:*", description="Host headers /mcp accepts "
                                   "(comma-separated, host:* for any port; empty: any), against DNS rebinding")
    log_level: str = Field("INFO", description="Python logging level")

    @model_validator(mode="after")
    def a_redis_cache_needs_redis_url(self) -> Settings:
        if self.page_cache == "redis" and not self.redis_url:
            raise ValueError("PAGE_CACHE=redis keeps pages in the Redis of REDIS_URL, which is not set")
        return self


@lru_cache
def get_settings() -> Settings:
    return Settings()
