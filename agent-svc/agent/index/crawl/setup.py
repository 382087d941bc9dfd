"""Which crawl machinery a process runs: SQLite jobs visited by this process alone, or, on the replicas' shared
state (REDIS_URL), Redis jobs visited by tasks any replica takes, behind one per-host gate on Redis."""

from __future__ import annotations

from agent.index.crawl.crawler import CrawlTools
from agent.index.crawl.manager import Crawls
from agent.index.crawl.queued import QueuedRunner
from agent.index.crawl.settings import CrawlSettings
from agent.state.jobs.redis import RedisJobStore
from agent.state.jobs.sqlite import JobStore
from agent.state.politeness import Gate
from agent.state.politeness.memory import HostGate
from agent.state.politeness.redis import RedisHostGate
from agent.state.shared import Shared


def host_gate(settings: CrawlSettings, shared: Shared | None) -> Gate:
    local = HostGate(settings.crawl_host_concurrency)
    return local if shared is None else RedisHostGate(shared.redis, settings.crawl_host_concurrency, local)


def crawls(tools: CrawlTools, shared: Shared | None) -> Crawls:
    settings = tools.settings
    if shared is None:
        return Crawls(tools, JobStore(settings.crawl_db))
    store = RedisJobStore(shared.redis, settings.crawl_max_duration_s)
    return Crawls(tools, store, QueuedRunner(tools, store, shared))
