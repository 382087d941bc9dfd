"""Bring up the offline web, a real searx in front of it and, for Wisp itself, its services on loopback:
one way to do it for the tests, the benchmarks, the evaluation harness and the demo."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from offline_web.balancer import Balancer
from offline_web.corpus import cache_dir, ensure_packages
from offline_web.index import ensure_index
from offline_web.processes import Service, free_port
from offline_web.redis_server import RedisServer
from offline_web.searx import Searx
from offline_web.server import OfflineWeb
from offline_web.sites import Site, load_sites


@dataclass
class OfflineStack:
    web: OfflineWeb
    searx: Searx


@dataclass
class LocalStack:
    """Wisp on the real web (`make run`): searx unless a SearXNG was given, semantic-svc and agent-svc."""

    searxng_url: str
    searx: Searx | None
    semantic: Service
    agent: Service


@dataclass
class WispStack:
    """The offline stack plus agent-svc (and semantic-svc when asked for) running against it."""

    offline: OfflineStack
    agent: Service
    semantic: Service | None = None
    llm: Service | None = None


def prepare_index(sites_path: Path, cache: Path | None = None) -> tuple[list[Site], Path, Path]:
    """Download what the sites file needs and index it; return (sites, cache, index path)."""
    cache = cache or cache_dir()
    sites = load_sites(sites_path)
    versions = ensure_packages(sites, cache)
    return sites, cache, ensure_index(sites, sites_path.read_text(), versions, cache)


@contextmanager
def offline_search_stack(sites_path: Path, workdir: Path, web_port: int = 0, searx_port: int | None = None,
                         robots_txt: str = "", sitemaps: bool = False,
                         scripted_hosts: tuple[str, ...] = (), hosts: tuple[str, ...] = ()) -> Iterator[OfflineStack]:
    """The offline web and searx in front of it; `scripted_hosts`: hosts whose HTML pages a script fills in;
    `hosts`: the only hosts searx finds pages on (all when empty), though the web serves every site's pages."""
    sites, cache, db = prepare_index(sites_path)
    with OfflineWeb(sites, cache, db, port=web_port, robots_txt=robots_txt, sitemaps=sitemaps,
                    scripted_hosts=scripted_hosts) as web, \
            Searx(web.url, workdir, port=searx_port, hosts=hosts) as searx:
        yield OfflineStack(web, searx)


def uvicorn_service(name: str, app: str, workdir: Path, env: dict[str, str], port: int | None = None,
                    ready_path: str = "/healthz") -> Service:
    """An ASGI app served by uvicorn on loopback, as in production (`uvicorn agent.app:app`); started means
    `ready_path` answers 200."""
    port = port or free_port()
    command = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "warning", "--timeout-keep-alive", "75"]  # as agent-svc's Dockerfile: see there
    return Service(name, command, f"http://127.0.0.1:{port}", workdir / f"{name}.log", env=env,
                   health_path=ready_path)


def agent_service(name: str, searxng_url: str, workdir: Path, **env: str) -> Service:
    """agent-svc on the SearXNG at `searxng_url`, fetching from the offline web, with job stores and a page cache
    named after `name` in `workdir` (so that several run side by side); `env` adds to its settings or overrides them."""
    return uvicorn_service(name, "agent.app:app", workdir, {
        "SEARXNG_URL": searxng_url, "FETCH_ALLOW_HOSTS": "127.0.0.1",
        "CRAWL_DB": str(workdir / f"{name}-crawls.sqlite"), "RESEARCH_DB": str(workdir / f"{name}-research.sqlite"),
        "PAGE_CACHE_DIR": str(workdir / f"{name}-pages"), **env})


def agent_app(checkout: Path) -> str:
    """The ASGI app of agent-svc in a checkout of Wisp (agent.app since the layered tree, agent.api before), so
    that a benchmark can run an older checkout beside this one."""
    return "agent.app:app" if (checkout / "agent-svc" / "agent" / "app.py").exists() else "agent.api:app"


def semantic_service(workdir: Path, **env: str) -> Service:
    """semantic-svc with an embedded Qdrant in `workdir`; ready once its models are loaded."""
    return uvicorn_service("semantic-svc", "semantic.api:app", workdir,
                           {"QDRANT_PATH": str(workdir / "qdrant"), **env}, ready_path="/readyz")


