"""The official Firecrawl MCP server (npm firecrawl-mcp, over stdio, run with node) self-hosted against agent-svc,
driven by the MCP SDK's own client: each of its tools that reaches Wisp gives a usable result on the offline web.

Two versions: 3.26.0, the tested one, for every tool; and 3.22.0 (npm alias firecrawl-mcp-3.22, on firecrawl-js
4.25.2) for what changed since: its firecrawl_extract still calls POST /v2/extract and polls GET /v2/extract/{id},
where 3.26.0's is a deprecated stub that answers "use firecrawl_scrape with formats ["json"]" without calling the
API; and its tools answer JSON as text only, where 3.26.0 adds structured content. Map runs on both. Neither
version has a batch scrape tool. Their other tools (agent, interact, parse, monitors, research, feedback) call
endpoints Wisp does not have. Under stdio with FIRECRAWL_API_URL set neither calls another address (every fetch
goes to FIRECRAWL_API_URL; the cloud-only parts, OAuth and the keyless proxy, stay off without CLOUD_SERVICE)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult
from test_extract import AGENT_ENV, PAGES_SCHEMA, PROMPT

from offline_web.processes import Service
from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service

pytestmark = pytest.mark.integration

NODE_MODULES = Path(__file__).parent.parent / "sdk_js" / "node_modules"
SERVERS = {"3.26.0": NODE_MODULES / "firecrawl-mcp" / "dist" / "index.js",
           "3.22.0": NODE_MODULES / "firecrawl-mcp-3.22" / "dist" / "index.js"}
LATEST = "3.26.0"
CALL_TIMEOUT_S = 240
KEY = "mcp-test-key-0123456789abcdef"
TOOLS = {"firecrawl_search", "firecrawl_scrape", "firecrawl_map", "firecrawl_crawl", "firecrawl_check_crawl_status"}


def firecrawl_mcp(api_url: str, workdir: Path, api_key: str = "", version: str = LATEST) -> StdioServerParameters:
    """The server as its README runs it self-hosted: FIRECRAWL_API_URL, and a key only where Wisp asks for one.
    The client passes it only a few safe variables (PATH, HOME...) besides these, and `workdir` keeps it from
    reading a stray .env (dotenv)."""
    env = {"FIRECRAWL_API_URL": api_url, **({"FIRECRAWL_API_KEY": api_key} if api_key else {})}
    return StdioServerParameters(command="node", args=[str(SERVERS[version])], env=env, cwd=workdir)


class Session:
    """One MCP session to one server process, held open on a loop of its own thread so that the tests of a
    module call the tools of the same process; the client owns the process, which dies with the session."""

    def __init__(self, server: StdioServerParameters) -> None:
        self._server = server
        self._opened: concurrent.futures.Future[Client] = concurrent.futures.Future()
        self._thread = threading.Thread(target=asyncio.run, args=(self._hold(),), daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._close: Callable[[], None] = lambda: None

    async def _hold(self) -> None:
        self._loop = asyncio.get_running_loop()
        closing = asyncio.Event()
        self._close = closing.set
        try:
            async with Client(self._server, read_timeout_seconds=CALL_TIMEOUT_S) as client:
                self._opened.set_result(client)
                await closing.wait()
        except BaseException as e:
            if not self._opened.done():
                self._opened.set_exception(e)
            raise

    def __enter__(self) -> Session:
        self._thread.start()
        self._client = self._opened.result(timeout=60)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._close)
        self._thread.join(timeout=30)

    def _run(self, coroutine: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=CALL_TIMEOUT_S + 10)

    def tools(self) -> dict[str, Any]:
        return {tool.name: tool for tool in self._run(self._client.list_tools()).tools}

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return self._run(self._client.call_tool(name, arguments))


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def result_of(result: CallToolResult) -> dict[str, Any]:
    """A tool's JSON result: 3.26.0's structured content, or 3.22.0's text, which is all it gives; a tool error
    fails the test with the server's message."""
    assert not result.is_error, text(result)
    return result.structured_content if result.structured_content is not None else json.loads(text(result))


@pytest.fixture(scope="module")
def servers(index_agent: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Session]]:
    """firecrawl-mcp of a version in front of the agent-svc whose fetching is open to the offline web (so scrape
    and crawl reach its pages) and whose crawls index into semantic-svc: one process per version, started at its
    first use and shared by the module's tests."""
    workdir = tmp_path_factory.mktemp("firecrawl-mcp")
    sessions: dict[str, Session] = {}
    with ExitStack() as opened:
        def session(version: str) -> Session:
            if version not in sessions:
                sessions[version] = opened.enter_context(Session(firecrawl_mcp(index_agent, workdir, version=version)))
            return sessions[version]
        yield session


@pytest.fixture(scope="module")
def mcp(servers: Callable[[str], Session]) -> Session:
    return servers(LATEST)


