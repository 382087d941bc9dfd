"""The SearXNG client against recorded answers of both dialects and the failures SearXNG reports in-band."""

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from agent.errors import BadRequest, UpstreamError
from agent.upstream.searxng import SearxngClient, parse_hit, parse_published

SAMPLES = Path(__file__).parents[3] / "fixtures" / "searxng-samples"
DIALECTS = ["searx-1.1.0", "searxng-current"]


def sample(dialect: str, name: str) -> dict:
    return json.loads((SAMPLES / dialect / f"{name}.json").read_text())


def client_answering(handler) -> SearxngClient:
    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return SearxngClient("http://searx.test/", http, timeout_s=5)


def answering_in_turn(*responses: httpx.Response) -> tuple[SearxngClient, list[httpx.URL]]:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return responses[min(len(seen), len(responses)) - 1]

    return client_answering(handler), seen


def search(client: SearxngClient, params: dict | None = None):
    return asyncio.run(client.search(params or {"q": "hello world", "format": "json"}))


@pytest.mark.parametrize(("dialect", "published"), [("searx-1.1.0", datetime(2026, 12, 2, 8, 28, 47, tzinfo=UTC)),
                                                   ("searxng-current", datetime(2026, 12, 2, 8, 33, 40, tzinfo=UTC))])
def test_rich_results_of_both_dialects(dialect: str, published: datetime) -> None:
    page = search(client_answering(lambda r: httpx.Response(200, json=sample(dialect, "it_rich"))))
    hit = page.hits[0]
    assert hit.url == "https://example.org/it/1?q=hello world" and hit.title == "it hit 1 for hello world"
    assert hit.published == published  # from pubdate: 1.1.0's publishedDate is "1 hour(s), 0 minute(s) ago"
    assert hit.thumbnail == "https://img.example.org/it/1.png" and hit.engines == ("localrich",)
    assert hit.img_src is None  # SearXNG's "" means absent


@pytest.mark.parametrize("dialect", DIALECTS)
def test_image_results(dialect: str) -> None:
    page = search(client_answering(lambda r: httpx.Response(200, json=sample(dialect, "images"))))
    assert [h.img_src for h in page.hits][:2] == ["https://img.example.org/images/1.png",
                                                  "https://img.example.org/images/2.png"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unresponsive_engines_are_reported_sorted(dialect: str) -> None:
    page = search(client_answering(lambda r: httpx.Response(200, json=sample(dialect, "mixed"))))
    assert page.hits and page.unresponsive == [("localerror", "HTTP error"), ("localslow", "timeout")]


def test_searx_1_1_0_xpath_thumbnail_is_img_src() -> None:
    page = search(client_answering(lambda r: httpx.Response(200, json=sample("searx-1.1.0", "engines_lh"))))
    assert page.hits[0].img_src and page.hits[0].content


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_rejected_parameter_is_a_bad_request(dialect: str) -> None:
    client = client_answering(lambda r: httpx.Response(400, json=sample(dialect, "badtr")))
    with pytest.raises(BadRequest, match=r"SearXNG rejected the request: Invalid value .*decade.* time_range"):
        search(client)


def test_the_request_carries_the_params_and_a_timeout_limit() -> None:
    client, seen = answering_in_turn(httpx.Response(200, json=sample("searxng-current", "general")))
    asyncio.run(client.search({"q": "a b", "format": "json", "pageno": "2"}, budget_s=2.0))
    assert seen[0].path == "/search"
    assert dict(seen[0].params) == {"q": "a b", "format": "json", "pageno": "2", "timeout_limit": "1.75"}


WERKZEUG_403 = ("<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>You don&#39;t "
                "have the permission to access the requested resource.</p>\n")


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(403, text=WERKZEUG_403, headers={"content-type": "text/html"}),
         "JSON format is disabled in its settings.yml; add json to search.formats"),
        (httpx.Response(403, text=""), "JSON format is disabled"),  # newer SearXNG: an empty 403
        (httpx.Response(429, text="Too Many Requests"), "rate-limited the request (HTTP 429)"),
        (httpx.Response(500, json={"error": "boom"}), "SearXNG answered HTTP 500: boom"),
        (httpx.Response(503, text="<h1>Service Unavailable</h1>"), "SearXNG answered HTTP 503: <h1>Service"),
        (httpx.Response(200, text="<html>results</html>", headers={"content-type": "text/html"}),
         "non-JSON body (text/html)"),
        (httpx.Response(200, json=[1, 2]), "JSON of type list"),
        (httpx.Response(200, content=b'{"results": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"), "non-JSON body"),
        (httpx.Response(200, content=b'{"results": [{"score": ' + b"1" * 100_000 + b"}]}"), "non-JSON body"),
        (httpx.Response(200, json={"answers": []}), "without a results list"),
    ],
)
def test_in_band_failures_become_upstream_errors(response: httpx.Response, message: str) -> None:
    with pytest.raises(UpstreamError, match=message.replace("(", r"\(").replace(")", r"\)")):
        search(client_answering(lambda r: response))


