"""POST /v2/scrape and /v1/scrape on the offline web, through firecrawl-py (v2 and v1 clients), firecrawl-js
(v2 and v1) and LangChain's FireCrawlLoader: formats, the SSRF guard, pages that fail, and bad input."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import Firecrawl, V1FirecrawlApp
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    FirecrawlError,
    RequestTimeoutError,
    WebsiteNotSupportedError,
)
from langchain_community.document_loaders import FireCrawlLoader

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


def test_a_missing_page_is_a_document_with_its_404(fetching_agent: str, stack: OfflineStack) -> None:
    missing = f"{stack.web.url}/www.sqlite.org/no-such-page.html"
    doc = Firecrawl(api_url=fetching_agent).scrape(missing, formats=["markdown"])
    assert doc.markdown is None and doc.metadata.status_code == 404 and "HTTP 404" in doc.warning
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": [missing]})
    assert outcome["ok"] and outcome["result"]["metadata"]["statusCode"] == 404


def test_an_unreachable_site_is_firecrawls_site_error_not_a_5xx(fetching_agent: str) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/page.html"  # nothing listens there
    with pytest.raises(FirecrawlError, match="Connect") as failed:
        Firecrawl(api_url=fetching_agent).scrape(nowhere)
    assert failed.value.status_code == 200 and failed.value.code == "SCRAPE_SITE_ERROR"
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": [nowhere]})
    assert not outcome["ok"] and outcome["error"]["code"] == "SCRAPE_SITE_ERROR"


def test_a_page_that_hangs_is_a_408_at_the_requests_timeout(fetching_agent: str, silent_port: int) -> None:
    with pytest.raises(RequestTimeoutError) as timed_out:
        Firecrawl(api_url=fetching_agent).scrape(f"http://127.0.0.1:{silent_port}/", timeout=1500)
    assert timed_out.value.code == "SCRAPE_TIMEOUT"


def test_bad_input_is_a_400_through_both_sdks(fetching_agent: str) -> None:
    with pytest.raises(BadRequestError, match="invalid url"):
        Firecrawl(api_url=fetching_agent).scrape("ftp://files.example.org/x", formats=["markdown"])
    [outcome] = call_js(fetching_agent, {"method": "scrape", "args": ["http://example.org/", {"formats": ["pdf"]}]})
    assert not outcome["ok"] and outcome["error"]["status"] == 400 and "unknown formats" in outcome["error"]["message"]


@pytest.mark.parametrize(("path", "body", "code"), [
    ("/v2/scrape", b"{not json", "BAD_REQUEST_INVALID_JSON"),
    ("/v2/scrape", b'{"url": "http://example.org/", "timeout": 1' + b"0" * 400 + b"}", None),
    ("/v2/scrape", b'{"formats": ["markdown"]}', None),
    ("/v2/scrape", b'{"url": "http://example.org/", "actions": [{"type": "click"}]}', "SCRAPE_ACTIONS_NOT_SUPPORTED"),
    ("/v1/scrape", b'{"url": "http://example.org/", "formats": [{"type": "markdown"}]}', None),
], ids=["bad-json", "400-digit-timeout", "no-url", "actions", "v1-object-format"])
def test_bad_bodies_get_firecrawls_400_envelope(fetching_agent: str, path: str, body: bytes, code: str | None) -> None:
    response = httpx.post(fetching_agent + path, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json()["success"] is False
    assert response.json().get("code") == code


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
