"""An in-process SearXNG for unit tests: pages of JSON results served through httpx.MockTransport."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import httpx

from agent.config import Settings
from agent.context import Services
from agent.fetch import Fetcher, FetchPolicy
from agent.pages import WorkerPool
from agent.searxng_client import SearxngClient
from agent.semantic_client import SemanticClient
from agent.ssrf import Allowlist


class FakeSearxng:
    """Serves `total` results per category, `page_size` per page; pages in `failing` answer 500."""

    def __init__(self, total: int = 30, page_size: int = 10, failing: set[int] | None = None,
                 duplicates: bool = False, delay_s: float = 0.0, unresponsive: list | None = None) -> None:
        self.total, self.page_size = total, page_size
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
        results = [{"url": u, "title": u, "content": "", "pubdate": f"2026-01-{int(u.rsplit('/', 1)[1]) % 28 + 1:02d} "
                    "00:00:00+0000"} for u in urls]
        return httpx.Response(200, json={"results": results, "unresponsive_engines": self.unresponsive})

    def services(self, **settings: object) -> Services:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        config = Settings(searxng_url="http://searx.test", **settings)
        policy = FetchPolicy(Allowlist.parse(""), config.fetch_max_bytes, 5, "test")
        return Services(config, SearxngClient(config.searxng_url, http, config.searxng_timeout_s),
                        SemanticClient("http://semantic.test", http, 1.0), Fetcher(http, policy),
                        WorkerPool(1, make=ThreadPoolExecutor))