SEARX_500 = httpx.Response(500, text="<title>500 Internal Server Error</title>", headers={"content-type": "text/html"})


def test_a_search_searx_failed_with_a_5xx_is_tried_once_more_within_the_budget() -> None:
    client, seen = answering_in_turn(SEARX_500, httpx.Response(200, json=sample("searx-1.1.0", "mixed")))
    before = REGISTRY.get_sample_value("wisp_agent_searxng_retries_total", {"status": "500"}) or 0
    page = asyncio.run(client.search({"q": "git rebase", "format": "json"}, budget_s=3.0))
    assert page.hits and len(seen) == 2
    assert float(seen[1].params["timeout_limit"]) <= float(seen[0].params["timeout_limit"]) == 2.75
    assert REGISTRY.get_sample_value("wisp_agent_searxng_retries_total", {"status": "500"}) == before + 1


@pytest.mark.parametrize(("responses", "budget", "calls"), [
    ((SEARX_500,), 3.0, 2),  # failed twice: the second answer is the error
    ((SEARX_500,), 0.9, 1),  # too little budget left for a second try
    ((httpx.Response(429, text="Too Many Requests"),), 3.0, 1),  # a refusal is not retried
])
def test_a_retry_is_bounded(responses: tuple[httpx.Response, ...], budget: float, calls: int) -> None:
    client, seen = answering_in_turn(*responses)
    with pytest.raises(UpstreamError):
        asyncio.run(client.search({"q": "git rebase", "format": "json"}, budget_s=budget))
    assert len(seen) == calls


def test_connection_refused_and_timeouts_name_the_cause() -> None:
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused")

    def stall(request):
        raise httpx.ReadTimeout("timed out")

    with pytest.raises(UpstreamError, match=r"unreachable at http://searx.test: connection failed .*refused"):
        search(client_answering(refuse))
    with pytest.raises(UpstreamError, match="did not answer within"):
        search(client_answering(stall))


def test_catalog_is_read_from_config_and_cached() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json={"categories": ["general", "it"], "engines": [
            {"name": "ddg", "categories": ["general"]}, {"name": "gh", "categories": ["it", "repos"]}, {"bad": 1}]})

    client = client_answering(handler)
    catalog = asyncio.run(client.catalog())
    asyncio.run(client.catalog())
    assert catalog.engines == {"ddg": frozenset({"general"}), "gh": frozenset({"it", "repos"})}
    assert catalog.categories == {"general", "it"} and calls == ["/config"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"pubdate": "2026-12-02 08:37:06+0000", "publishedDate": "1 hour(s), 0 minute(s) ago"},
         datetime(2026, 12, 2, 8, 37, 6, tzinfo=UTC)),
        ({"pubdate": "2022-06-25 00:00:00"}, datetime(2022, 6, 25, tzinfo=UTC)),  # searx 1.1.0, a naive date
        ({"publishedDate": "2026-12-02T08:37:06+01:00"}, datetime(2026, 12, 2, 7, 37, 6, tzinfo=UTC)),
        ({"publishedDate": "Nov 30, 2026"}, None),
        ({"publishedDate": None}, None),
        ({}, None),
    ],
)
def test_published_dates(raw: dict, expected: datetime | None) -> None:
    assert parse_published(raw) == expected


@pytest.mark.parametrize("raw", [{"title": "no url"}, {"url": ""}, {"url": 5}, "text", None])
def test_results_without_a_url_are_skipped(raw) -> None:
    assert parse_hit(raw) is None


def test_tolerant_fields() -> None:
    hit = parse_hit({"url": "https://x.org", "title": None, "content": 5, "resolution": "1920 × 1080",
                     "img_src": "", "thumbnail": "", "engine": "e"})
    assert (hit.title, hit.content, hit.resolution, hit.img_src, hit.thumbnail, hit.engines) == (
        "", "", (1920, 1080), None, None, ("e",))
    assert parse_hit({"url": "https://x.org", "resolution": "big"}).resolution is None
