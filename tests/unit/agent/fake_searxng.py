"""An in-process SearXNG for unit tests: pages of JSON results served through httpx.MockTransport; and the other
upstreams a search meets, as small fakes honouring their contracts (semantic-svc's scores, fetched pages)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
from wisp_text.bm25 import tokenize

from agent.answers.rich import Answers
from agent.api.gate.body_limits import RequestLimits
from agent.api.settings import RequestSettings
from agent.config import Settings
from agent.core.browsing import NO_BROWSER_WORK, BrowserWork
from agent.core.context import Spans
from agent.core.pages import CacheUse, Fetched, PageError
from agent.index.crawl.crawler import CrawlTools
from agent.index.ingest import Ingest
from agent.index.map.site_map import MapTools
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.rendering import PageFetcher
from agent.pages.ssrf import Allowlist
from agent.pages.webhooks import WebhookSender
from agent.ranking.stage import Ranking
from agent.research.jobs import research_jobs
from agent.research.loop import Researcher
from agent.research.settings import ResearchSettings
from agent.search.service import Search
from agent.services import Services
from agent.state.politeness.memory import HostGate
from agent.upstream.clients import Upstreams
from agent.upstream.llm import LLMClient
from agent.upstream.searxng import SearxngClient
from agent.upstream.semantic import IndexReach, SemanticClient


class InlinePool:
    """The worker pool's interface, extracting in the test's own thread."""

    size = 2  # EXTRACT_WORKERS' default

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return fn(*args)


class FakeSearxng:
    """Serves `total` results per category, `page_size` per page; pages in `failing` answer 500."""

    def __init__(self, total: int = 30, page_size: int = 10, failing: set[int] | None = None,
                 duplicates: bool = False, delay_s: float = 0.0, unresponsive: list | None = None,
                 snippets: dict[int, str] | None = None) -> None:
        self.total, self.page_size = total, page_size
        self.snippets = snippets or {}
        self.failing = failing or set()
        self.duplicates = duplicates
        self.delay_s = delay_s
        self.unresponsive = unresponsive or []
        self.requests: list[dict[str, str]] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        self.requests.append(params)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        page = int(params.get("pageno", 1))
        if page in self.failing:
            return httpx.Response(500, json={"error": "boom"})
        first = (page - 1) * self.page_size
        ranks = range(first, min(first + self.page_size, self.total))
        category = params.get("categories", "general")
        urls = [f"https://{category}.test/{r}" for r in ranks]
        if self.duplicates and page > 1:  # the page opens with the previous page's last result
            urls = [f"https://{category}.test/{first - 1}", *urls[:-1]]
        results = [{"url": u, "title": u, "content": self.snippets.get(_rank(u), ""),
                    "pubdate": f"2026-01-{_rank(u) % 28 + 1:02d} 00:00:00+0000"} for u in urls]
        return httpx.Response(200, json={"results": results, "unresponsive_engines": self.unresponsive})

    def services(self, semantic: FakeSemantic | None = None, pages: dict[str, str] | None = None,
                 llm_http: httpx.AsyncClient | None = None, **settings: object) -> Services:
        """Services on this SearXNG; semantic-svc is `semantic` (none: unreachable), and the web holds `pages`
        (URL → HTML; none: every fetch is blocked, as the SSRF guard does with these hosts). `settings`: variables
        set as the environment would (Settings.of)."""
        return self.search(semantic, pages, llm_http, **settings).services

    def search(self, semantic: FakeSemantic | None = None, pages: dict[str, str] | None = None,
               llm_http: httpx.AsyncClient | None = None, **settings: object) -> Search:
        """The search stage on these services, made as the app makes it. FakeSemantic's probabilities are word
        shares, no calibration: nothing is pruned or abstained by them unless a test sets RELEVANCE_*."""
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        config = Settings.of(**{"searxng_url": "http://searx.test", "relevance_margin": 1.0, "relevance_floor": 0.0,
                                **settings})
        policy = FetchPolicy(Allowlist.parse(""), config.pages.fetch_max_bytes, 5, "test")
        scorer_http = httpx.AsyncClient(transport=httpx.MockTransport(semantic.handle)) if semantic else http
        semantic_client = SemanticClient("http://semantic.test", scorer_http, 1.0, "", IndexReach(
            config.semantic.index_chunks_per_result, config.semantic.vector_floor), config.semantic.semantic_admission)
        llm_url = "http://llm.test/v1" if config.llm.llm_base_url else ""  # LLM_BASE_URL="": none configured
        llm = LLMClient(llm_url, "", "test-model", 200, config.llm.llm_system_role, http=llm_http or http)
        searxng = SearxngClient(config.searxng.searxng_url, http, config.searxng.searxng_timeout_s)
        fetcher = FakeWeb(pages) if pages is not None else PageFetcher(Fetcher(http, policy), None, "never")
        ingest, gate = Ingest(semantic_client, config.index), HostGate(config.crawl.crawl_host_concurrency)
        services = Services(Upstreams(searxng, semantic_client, llm), fetcher, InlinePool(), ingest, gate, InlinePool(),
                            Answers(config.rich, llm, semantic_client),
                            CrawlTools(config.crawl, fetcher, InlinePool(), ingest, gate),
                            MapTools(config.index.map_max_pages, fetcher, InlinePool(), gate, searxng),
                            Spans(config.ranking.pipeline_deadline_s, config.ranking.rank_reserve_s,
                                  config.rich.rich_deadline_s, config.rich.verify_reserve_s))
        return Search(config.search, Ranking.of(config.modes, config.ranking), services)


def _rank(url: str) -> int:
    return int(url.rsplit("/", 1)[1])


class FakeSemantic:
    """semantic-svc's /similarity and /rerank: a passage scores the share of the query's words it holds, which is
    also its probability of relevance (unless `calibrated` is False: semantic-svc without a calibration)."""

    def __init__(self, failing: set[str] | None = None, queued_ms: float = 0.0, calibrated: bool = True) -> None:
        self.failing = failing or set()
        self.calibrated = calibrated
        self.queued_ms = queued_ms  # the model work each answer says waits in the lane
        self.calls: list[tuple[str, list[str]]] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.calls.append((request.url.path, body["passages"]))
        if request.url.path in self.failing:
            return httpx.Response(503, json={"error": "the models are still loading"})
        words = set(tokenize(body["query"]))
        scores = [len(words & set(tokenize(p))) / len(words) for p in body["passages"]]
        kind = "rerank" if request.url.path == "/rerank" else "embed"
        return httpx.Response(200, json={"scores": scores, "probabilities": scores if self.calibrated else None,
                                         "speed": {"kind": kind, "ms_per_kchar": 1.0,
                                                                     "queued_ms": self.queued_ms}})

    def passages(self, path: str) -> list[str]:
        """Every passage asked of `path`, over all its calls."""
        return [p for called, passages in self.calls if called == path for p in passages]


class FakeWeb:
    """The Fetcher's interface over a dict of pages: a URL it holds is a 200 HTML page, any other a 404."""

    def __init__(self, pages: dict[str, str]) -> None:
        self.pages = pages

    renders = False  # no browser: a scrape's browser work is refused or ignored, as with RENDER=never

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        if url not in self.pages:
            return Fetched(url, url, 404, "text/html", error=PageError("http", "HTTP 404"))
        return Fetched(url, url, 200, "text/html", self.pages[url].encode())


