"""POST /v2/scrape and /v1/scrape on the offline web, through firecrawl-py (v2 sync and async, v1), firecrawl-js
(v2 and v1) and LangChain's FireCrawlLoader: formats, JSON and error pages, the SSRF guard, pages that fail, and
bad input in Firecrawl's envelope."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    InternalServerError,
    RequestTimeoutError,
    WebsiteNotSupportedError,
)
from langchain_community.document_loaders import FireCrawlLoader
from requests.exceptions import HTTPError

from offline_web.processes import free_port
from offline_web.stack import OfflineStack
from tests.integration.test_sdk_js import call_js


@pytest.fixture(scope="module")
def wal(stack: OfflineStack) -> str:
    return f"{stack.web.url}/www.sqlite.org/wal.html"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers: a page that hangs."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_python_sdk_scrapes_markdown(fetching_agent: str, wal: str) -> None:
    doc = Firecrawl(api_url=fetching_agent).scrape(wal, formats=["markdown"])
    assert "checkpoint" in doc.markdown and doc.html is None and doc.links is None  # only what was asked
    metadata = doc.metadata
    assert metadata.source_url == metadata.url == wal and metadata.status_code == 200
    assert metadata.title and metadata.content_type == "text/html" and metadata.scrape_id


def test_python_sdk_scrapes_html_links_and_raw_html(fetching_agent: str, wal: str) -> None:
    doc = Firecrawl(api_url=fetching_agent).scrape(wal, formats=["html", "links", "raw_html"], only_main_content=False)
    assert doc.markdown is None and doc.html.lstrip().startswith("<") and "<html" in doc.raw_html.lower()
    assert len(doc.links) > 3 and all(link.startswith("http") for link in doc.links)
    assert f"{wal.rsplit('/', 1)[0]}/pragma.html" in {link.split("#")[0] for link in doc.links}


def test_python_v1_client_scrapes(fetching_agent: str, wal: str) -> None:
    doc = V1FirecrawlApp(api_url=fetching_agent).scrape_url(wal, formats=["markdown", "links"])
    assert doc.success and "checkpoint" in doc.markdown and doc.links
    assert doc.metadata["sourceURL"] == wal and doc.metadata["statusCode"] == 200


def test_js_sdk_scrapes_every_plain_format(fetching_agent: str, wal: str) -> None:
    v2, v1 = call_js(fetching_agent,
                     {"method": "scrape", "args": [wal, {"formats": ["markdown", "html", "rawHtml", "links"]}]},
                     {"client": "v1", "method": "scrapeUrl", "args": [wal, {"formats": ["markdown"]}]})
    assert v2["ok"], v2
    doc = v2["result"]
    assert set(doc) == {"markdown", "html", "rawHtml", "links", "metadata"}
    assert "checkpoint" in doc["markdown"] and doc["metadata"]["sourceURL"] == wal
    assert v1["ok"] and v1["result"]["success"] and "checkpoint" in v1["result"]["markdown"]


def test_a_page_the_ssrf_guard_refuses_is_a_403_through_both_sdks(agent_url: str, wal: str) -> None:
    # agent_url leaves fetching closed to loopback, as in production
    with pytest.raises(WebsiteNotSupportedError, match="non-public address") as refused:
        Firecrawl(api_url=agent_url).scrape(wal, formats=["markdown"])
    assert refused.value.status_code == 403 and refused.value.code == "UNSUPPORTED_SITE"
    [outcome] = call_js(agent_url, {"method": "scrape", "args": [wal]})
    assert not outcome["ok"] and outcome["error"]["status"] == 403 and outcome["error"]["code"] == "UNSUPPORTED_SITE"


@pytest.mark.parametrize("url", ["http://[2002:7f00:1::1]/", "http://169.254.169.254/latest/", "http://[::ffff:10.0.0.1]/",
                                 "http://10.1.2.3/"])
def test_the_guard_holds_with_loopback_opened(fetching_agent: str, url: str) -> None:
    response = httpx.post(fetching_agent + "/v2/scrape", json={"url": url})
    assert response.status_code == 403 and response.json()["code"] == "UNSUPPORTED_SITE"


def test_a_missing_page_is_a_document_of_its_content_with_its_404(fetching_agent: str, stack: OfflineStack) -> None:
    missing = f"{stack.web.url}/www.sqlite.org/no-such-page.html"  # the offline web answers "not found"
    doc = Firecrawl(api_url=fetching_agent).scrape(missing, formats=["markdown"])
    assert doc.markdown == "not found" and doc.metadata.status_code == 404 and doc.warning is None
    async_doc = asyncio.run(AsyncFirecrawl(api_url=fetching_agent).scrape(missing, formats=["markdown"]))
    assert async_doc.markdown == "not found" and async_doc.metadata.status_code == 404
    v1 = V1FirecrawlApp(api_url=fetching_agent).scrape_url(missing, formats=["markdown"])
    assert v1.success and v1.markdown == "not found" and v1.metadata["statusCode"] == 404
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": [missing]})
    assert outcome["ok"] and outcome["result"]["metadata"]["statusCode"] == 404
    assert outcome["result"]["markdown"] == "not found"


def test_an_error_status_with_a_json_body_is_returned_too(fetching_agent: str, stack: OfflineStack) -> None:
    forced = f"{stack.web.url}/_test/status/503"
    doc = Firecrawl(api_url=fetching_agent).scrape(forced, formats=["markdown", "raw_html"])
    assert doc.metadata.status_code == 503 and json.loads(doc.raw_html) == {"error": "forced status 503"}
    assert doc.markdown.startswith("```json\n")


def test_a_json_page_is_returned_fenced_through_every_client(fetching_agent: str, stack: OfflineStack) -> None:
    index = f"{stack.web.url}/www.mkdocs.org/search/search_index.json"  # mkdocs' search index, 475 KB of JSON
    doc = Firecrawl(api_url=fetching_agent).scrape(index, formats=["markdown", "raw_html"])
    assert doc.markdown.startswith("```json\n{") and doc.markdown.endswith("\n```")
    assert json.loads(doc.raw_html)["config"]["lang"] == ["en"]
    assert doc.metadata.content_type == "application/json" and doc.metadata.status_code == 200
    async_doc = asyncio.run(AsyncFirecrawl(api_url=fetching_agent).scrape(index, formats=["markdown"]))
    assert async_doc.markdown == doc.markdown
    v1 = V1FirecrawlApp(api_url=fetching_agent).scrape_url(index, formats=["markdown"])
    assert v1.markdown == doc.markdown
    [v2_js, v1_js] = call_js(fetching_agent, {"method": "scrape", "args": [index, {"formats": ["markdown"]}]},
                             {"client": "v1", "method": "scrapeUrl", "args": [index, {"formats": ["markdown"]}]})
    assert v2_js["ok"] and v2_js["result"]["markdown"] == doc.markdown
    assert v1_js["ok"] and v1_js["result"]["markdown"] == doc.markdown


def test_an_unreachable_site_is_a_500_with_firecrawls_site_error(fetching_agent: str) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/page.html"  # nothing listens there
    with pytest.raises(InternalServerError, match="Connect") as failed:
        Firecrawl(api_url=fetching_agent).scrape(nowhere)
    assert failed.value.status_code == 500 and failed.value.code == "SCRAPE_SITE_ERROR"
    with pytest.raises(InternalServerError) as async_failed:
        asyncio.run(AsyncFirecrawl(api_url=fetching_agent).scrape(nowhere))
    assert async_failed.value.status_code == 500
    with pytest.raises(HTTPError, match="Internal Server Error: Failed to scrape URL") as v1_failed:
        V1FirecrawlApp(api_url=fetching_agent).scrape_url(nowhere)
    assert v1_failed.value.response.status_code == 500
    [v2_js, v1_js] = call_js(fetching_agent, {"method": "scrape", "args": [nowhere]},
                             {"client": "v1", "method": "scrapeUrl", "args": [nowhere, {"formats": ["markdown"]}]})
    assert not v2_js["ok"] and v2_js["error"]["status"] == 500 and v2_js["error"]["code"] == "SCRAPE_SITE_ERROR"
    assert not v1_js["ok"] and "500" in v1_js["error"]["message"]
    response = httpx.post(fetching_agent + "/v2/scrape", json={"url": nowhere})
    assert response.status_code == 500 and response.json()["success"] is False
    assert response.json()["code"] == "SCRAPE_SITE_ERROR" and "Connect" in response.json()["error"]


def test_a_timeout_past_wisps_limit_is_accepted_and_named_in_a_warning(fetching_agent: str, wal: str) -> None:
    for timeout in (900_000, 2**53 - 1):
        response = httpx.post(fetching_agent + "/v2/scrape", json={"url": wal, "timeout": timeout}, timeout=60)
        assert response.status_code == 200, response.text
        assert response.json()["data"]["warning"] == (f"timeout {timeout} ms is above Wisp's limit: the scrape "
                                                      "had 300000 ms")
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": [wal, {"timeout": 900_000}]})
    assert outcome["ok"] and "above Wisp's limit" in outcome["result"]["warning"]


def test_a_page_that_hangs_is_a_408_at_the_requests_timeout(fetching_agent: str, silent_port: int) -> None:
    with pytest.raises(RequestTimeoutError) as timed_out:
        Firecrawl(api_url=fetching_agent).scrape(f"http://127.0.0.1:{silent_port}/", timeout=1500)
    assert timed_out.value.code == "SCRAPE_TIMEOUT"


def test_bad_input_is_a_400_through_both_sdks(fetching_agent: str) -> None:
    with pytest.raises(BadRequestError, match="invalid url"):
        Firecrawl(api_url=fetching_agent).scrape("ftp://files.example.org/x", formats=["markdown"])
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": ["http://example.org/", {"formats": ["pdf"]}]})
    assert not outcome["ok"] and outcome["error"]["status"] == 400 and "unknown formats" in outcome["error"]["message"]
    assert outcome["error"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("path", ["/v2/scrape", "/v1/scrape"])
@pytest.mark.parametrize("wait_for", [8000, 15000])
def test_wait_for_past_half_the_timeout_is_firecrawls_400(fetching_agent: str, path: str, wait_for: int) -> None:
    response = httpx.post(fetching_agent + path, json={"url": "http://firecrawl.dev", "waitFor": wait_for,
                                                     "timeout": 15000})
    assert response.status_code == 400
    assert response.json() == {"success": False, "code": "BAD_REQUEST",
                               "error": "waitFor must not exceed half of timeout",
                               "details": [{"code": "custom", "path": ["waitFor"],
                                            "message": "waitFor must not exceed half of timeout"}]}


def test_wait_for_past_half_the_timeout_through_every_client(fetching_agent: str, wal: str) -> None:
    message = "waitFor must not exceed half of timeout"
    with pytest.raises(BadRequestError, match=message) as refused:
        Firecrawl(api_url=fetching_agent).scrape(wal, wait_for=8000, timeout=15000)
    assert refused.value.status_code == 400 and refused.value.code == "BAD_REQUEST"
    with pytest.raises(BadRequestError, match=message):
        asyncio.run(AsyncFirecrawl(api_url=fetching_agent).scrape(wal, wait_for=8000, timeout=15000))
    with pytest.raises(HTTPError, match=message):
        V1FirecrawlApp(api_url=fetching_agent).scrape_url(wal, wait_for=8000, timeout=15000)
    too_long = {"waitFor": 8000, "timeout": 15000}
    [v2_js, v1_js] = call_js(fetching_agent, {"method": "scrape", "args": [wal, too_long]},
                             {"client": "v1", "method": "scrapeUrl", "args": [wal, too_long]})
    assert not v2_js["ok"] and v2_js["error"]["status"] == 400 and v2_js["error"]["message"] == message
    assert not v1_js["ok"] and message in v1_js["error"]["message"]


@pytest.mark.parametrize(("path", "body", "code", "error", "where"), [
    ("/v2/scrape", b"{not json", "BAD_REQUEST_INVALID_JSON", "Bad request, malformed JSON", None),
    ("/v2/scrape", b'{"url": "http://example.org/", "timeout": 1' + b"0" * 400 + b"}", "BAD_REQUEST", "Bad Request",
     ["timeout"]),
    ("/v2/scrape", b'{"formats": ["markdown"]}', "BAD_REQUEST", "Bad Request", ["url"]),
    ("/v2/scrape", b'{"url": "http://example.org/", "waitFor": 60001}', "BAD_REQUEST", "Bad Request", ["waitFor"]),
    ("/v2/scrape", b'{"url": "ftp://example.org/"}', "BAD_REQUEST", "invalid url 'ftp://example.org/'", ["url"]),
    ("/v2/scrape", b'{"url": "http://example.org/", "actions": [{"type": "click"}]}', "BAD_REQUEST",
     "actions.0.selector: Field required", ["actions", 0, "selector"]),
    ("/v1/scrape", b'{"url": "http://example.org/", "formats": [{"type": "markdown"}]}', "BAD_REQUEST", "Bad Request",
     ["formats", 0]),
    ("/v2/crawl", b'{"url": "http://example.org/", "limit": 0}', "BAD_REQUEST", "Bad Request", ["limit"]),
    ("/v1/crawl", b'{"url": "http://example.org/", "delay": 61}', "BAD_REQUEST", "Bad Request", ["delay"]),
    ("/v2/crawl", b'{"url": "http://example.org/", "includePaths": ["(x"]}', "BAD_REQUEST",
     "invalid regular expression '(x'", ["includePaths"]),
], ids=["bad-json", "400-digit-timeout", "no-url", "wait-for-past-60-s", "ftp", "actions", "v1-object-format",
        "crawl-limit-0", "v1-crawl-delay", "crawl-bad-pattern"])
def test_bad_bodies_get_firecrawls_400_envelope(fetching_agent: str, path: str, body: bytes, code: str, error: str,
                                                where: list | None) -> None:
    response = httpx.post(fetching_agent + path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["success"] is False
    assert response.json()["code"] == code and response.json()["error"].startswith(error)
    if where is not None:  # zod's issues, the first naming the field
        assert response.json()["details"][0]["path"] == where


def test_langchains_firecrawl_loader_in_scrape_mode(fetching_agent: str, wal: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "any")  # the loader insists on a key; Wisp without API_KEYS takes any
    loader = FireCrawlLoader(url=wal, api_url=fetching_agent, mode="scrape",
                                     params={"formats": ["markdown", "links"], "only_main_content": True})
    [doc] = loader.load()
    assert "checkpoint" in doc.page_content
    assert doc.metadata["source_url"] == wal and doc.metadata["status_code"] == 200


def test_a_recent_scrape_is_found_again_by_its_id(fetching_agent: str, wal: str) -> None:
    doc = Firecrawl(api_url=fetching_agent).scrape(wal, formats=["markdown", "links"])
    for version in ("v2", "v1"):
        again = httpx.get(f"{fetching_agent}/{version}/scrape/{doc.metadata.scrape_id}")
        assert again.status_code == 200 and again.json()["success"]
        data = again.json()["data"]
        assert data["markdown"] == doc.markdown and data["links"] == doc.links
        assert data["metadata"]["scrapeId"] == doc.metadata.scrape_id


@pytest.mark.parametrize(("scrape_id", "status", "error"), [
    ("0190a0a0-0000-7000-8000-000000000000", 404, "Job not found."),
    ("not-an-id", 400, "Invalid scrape ID: a scrape's id is the UUID in its metadata.scrapeId"),
])
def test_an_unknown_or_malformed_scrape_id_is_a_4xx_in_firecrawls_envelope(fetching_agent: str, scrape_id: str,
                                                                           status: int, error: str) -> None:
    response = httpx.get(f"{fetching_agent}/v2/scrape/{scrape_id}")
    assert response.status_code == status and response.json() == {"success": False, "error": error}
