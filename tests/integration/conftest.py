"""The real parts the integration tests talk to, started once per session on free loopback ports.

The offline web (real Debian documentation pages and a BM25 engine over them), a real Debian searx in
front of it, and agent-svc under uvicorn exactly as it runs in production.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from offline_web.processes import Service, free_port
from offline_web.stack import OfflineStack, offline_search_stack, semantic_service, uvicorn_service

FIXTURES = Path(__file__).parent.parent / "fixtures"
MINI_SITES = FIXTURES / "sites-mini.tsv"
SEARX_PYTHON = "/usr/bin/python3"
# for the crawl tests: one page closed to every crawler, one to Firecrawl's alone (Wisp honours both)
ROBOTS_TXT = """User-agent: *
Disallow: /www.sqlite.org/lockingv3.html

User-agent: FirecrawlAgent
Disallow: /www.sqlite.org/lockingv3.html
Disallow: /www.sqlite.org/isolation.html
"""


def agent_service(searxng_url: str, workdir: Path, name: str = "agent-svc", **env: str) -> Service:
    return uvicorn_service(name, "agent.app:app", workdir, {"SEARXNG_URL": searxng_url,
                                                            "CRAWL_DB": str(workdir / f"{name}.sqlite"),
                                                            "RESEARCH_DB": str(workdir / f"{name}-research.sqlite"),
                                                            "PAGE_CACHE_DIR": str(workdir / f"{name}-pages"), **env})


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OfflineStack]:
    with offline_search_stack(MINI_SITES, tmp_path_factory.mktemp("searx"), robots_txt=ROBOTS_TXT,
                              sitemaps=True) as running:
        yield running


@pytest.fixture(scope="session")
def agent_url(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("agent")) as agent:
        yield agent.url


@pytest.fixture(scope="session")
def agent(agent_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=agent_url, timeout=30) as client:
        yield client


def _stub(mode: str, workdir: Path) -> Service:
    port = free_port()
    command = [SEARX_PYTHON, str(FIXTURES / "searxng_stub.py"), mode, str(port)]
    return Service(f"searxng-stub-{mode}", command, f"http://127.0.0.1:{port}", workdir / f"stub-{mode}.log")


@pytest.fixture(scope="session")
def broken_agents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """agent-svc instances in front of a SearXNG that is down, has JSON disabled, or rate-limits."""
    workdir = tmp_path_factory.mktemp("broken")
    with _stub("json-disabled", workdir) as no_json, _stub("limited", workdir) as limited:
        down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
        with agent_service(down, workdir, "agent-down") as a_down, \
             agent_service(no_json.url, workdir, "agent-nojson") as a_nojson, \
             agent_service(limited.url, workdir, "agent-limited") as a_limited:
            yield {"down": a_down.url, "json-disabled": a_nojson.url, "limited": a_limited.url}


@pytest.fixture(scope="session")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """semantic-svc with the offline models, shared by every test of the ranked modes."""
    with semantic_service(tmp_path_factory.mktemp("semantic-shared")).started(timeout_s=180) as running:
        yield running


@pytest.fixture(scope="session")
def semantic_url(semantic: Service) -> str:
    return semantic.url


@pytest.fixture(scope="session")
def ranked_agents(stack: OfflineStack, semantic_url: str, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[dict[str, str]]:
    """agent-svc set up for the ranked modes (the offline web opened to fetching), hybrid by default for the
    SDKs, and two degraded ones: semantic-svc unreachable, fetching closed (loopback is not allowed)."""
    workdir = tmp_path_factory.mktemp("ranked")
    searx = stack.searx.url
    with agent_service(searx, workdir, "agent-ranked", SEMANTIC_SVC_URL=semantic_url,
                       FETCH_ALLOW_HOSTS="127.0.0.1") as ranked, \
         agent_service(searx, workdir, "agent-hybrid-default", SEMANTIC_SVC_URL=semantic_url,
                       FETCH_ALLOW_HOSTS="127.0.0.1", DEFAULT_RETRIEVAL_MODE="hybrid") as hybrid_default, \
         agent_service(searx, workdir, "agent-no-semantic", SEMANTIC_SVC_URL=f"http://127.0.0.1:{free_port()}",
                       FETCH_ALLOW_HOSTS="127.0.0.1") as no_semantic, \
         agent_service(searx, workdir, "agent-closed-fetch", SEMANTIC_SVC_URL=semantic_url) as closed_fetch:
        yield {"ranked": ranked.url, "hybrid-default": hybrid_default.url, "no-semantic": no_semantic.url,
               "closed-fetch": closed_fetch.url}


def index_agent_service(stack: OfflineStack, semantic_url: str, workdir: Path, name: str, collection: str,
                        **env: str) -> Service:
    """agent-svc with a vector index of its own (a Qdrant collection of the shared semantic-svc) and a crawl
    database in `workdir`, the offline web opened to fetching and crawled without politeness delays."""
    return agent_service(stack.searx.url, workdir, name, **{
        "SEMANTIC_SVC_URL": semantic_url, "FETCH_ALLOW_HOSTS": "127.0.0.1", "INDEX_COLLECTION": collection,
        "CRAWL_HOST_DELAY_S": "0", **env})


@pytest.fixture(scope="session")
def index_agent(stack: OfflineStack, semantic_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with index_agent_service(stack, semantic_url, tmp_path_factory.mktemp("index"), "agent-index", "crawled") as agent:
        yield agent.url


@pytest.fixture(scope="session")
def crawled(index_agent: str, stack: OfflineStack) -> dict:
    """The mini SQLite site crawled into `index_agent`'s index once: the finished status, all pages."""
    with httpx.Client(base_url=index_agent, timeout=30) as client:
        job = client.post("/v2/crawl", json={"url": f"{stack.web.url}/www.sqlite.org/", "limit": 30}).json()
    return {**finished_crawl(index_agent, job["id"]), "id": job["id"]}


def finished_crawl(agent_url: str, job_id: str, timeout_s: float = 240, route: str = "crawl") -> dict:
    """The status of a crawl (or, with route "batch/scrape", a batch scrape) once it is no longer running."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = httpx.get(f"{agent_url}/v2/{route}/{job_id}").json()
        if status["status"] != "scraping":
            return status
        time.sleep(0.3)
    raise AssertionError(f"{route} {job_id} did not finish within {timeout_s} s")


@pytest.fixture(scope="session")
def fetching_agent(stack: OfflineStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """agent-svc with the offline web (on loopback) opened to fetching; the session's `agent_url` keeps it closed."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("fetching"), "agent-fetching",
                       FETCH_ALLOW_HOSTS="127.0.0.1") as agent:
        yield agent.url


@pytest.fixture(scope="module")
def llm_stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """An OpenAI-compatible chat server whose replies a test can predict (tests/fixtures/llm_stub.py)."""
    workdir = tmp_path_factory.mktemp("llm-stub")
    port = free_port()
    with Service("llm-stub", [sys.executable, str(FIXTURES / "llm_stub.py"), str(port), str(workdir)],
                 f"http://127.0.0.1:{port}", workdir / "llm-stub.log", health_path="/v1/models") as stub:
        yield stub