def replaced(services: Services, **parts: Any) -> Services:
    """`services` with some parts replaced, the upstream clients (searxng, semantic, llm) included, and the
    stages made of them (answers, crawl and map tools) remade with the new parts."""
    upstream = {name: part for name, part in parts.items() if name in ("searxng", "semantic", "llm")}
    rest = {name: part for name, part in parts.items() if name not in upstream}
    changed = replace(services, upstreams=replace(services.upstreams, **upstream), **rest)
    up = changed.upstreams
    return replace(changed, answers=replace(changed.answers, llm=up.llm, semantic=up.semantic),
                   crawl_tools=replace(changed.crawl_tools, fetcher=changed.fetcher, cpu_pool=changed.cpu_pool,
                                       ingest=changed.ingest, gate=changed.gate),
                   map_tools=replace(changed.map_tools, fetcher=changed.fetcher, cpu_pool=changed.cpu_pool,
                                     gate=changed.gate, searxng=up.searxng))


def replaced_search(search: Search, **parts: Any) -> Search:
    """`search` on its services with some parts replaced (see `replaced`)."""
    return replace(search, services=replaced(search.services, **parts))


class WebhookReceiver:
    """Webhook deliveries as a receiver on 127.0.0.1 takes them (loopback is opened to the sender's SSRF guard
    here, as FETCH_ALLOW_HOSTS opens it): each delivery's headers and JSON body, in order."""

    URL = "http://127.0.0.1:9/hooks/agent"

    def __init__(self, status: int = 200, secret: str = "") -> None:
        self.status, self.secret, self.received = status, secret, []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.received.append(request)
        return httpx.Response(self.status)

    def sender(self) -> WebhookSender:
        return WebhookSender(httpx.AsyncClient(transport=httpx.MockTransport(self.handle)),
                             Allowlist.parse("127.0.0.1"), self.secret, 5.0)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.received]

    @property
    def types(self) -> list[str]:
        return [body["type"] for body in self.bodies]


def serving(app: Any, search: Search, webhooks: WebhookReceiver | None = None) -> None:
    """`app`'s state as its lifespan leaves it, with `search`, its services and research jobs on it (and the API's
    settings and request limits as the environment gives them, unless the app was made with its own); the jobs'
    webhooks delivered to `webhooks`."""
    app.state.search, app.state.services = search, search.services
    app.state.webhooks = webhooks = webhooks or WebhookReceiver()
    app.state.researcher = Researcher(ResearchSettings(research_db=":memory:"), search, webhooks.sender())
    app.state.research = research_jobs(app.state.researcher, None)
    if not hasattr(app.state, "request_settings"):
        app.state.request_settings = RequestSettings()
        app.state.request_limits = RequestLimits()