@pytest.fixture(scope="module")
def llm_agent(stack: OfflineStack, llm_stub: Service, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[str]:
    """agent-svc whose LLM (the stub's `pages` model) answers with the title and URL of each page it was shown,
    so that a test sees which pages an extraction read."""
    with agent_service(stack.searx.url, tmp_path_factory.mktemp("mcp-llm"), "agent-mcp-llm", LLM_MODEL="pages",
                       LLM_BASE_URL=f"{llm_stub.url}/v1", **AGENT_ENV) as agent:
        yield agent.url


@pytest.fixture(scope="module")
def extractor(llm_agent: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """firecrawl-mcp 3.22.0, whose firecrawl_extract calls Wisp, in front of the agent-svc with an LLM."""
    with Session(firecrawl_mcp(llm_agent, tmp_path_factory.mktemp("firecrawl-mcp-3.22"), version="3.22.0")) as session:
        yield session


@pytest.fixture(scope="module")
def site(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org/"


@pytest.fixture(scope="module")
def crawl(mcp: Session, stack: OfflineStack) -> dict[str, Any]:
    """The tool's crawl of a few git-scm.com pages, polled by the server to its end."""
    return result_of(mcp.call("firecrawl_crawl", {"url": f"{stack.web.url}/git-scm.com/docs/git-commit.html",
                                                  "limit": 4, "sitemap": "include", "maxDiscoveryDepth": 2}))


@pytest.mark.parametrize("version", SERVERS)
def test_the_tools_that_reach_wisp_are_listed(servers: Callable[[str], Session], version: str) -> None:
    tools = servers(version).tools()
    assert set(tools) >= TOOLS | {"firecrawl_extract"}, sorted(tools)
    assert not any("batch" in name for name in tools), sorted(tools)
    assert {"url", "formats", "onlyMainContent", "maxAge"} <= set(tools["firecrawl_scrape"].input_schema["properties"])
    assert {"url", "search", "limit"} <= set(tools["firecrawl_map"].input_schema["properties"])


def test_search_returns_ranked_web_results(mcp: Session) -> None:
    # the server adds sources ["web"], domainTools, toolDetail and origin to the body: Wisp takes them all
    found = result_of(mcp.call("firecrawl_search", {"query": "sqlite wal checkpoint", "limit": 3}))
    web = found["data"]["web"]
    assert found["success"] is True and 1 <= len(web) <= 3, found
    assert [w["position"] for w in web] == list(range(1, len(web) + 1))
    assert all(w["url"].startswith("http") and w["title"] for w in web)
    assert any("sqlite" in (w["title"] + w["description"]).lower() for w in web)


def test_with_a_key_search_gets_each_result_once(stack: OfflineStack, tmp_path: Path) -> None:
    """Given a key, the server adds Firecrawl's provider catalogue (sources alexandria) to every search: Wisp,
    which has none, answers it with an empty bucket and says why, rather than a second copy of the web results."""
    with agent_service(stack.searx.url, tmp_path, "agent-keyed-mcp", API_KEYS=KEY) as keyed, \
         Session(firecrawl_mcp(keyed.url, tmp_path, api_key=KEY)) as session, \
         Session(firecrawl_mcp(keyed.url, tmp_path, api_key="another-key-of-32-characters-xx")) as wrong_key:
        found = result_of(session.call("firecrawl_search", {"query": "sqlite wal checkpoint", "limit": 3}))
        refused = wrong_key.call("firecrawl_search", {"query": "sqlite wal checkpoint"})
    assert len(found["data"]["web"]) == 3 and found["data"]["alexandria"] == [], found
    assert "Alexandria) has no counterpart in Wisp" in found["warning"]
    assert refused.is_error and "401" in text(refused), text(refused)


def test_search_with_scrape_options_carries_the_pages_markdown(mcp: Session) -> None:
    found = result_of(mcp.call("firecrawl_search", {
        "query": "git rebase interactive", "limit": 2,
        "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True, "maxAge": 0, "storeInCache": False}}))
    web = found["data"]["web"]
    assert web and all(len(w["markdown"]) > 200 for w in web), found


def test_scrape_returns_the_pages_markdown_and_links(mcp: Session, site: str) -> None:
    # options an agent sends for a fresh page (the tool's own description asks for maxAge 0) must not be refused
    page = result_of(mcp.call("firecrawl_scrape", {
        "url": site + "wal.html", "formats": ["markdown", "links"], "onlyMainContent": True, "maxAge": 0,
        "storeInCache": False, "proxy": "auto", "parsers": ["pdf"], "removeBase64Images": True}))
    assert "Write-Ahead Log" in page["markdown"] and "checkpoint" in page["markdown"]
    assert site + "pragma.html" in {link.split("#")[0] for link in page["links"]}
    metadata = page["metadata"]
    assert metadata["statusCode"] == 200 and metadata["sourceURL"] == site + "wal.html" and metadata["title"]
    assert "html" not in page and "rawHtml" not in page  # only what was asked


def test_scrape_refusals_reach_the_agent_as_clear_tool_errors(mcp: Session, site: str) -> None:
    not_web = mcp.call("firecrawl_scrape", {"url": "ftp://example.org/file"})
    assert not_web.is_error and "an absolute http(s) URL" in text(not_web), text(not_web)
    actions = mcp.call("firecrawl_scrape", {"url": site + "wal.html",
                                            "actions": [{"type": "click", "selector": "#none"}]})
    assert actions.is_error and "action 1 (click '#none') failed" in text(actions), text(actions)


def test_actions_run_in_the_browser_through_the_tool(mcp: Session, site: str) -> None:
    page = result_of(mcp.call("firecrawl_scrape", {
        "url": site + "wal.html", "formats": ["markdown"],
        "actions": [{"type": "scroll", "direction": "down"},
                    {"type": "executeJavascript", "script": "document.title"}]}))
    assert "checkpoint" in page["markdown"]
    assert page["actions"]["javascriptReturns"][0]["value"].startswith("Write-Ahead Logging")


@pytest.mark.parametrize("version", SERVERS)
def test_map_lists_the_sites_links(servers: Callable[[str], Session], version: str, site: str) -> None:
    # 3.22.0 sends POST /v2/map through firecrawl-js 4.25.2, 3.26.0 through firecrawl 4.42.0
    mapped = result_of(servers(version).call("firecrawl_map", {"url": site, "limit": 50}))
    urls = [link["url"] for link in mapped["links"]]
    assert 3 <= len(urls) <= 50 and len(set(urls)) == len(urls), mapped
    assert all(url.startswith(site) for url in urls) and site + "wal.html" in urls


@pytest.mark.parametrize("version", SERVERS)
def test_map_with_a_search_term_narrows_the_links(servers: Callable[[str], Session], version: str, site: str) -> None:
    # of the site's ~30 pages, five at most: the page the term names among them
    mapped = result_of(servers(version).call("firecrawl_map", {"url": site, "search": "wal", "limit": 5}))
    urls = [link["url"] for link in mapped["links"]]
    assert 1 <= len(urls) <= 5 and site + "wal.html" in urls, mapped


def test_crawl_collects_the_pages(crawl: dict[str, Any], stack: OfflineStack) -> None:
    pages = crawl["data"]
    assert crawl["status"] == "completed" and crawl["completed"] == len(pages) == crawl["total"], crawl
    assert 1 < len(pages) <= 4
    assert all(p["markdown"] and p["metadata"]["statusCode"] == 200 and
               p["metadata"]["sourceURL"].startswith(f"{stack.web.url}/git-scm.com/docs/") for p in pages)


def test_check_crawl_status_reads_the_finished_crawl(mcp: Session, crawl: dict[str, Any]) -> None:
    status = result_of(mcp.call("firecrawl_check_crawl_status", {"id": crawl["id"]}))
    assert status["status"] == "completed" and status["completed"] == crawl["completed"]
    assert {p["metadata"]["sourceURL"] for p in status["data"]} == {p["metadata"]["sourceURL"] for p in crawl["data"]}
    unknown = mcp.call("firecrawl_check_crawl_status", {"id": "00000000-0000-4000-8000-000000000000"})
    assert unknown.is_error and "404" in text(unknown), text(unknown)


def test_extract_is_scrape_with_a_json_format(llm_agent: str, site: str, tmp_path: Path) -> None:
    """3.26.0's firecrawl_extract names its replacement; that replacement answers from the page through Wisp's
    LLM."""
    with Session(firecrawl_mcp(llm_agent, tmp_path)) as session:
        stub = session.call("firecrawl_extract", {"urls": [site + "wal.html"]})
        page = result_of(session.call("firecrawl_scrape", {
            "url": site + "wal.html", "formats": ["json"], "jsonOptions": {"prompt": PROMPT, "schema": PAGES_SCHEMA}}))
    assert stub.is_error and 'formats: ["json"]' in text(stub)
    assert [shown["url"] for shown in page["json"]["pages"]] == [site + "wal.html"], page


def test_extract_of_3_22_reads_the_pages_through_v2_extract(extractor: Session, site: str) -> None:
    """3.22.0 starts the extraction with {urls, prompt, schema, origin} and polls it to its end (firecrawl-js
    4.25.2's extract); the agent gets the merged JSON of the pages read, in their order."""
    urls = [site + "wal.html", site + "pragma.html"]
    extracted = result_of(extractor.call("firecrawl_extract", {"urls": urls, "prompt": PROMPT, "schema": PAGES_SCHEMA}))
    assert extracted["success"] is True and extracted["status"] == "completed", extracted
    assert [shown["url"] for shown in extracted["data"]["pages"]] == urls, extracted


def test_extract_refusals_of_3_22_reach_the_agent_as_clear_tool_errors(extractor: Session, site: str) -> None:
    bad_schema = extractor.call("firecrawl_extract", {"urls": [site + "wal.html"], "schema": {"type": "objekt"}})
    assert bad_schema.is_error and "schema is not a valid JSON Schema" in text(bad_schema), text(bad_schema)
    # the server drops empty arguments before it sends the body
    nothing = extractor.call("firecrawl_extract", {"urls": [], "prompt": ""})
    assert nothing.is_error and "Either 'urls' or 'prompt' must be provided" in text(nothing), text(nothing)