@contextmanager
def wisp_stack(sites_path: Path, workdir: Path, with_semantic: bool = False, with_llm: bool = False,
               agent_port: int | None = None, agent_env: dict[str, str] | None = None,
               semantic_env: dict[str, str] | None = None, web_port: int = 0,
               scripted_hosts: tuple[str, ...] = ()) -> Iterator[WispStack]:
    with offline_search_stack(sites_path, workdir, web_port, scripted_hosts=scripted_hosts) as offline, \
            ExitStack() as running:
        env = {"SEARXNG_URL": offline.searx.url, "FETCH_ALLOW_HOSTS": "127.0.0.1",
               "CRAWL_DB": str(workdir / "crawls.sqlite"), "RESEARCH_DB": str(workdir / "research.sqlite"),
               "PAGE_CACHE_DIR": str(workdir / "page-cache"),
               "CRAWL_HOST_DELAY_S": "0"}
        semantic = None
        if with_semantic:
            semantic = semantic_service(workdir, **(semantic_env or {}))
            running.enter_context(semantic.started(timeout_s=180))
            env["SEMANTIC_SVC_URL"] = semantic.url
        llm = None
        if with_llm:
            llm = running.enter_context(llm_service(workdir).started(timeout_s=120))
            env["LLM_BASE_URL"] = f"{llm.url}/v1"
        agent = running.enter_context(uvicorn_service("agent-svc", "agent.app:app", workdir,
                                                      {**env, **(agent_env or {})}, agent_port))
        yield WispStack(offline, agent, semantic, llm)


@contextmanager
def local_stack(workdir: Path, searxng_url: str = "", agent_port: int | None = None,
                semantic_port: int | None = None, searx_port: int | None = None) -> Iterator[LocalStack]:
    """Wisp without Docker: Debian searx with its internet engines unless `searxng_url` names a SearXNG already
    running, then semantic-svc and agent-svc with their own defaults (the environment's settings pass through);
    logs and searx's settings in `workdir`."""
    with ExitStack() as running:
        searx = None
        if not searxng_url:
            searx = running.enter_context(Searx(None, workdir / "searx", port=searx_port))
            searxng_url = searx.url
        semantic = running.enter_context(uvicorn_service("semantic-svc", "semantic.api:app", workdir, {},
                                                         semantic_port, ready_path="/readyz").started(timeout_s=300))
        agent = running.enter_context(uvicorn_service(
            "agent-svc", "agent.app:app", workdir, {"SEARXNG_URL": searxng_url, "SEMANTIC_SVC_URL": semantic.url},
            agent_port))
        yield LocalStack(searxng_url, searx, semantic, agent)


@dataclass
class ScaledAgents:
    """agent-svc replicas sharing one Redis, behind one round-robin balancer (`url`)."""

    redis: RedisServer
    replicas: list[Service]
    balancer: Balancer

    @property
    def url(self) -> str:
        return self.balancer.url


@contextmanager
def scaled_agents(searxng_url: str, workdir: Path, replicas: int = 3, env: dict[str, str] | None = None,
                  redis: RedisServer | None = None) -> Iterator[ScaledAgents]:
    """`replicas` agent-svc processes on REDIS_URL (a fresh redis-server unless `redis` is given), each with a
    page cache of its own, behind HAProxy; all stopped on exit."""
    with ExitStack() as running:
        if redis is None:
            redis = running.enter_context(RedisServer(workdir))
        agents = [running.enter_context(uvicorn_service(
            f"agent-{i}", "agent.app:app", workdir,
            {"SEARXNG_URL": searxng_url, "REDIS_URL": redis.url, "CRAWL_DB": str(workdir / f"agent-{i}.sqlite"),
             "RESEARCH_DB": str(workdir / f"agent-{i}-research.sqlite"),
             "PAGE_CACHE_DIR": str(workdir / f"agent-{i}-pages"), **(env or {})}))
            for i in range(replicas)]
        balancer = running.enter_context(Balancer(workdir, [agent.url for agent in agents]))
        yield ScaledAgents(redis, agents, balancer)


def llm_service(workdir: Path, port: int | None = None) -> Service:
    """The LLM of the tests and the demo: SmolLM2-135M-Instruct (a GGUF from PyPI) behind llama.cpp's server
    from its prebuilt wheel (`offline_web.llm`), on one thread (llama.cpp's threads spin-wait: two would fight
    the other services for the cores)."""
    port = port or free_port()
    return Service("llm", [sys.executable, "-m", "offline_web.llm", "--port", str(port)],
                   f"http://127.0.0.1:{port}", workdir / "llm.log", health_path="/v1/models")


def poor_llm_service(workdir: Path, port: int | None = None) -> Service:
    """An OpenAI-compatible LLM that plans poorly, scripted (`offline_web.poor_llm`): instant, for evaluating
    research jobs against the worst a small model does."""
    port = port or free_port()
    return Service("poor-llm", [sys.executable, "-m", "offline_web.poor_llm", "--port", str(port)],
                   f"http://127.0.0.1:{port}", workdir / "poor-llm.log", health_path="/v1/models")
