"""The official Firecrawl MCP server (npm firecrawl-mcp 3.26.0, over stdio, run with node) self-hosted against
agent-svc, driven by the MCP SDK's own client: each of its tools that reaches Wisp gives a usable result on the
offline web.

firecrawl-mcp 3.26.0 has no batch scrape tool, and its firecrawl_extract is a deprecated stub that answers "use
firecrawl_scrape with formats ["json"]" without calling the API; the tests drive that replacement instead. Its
other tools (agent, interact, parse, monitors, research, feedback) call endpoints Wisp does not have. Under stdio
with FIRECRAWL_API_URL set it calls no other address (its cloud-only parts, OAuth and the keyless proxy, stay off)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult
from test_rich import rich_agents  # noqa: F401 - the fixture, with its LLM server

from offline_web.stack import OfflineStack
from tests.integration.conftest import agent_service

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parent.parent / "sdk_js" / "node_modules" / "firecrawl-mcp" / "dist" / "index.js"
CALL_TIMEOUT_S = 240
KEY = "mcp-test-key-0123456789abcdef"
TOOLS = {"firecrawl_search", "firecrawl_scrape", "firecrawl_map", "firecrawl_crawl", "firecrawl_check_crawl_status"}


def firecrawl_mcp(api_url: str, workdir: Path, api_key: str = "") -> StdioServerParameters:
    """The server as its README runs it self-hosted: FIRECRAWL_API_URL, and a key only where Wisp asks for one.
    The client passes it only a few safe variables (PATH, HOME...) besides these, and `workdir` keeps it from
    reading a stray .env (dotenv)."""
    env = {"FIRECRAWL_API_URL": api_url, **({"FIRECRAWL_API_KEY": api_key} if api_key else {})}
    return StdioServerParameters(command="node", args=[str(SERVER)], env=env, cwd=workdir)


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
    """A tool's structured result; a tool error fails the test with the server's message."""
    assert not result.is_error, text(result)
    assert result.structured_content is not None, text(result)
    return result.structured_content


@pytest.fixture(scope="module")
def mcp(index_agent: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """firecrawl-mcp in front of the agent-svc whose fetching is open to the offline web (so scrape and crawl
    reach its pages) and whose crawls index into semantic-svc."""
    with Session(firecrawl_mcp(index_agent, tmp_path_factory.mktemp("firecrawl-mcp"))) as session:
        yield session


@pytest.fixture(scope="module")
def site(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org/"


@pytest.fixture(scope="module")
def crawl(mcp: Session, stack: OfflineStack) -> dict[str, Any]:
    """The tool's crawl of a few git-scm.com pages, polled by the server to its end."""
    return result_of(mcp.call("firecrawl_crawl", {"url": f"{stack.web.url}/git-scm.com/docs/git-commit.html",
                                                  "limit": 4, "sitemap": "include", "maxDiscoveryDepth": 2}))


def test_the_tools_that_reach_wisp_are_listed(mcp: Session) -> None:
    tools = mcp.tools()
    assert set(tools) >= TOOLS, sorted(tools)
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
    actions = mcp.call("firecrawl_scrape", {"url": site + "wal.html", "actions": [{"type": "scroll"}]})
    assert actions.is_error and "actions are not supported" in text(actions), text(actions)


def test_map_lists_the_sites_links(mcp: Session, site: str) -> None:
    mapped = result_of(mcp.call("firecrawl_map", {"url": site, "limit": 50}))
    urls = [link["url"] for link in mapped["links"]]
    assert 3 <= len(urls) <= 50 and len(set(urls)) == len(urls), mapped
    assert all(url.startswith(site) for url in urls) and site + "wal.html" in urls


def test_map_with_a_search_term_narrows_the_links(mcp: Session, site: str) -> None:
    # of the site's ~30 pages, five at most: the page the term names among them
    mapped = result_of(mcp.call("firecrawl_map", {"url": site, "search": "wal", "limit": 5}))
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


def test_extract_is_scrape_with_a_json_format(rich_agents: dict[str, str], stack: OfflineStack,  # noqa: F811
                                              tmp_path: Path) -> None:
    """firecrawl_extract names its replacement; that replacement answers from the page through Wisp's LLM."""
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    with Session(firecrawl_mcp(rich_agents["rich"], tmp_path)) as session:
        stub = session.call("firecrawl_extract", {"urls": [f"{stack.web.url}/www.sqlite.org/wal.html"]})
        page = result_of(session.call("firecrawl_scrape", {
            "url": f"{stack.web.url}/www.sqlite.org/wal.html", "formats": ["json"],
            "jsonOptions": {"prompt": "The title of this page.", "schema": schema}}))
    assert stub.is_error and 'formats: ["json"]' in text(stub)
    assert isinstance(page["json"], dict) and isinstance(page["json"]["title"], str), page
