"""The app: its lifespan (where every client and store is made), its routers, error handlers and middleware.
Exposes `app`."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from wisp_obs import logs
from wisp_obs.requests import ObservedRequests

from agent import metrics
from agent.answers import schemas
from agent.answers.rich import Answers
from agent.api.envelopes import answer_errors, error_body_for
from agent.api.firecrawl import (
    agent_routes,
    batch_routes,
    crawl_routes,
    crawl_ws,
    extract_routes,
    index_routes,
    map_routes,
    parse_routes,
    scrape_routes,
    search_routes,
    team_routes,
)
from agent.api.gate.auth import protect
from agent.api.gate.body_limits import BodyLimit, RequestLimits
from agent.api.gate.usage import Metering
from agent.api.openai import routes as openai_routes
from agent.api.tavily import routes as tavily_routes
from agent.config import Settings, get_settings, retired_variables
from agent.core.context import Spans
from agent.errors import UpstreamError
from agent.extract.jobs import extract_jobs
from agent.extract.run import Extractor
from agent.index.crawl import setup as crawl_setup
from agent.index.crawl.crawler import CrawlTools
from agent.index.ingest import Ingest
from agent.index.map.site_map import MapTools
from agent.mcp.server import mounted as mcp_mounted
from agent.pages.browser.chromium import browser_of
from agent.pages.cache import open_cache
from agent.pages.extract import warm_up
from agent.pages.fetch import Fetcher, FetchPolicy
from agent.pages.rendering import PageFetcher
from agent.pages.webhooks import WebhookSender
from agent.pages.workers import WorkerPool
from agent.ranking.stage import Ranking
from agent.research.jobs import research_jobs
from agent.research.loop import Researcher
from agent.search.service import Search, check_defaults
from agent.services import Services
from agent.state.limits import Limits
from agent.state.limits.memory import process_limits
from agent.state.limits.redis import shared_limits
from agent.state.recent.memory import recent_scrapes
from agent.state.recent.redis import redis_recent_scrapes
from agent.state.shared import shared_state
from agent.state.tiers.memory import ProcessTiers
from agent.state.tiers.redis import RedisTiers
from agent.state.usage.memory import Usage
from agent.state.usage.redis import RedisUsage
from agent.upstream.clients import Upstreams
from agent.upstream.model_check import log_model_costs

SCHEMA_WORKERS = 1  # applying a schema takes milliseconds; a hostile one is stopped after 2 s


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app, made from `settings` (by default the environment's): the one place that reads every section and
    hands each stage its own."""
    settings = settings or get_settings()
    check_defaults(settings.search)
    ranking = Ranking.of(settings.modes, settings.ranking)
    logs.configure(settings.service.log_level, settings.service.log_format)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per upstream call drowns the log
    logging.getLogger("saq").setLevel(logging.WARNING)  # and one per queued task (a crawl's page)
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)  # a line per stateless MCP request
    for retired in retired_variables(os.environ):
        logging.getLogger("agent").warning(retired)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # page fetches get their own client: no proxy from the environment, no automatic redirects (each hop
        # passes the SSRF guard), and a timeout no longer than the pipeline's deadline
        pipeline_s = settings.ranking.pipeline_deadline_s
        fetch_timeout = httpx.Timeout(pipeline_s, connect=min(3.0, pipeline_s))
        async with httpx.AsyncClient(timeout=settings.searxng.searxng_timeout_s, follow_redirects=False) as http, \
                httpx.AsyncClient(timeout=fetch_timeout, follow_redirects=False, trust_env=False,
                                  limits=httpx.Limits(max_connections=32)) as fetch_http, \
                shared_state(settings.shared) as shared:
            tiers = ProcessTiers() if shared is None else RedisTiers(shared.redis)
            upstreams = Upstreams.of(settings.searxng, settings.semantic, settings.llm, settings.sources, http, tiers)
            pages = settings.pages
            pool = WorkerPool(pages.extract_workers, pages.extract_worker_max_rss_mb, warm=warm_up)
            await pool.start()
            schema_pool = WorkerPool(SCHEMA_WORKERS, pages.extract_worker_max_rss_mb, schemas.warm_up, "schema")
            await schema_pool.start()
            cache = open_cache(settings.page_cache, settings.shared.redis_url)
            policy = FetchPolicy.of(pages)
            browser = browser_of(settings.browser, policy.allow, policy.user_agent)
            fetcher = PageFetcher(Fetcher(fetch_http, policy, cache), browser, settings.browser.render)
            ingest = Ingest(upstreams.semantic, settings.index)
            host_gate = crawl_setup.host_gate(settings.crawl, shared)
            app.state.services = services = Services(
                upstreams, fetcher, pool, ingest, host_gate, schema_pool,
                Answers(settings.rich, upstreams.llm, upstreams.semantic),
                CrawlTools(settings.crawl, fetcher, pool, ingest, host_gate),
                MapTools(settings.index.map_max_pages, fetcher, pool, host_gate, upstreams.searxng),
                Spans(pipeline_s, settings.ranking.rank_reserve_s, settings.rich.rich_deadline_s,
                      settings.rich.verify_reserve_s))
            app.state.search = search = Search(settings.search, ranking, services)
            app.state.crawls = crawls = crawl_setup.crawls(services.crawl_tools, shared)
            await crawls.resume()
            extractor = Extractor(settings.extract, search, settings.requests.scrape_timeout_s)
            app.state.extracts = extracts = extract_jobs(extractor, shared)
            await extracts.resume()
            webhooks = WebhookSender(fetch_http, FetchPolicy.of(pages).allow, settings.research.webhook_secret,
                                     settings.research.webhook_timeout_s)
            app.state.researcher = researcher = Researcher(settings.research, search, webhooks)
            app.state.research = research = research_jobs(researcher, shared)
            await research.resume()
            app.state.recent_scrapes = (recent_scrapes(settings.recent) if shared is None
                                        else redis_recent_scrapes(settings.recent, shared))
            if shared is not None:
                app.state.usage = RedisUsage(shared.redis)  # every replica's credits, in place of this process's
                await shared.tasks.start(settings.crawl.crawl_concurrency)
            checking = asyncio.create_task(log_model_costs(upstreams.semantic))
            try:
                async with mcp.session_manager.run():
                    yield
            finally:
                checking.cancel()
                await asyncio.gather(checking, return_exceptions=True)
                if shared is not None:
                    await shared.tasks.close()
                    await app.state.usage.drain()
                await crawls.stop()
                await extracts.close()
                await research.close()
                await services.ingest.stop()
                if cache:
                    await cache.drain()
                crawls.store.close()
                await pool.close()
                await schema_pool.close()
                if browser is not None:
                    await browser.close()
                await app.state.limits.close()

    app = FastAPI(title="Wisp agent-svc", summary="Firecrawl-compatible search on SearXNG", lifespan=lifespan)
    mcp, mcp_routes = mcp_mounted(app, settings.service.mcp_allowed_hosts)  # its tools call this app in-process
    app.state.usage = Usage()  # the lifespan replaces it on REDIS_URL
    app.state.request_settings = settings.requests
    gate = settings.gate
    app.state.request_limits = RequestLimits(gate.max_json_depth, gate.max_list_items,
                                             settings.search.max_query_chars, settings.search.max_domains)
    app.router.routes.extend(mcp_routes)

    for routes in (search_routes, agent_routes, batch_routes, crawl_routes, crawl_ws, extract_routes, index_routes,
                   map_routes, openai_routes, parse_routes, scrape_routes, tavily_routes, team_routes):
        app.include_router(routes.router)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    async def readyz(request: Request) -> JSONResponse:
        upstreams: Upstreams = request.app.state.services.upstreams
        searxng = upstreams.searxng
        engines = searxng.health.report()
        warnings = await request.app.state.limits.warnings()  # degraded, not unready: limits count per replica
        # degraded, not unready either: a search goes on without a source whose tiers are all held
        sources = await upstreams.sources.report() if upstreams.sources else {}
        if sources.get("warning"):
            warnings.append(sources.pop("warning"))
        try:
            await searxng.ping()
        except UpstreamError as e:
            return JSONResponse({"status": "unavailable", "searxng": searxng.base_url, "error": e.message,
                                 "engines": engines, **sources, "warnings": warnings}, 503)
        return JSONResponse({"status": "ready", "searxng": searxng.base_url, "engines": engines, **sources,
                             "warnings": warnings})

    @app.get("/metrics")
    async def prometheus(request: Request) -> Response:
        sources = request.app.state.services.upstreams.sources
        if sources:  # the tiers' gauges, read now: another replica may have parked one
            await sources.report()
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    answer_errors(app)
    app.add_middleware(Metering, state=app.state)  # inside the gate: refused requests are not counted
    app.add_middleware(BodyLimit, max_bytes=gate.max_body_bytes, envelope=error_body_for)
    protect(app, gate, limits(settings))  # the key before the body is read
    # outermost, so that the metrics and the access log count every status, 413s included
    app.add_middleware(ObservedRequests, observe=metrics.observe_request, access_log=logging.getLogger("agent.access"))
    return app


def limits(settings: Settings) -> Limits:
    """The per-key limits, counted in the replicas' Redis when there is one."""
    redis_url = settings.shared.redis_url
    return shared_limits(settings.limits, redis_url) if redis_url else process_limits(settings.limits)


app = create_app()
