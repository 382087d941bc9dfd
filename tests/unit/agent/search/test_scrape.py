"""/v2/scrape and /v1/scrape: the request models and their limits, and one page through the page stage into a
Firecrawl Document (the offline web: tests/integration/test_scrape.py), every failure with Firecrawl's status."""

import asyncio
import base64
import json
from typing import Any, get_args

import httpx
import pytest

from agent.api.bodies import parsed
from agent.api.firecrawl.scrape_wire import MAX_FORMATS, MAX_TIMEOUT_MS, ScrapeRequest, V1ScrapeRequest
from agent.api.firecrawl.search_wire import MAX_SAFE_INTEGER
from agent.core.browsing import (
    NO_BROWSER_WORK,
    BrowserWork,
    Click,
    ExecuteJavascript,
    Image,
    Rendered,
    ScrapedState,
    ScriptReturn,
    Shot,
)
from agent.core.pages import CacheUse, FailureKind, Fetched, Page, PageError
from agent.errors import InvalidRequest
from agent.search.scrape import FAILURES, ScrapeFailed, ScrapeJob, scrape

from ..answers.test_rich import FakeLLM
from ..fake_searxng import FakeSearxng, replaced
from ..pages.test_loading import StuckPool

URL = "https://docs.test/wal.html"
PAGE = ("<html lang='en'><head><title>Write-Ahead Logging</title><meta name='description' content='How WAL works'>"
        "</head><body><nav><a href='/index.html'>Home</a></nav><article><h1>WAL</h1><p>SQLite runs a checkpoint "
        "when the WAL file reaches 1000 pages; <a href='pragma.html#wal'>PRAGMA wal_checkpoint</a> runs one by "
        "hand.</p></article><footer>Footer text of every page</footer></body></html>")
# what firecrawl-py 4.55.0 sends for scrape(url, formats=[...]) (contract §10)
PY_SDK_BODY = {"onlyMainContent": True, "mobile": False, "removeBase64Images": True, "fastMode": False,
               "blockAds": True, "maxAge": 14400000, "storeInCache": True, "origin": "python-sdk@4.55.0"}


def job(body: dict[str, Any], model: type[ScrapeRequest] | type[V1ScrapeRequest] = ScrapeRequest) -> ScrapeJob:
    return parsed(json.dumps({"url": URL, **body}).encode(), model).to_job(30.0)


def test_defaults_are_firecrawls() -> None:
    assert job({}) == ScrapeJob(URL, ("markdown",), (), True, 30_000)
    assert job({"url": "docs.test/wal.html"}).url == "http://docs.test/wal.html"  # Firecrawl prepends http://


def test_what_the_python_sdk_sends_is_accepted() -> None:
    scraped = job({**PY_SDK_BODY, "formats": ["markdown", {"type": "html"}, "links", "rawHtml"], "timeout": 9000})
    assert scraped.formats == ("markdown", "html", "links", "rawHtml") and scraped.timeout_ms == 9000
    assert scraped.warnings == () and scraped.extraction.document


def test_max_age_and_store_in_cache_travel_with_the_job_on_v2_and_v1() -> None:
    assert job(PY_SDK_BODY).cache_use == CacheUse(14_400_000, store=True)
    assert job({}).cache_use == CacheUse()  # the service's DEFAULT_MAX_AGE_MS
    assert job({"maxAge": 1000, "storeInCache": False}, V1ScrapeRequest).cache_use == CacheUse(1000, store=False)
    for bad in ({"maxAge": -1}, {"maxAge": "1000"}, {"storeInCache": 1}):
        with pytest.raises(InvalidRequest):
            job(bad)


def test_skip_tls_verification_is_accepted_and_ignored_with_a_warning_when_set() -> None:
    assert job({"skipTlsVerification": False}).warnings == ()
    assert job({"skipTlsVerification": True}).warnings == (
        "skipTlsVerification was ignored: Wisp verifies every page's TLS certificate",)
    assert job({"skipTlsVerification": True}, V1ScrapeRequest).warnings == job({"skipTlsVerification": True}).warnings
    with pytest.raises(InvalidRequest):
        job({"skipTlsVerification": "yes"})


def test_llm_formats_become_asks_and_unsupported_ones_a_warning() -> None:
    scraped = job({"formats": ["summary", {"type": "json", "prompt": "the title"}, "screenshot", "images"],
                   "onlyMainContent": False, "includeTags": ["article"], "waitFor": 1000})
    assert [a.kind for a in scraped.asks] == ["summary", "json"] and scraped.formats == ()
    assert not scraped.main_only and not scraped.extraction.document
    assert scraped.warnings == ("formats ['images'] are not supported and were skipped",
                                "includeTags are not supported and were ignored")
    assert scraped.work == BrowserWork(wait_for_ms=1000, screenshot=Shot())


@pytest.mark.parametrize(("body", "problem"), [
    ({"url": "ftp://docs.test/"}, "invalid url"),
    ({"url": "http://"}, "invalid url"),
    ({"url": "http://docs.test:99999/"}, "invalid url"),
    ({"formats": ["pdf"]}, "unknown formats ['pdf']"),
    ({"formats": ["markdown"] * (MAX_FORMATS + 1)}, f"at most {MAX_FORMATS}"),
    ({"formats": [{"type": "json", "prompt": ["a"]}]}, "must be a string"),
    ({"formats": ["summary", {"type": "summary"}]}, "at most once each"),
    ({"formats": [7]}, 'each item must be a string or an object with a string "type"'),
])
def test_bad_requests_are_400s_naming_the_field_in_firecrawls_shape(body: dict, problem: str) -> None:
    with pytest.raises(InvalidRequest, match=problem.replace("[", r"\[").replace("]", r"\]")) as refused:
        job(body)
    # a custom check: Firecrawl's handler makes its message the error, and names the field in the issue
    [issue] = refused.value.details
    assert refused.value.code == "BAD_REQUEST" and refused.value.message == issue["message"]
    assert issue["code"] == "custom" and issue["path"] == ["url" if "url" in body else "formats"]


@pytest.mark.parametrize(("waited", "timeout"), [(8000, 15000), (15000, 15000), (1, 1)])
def test_wait_for_past_half_the_timeout_is_firecrawls_refinement(waited: int, timeout: int) -> None:
    with pytest.raises(InvalidRequest) as refused:
        job({"waitFor": waited, "timeout": timeout})
    assert refused.value.details == [{"code": "custom", "path": ["waitFor"],
                                      "message": "waitFor must not exceed half of timeout"}]
    assert refused.value.message == "waitFor must not exceed half of timeout" and refused.value.status == 400
    assert job({"waitFor": 7500, "timeout": 15000}).timeout_ms == 15000
    assert job({"waitFor": 20000}).timeout_ms == 30_000  # no timeout given: no refinement, as upstream


@pytest.mark.parametrize("body", [
    {"url": 42}, {"url": ""}, {"url": "http://a.test/" + "x" * 2048}, {"timeout": 0}, {"timeout": 10 ** 400},
    {"timeout": MAX_SAFE_INTEGER + 1}, {"waitFor": -1}, {"formats": "markdown"}, {"headers": {"x": 1}},
    {"onlyMainContent": "yes"}, {"includeTags": ["a"] * 101}, {"actions": [{}] * 51},
])
def test_out_of_range_or_mistyped_keys_are_bad_requests_with_zod_issues(body: dict) -> None:
    with pytest.raises(InvalidRequest) as refused:
        job(body)
    assert refused.value.message == "Bad Request" and refused.value.code == "BAD_REQUEST"
    assert refused.value.details and all(i["code"] != "custom" for i in refused.value.details)


@pytest.mark.parametrize("timeout", [MAX_TIMEOUT_MS + 1, 10_000_000, MAX_SAFE_INTEGER])
def test_a_timeout_past_wisps_limit_is_accepted_cut_and_named_in_a_warning(timeout: int) -> None:
    scraped = job({"timeout": timeout})
    assert scraped.timeout_ms == MAX_TIMEOUT_MS
    assert scraped.warnings == (f"timeout {timeout} ms is above Wisp's limit: the scrape had {MAX_TIMEOUT_MS} ms",)
    assert job({"timeout": MAX_TIMEOUT_MS}).warnings == ()


def test_without_a_browser_actions_are_refused_with_firecrawls_code_and_the_rest_is_named_in_a_warning() -> None:
    with pytest.raises(ScrapeFailed) as refused:
        run(job({"actions": [{"type": "click", "selector": "#more"}]}))
    assert (refused.value.status, refused.value.code) == (400, "SCRAPE_ACTIONS_NOT_SUPPORTED")
    doc = run(job({"formats": ["markdown", "screenshot"], "waitFor": 500, "mobile": True}))
    assert "screenshot" not in doc and "checkpoint" in doc["markdown"]
    assert doc["warning"] == "screenshot, waitFor, mobile need the browser, which this Wisp does not run " \
                             "(RENDER=never): ignored"



def test_v1_formats_are_strings_with_json_options_beside_them() -> None:
    scraped = job({"formats": ["markdown", "extract"], "extract": {"prompt": "the title"}, "timeout": 30000},
                  V1ScrapeRequest)
    assert scraped.formats == ("markdown",) and [a.prompt for a in scraped.asks] == ["the title"]
    assert scraped.json_key == "extract" and scraped.timeout_ms == 30_000
    assert job({"formats": ["json"], "jsonOptions": {"prompt": "p"}}, V1ScrapeRequest).json_key == "json"
    with pytest.raises(InvalidRequest, match="Bad Request"):
        job({"formats": [{"type": "markdown"}]}, V1ScrapeRequest)
    with pytest.raises(InvalidRequest, match="json or extract"):
        job({"formats": ["json", "extract"], "jsonOptions": {"prompt": "p"}}, V1ScrapeRequest)


class Web:
    """The Fetcher's interface: the page at URL, and any other URL failing as `errors` says (else a 404)."""

    def __init__(self, errors: dict[str, Fetched] | None = None) -> None:
        self.errors = errors or {}

    renders = False  # no browser: a scrape's browser work is refused or ignored, as with RENDER=never

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        if url == URL:
            return Fetched(url, url, 200, "text/html", PAGE.encode())
        return self.errors.get(url) or Fetched(url, url, 404, "text/html", error=PageError("http", "HTTP 404"))


def run(scrape_job: ScrapeJob, llm: FakeLLM | None = None, **services: Any) -> dict:
    fake = FakeSearxng(total=0).services(
        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)) if llm else None)
    return asyncio.run(scrape(scrape_job, replaced(fake, **{"fetcher": Web(), **services})))


def test_a_page_becomes_a_document_with_only_the_formats_asked() -> None:
    doc = run(job({"formats": ["markdown", "links"]}))
    assert set(doc) == {"markdown", "links", "metadata"}
    assert "checkpoint" in doc["markdown"] and "Footer" not in doc["markdown"]  # main content only
    assert doc["links"] == ["https://docs.test/index.html", "https://docs.test/pragma.html"]
    metadata = doc.pop("metadata")
    assert metadata.pop("scrapeId")
    assert metadata == {"title": "WAL", "description": "How WAL works", "url": URL, "sourceURL": URL,
                        "statusCode": 200, "contentType": "text/html", "proxyUsed": "basic", "language": "en"}


def test_html_raw_html_and_the_whole_page() -> None:
    doc = run(job({"formats": ["html", "rawHtml", "markdown"], "onlyMainContent": False}))
    assert doc["rawHtml"] == PAGE and "<p>" in doc["html"] and "Footer text" in doc["markdown"]


def test_a_page_the_site_answers_with_an_error_status_is_a_document_of_its_content_with_that_status() -> None:
    gone = "https://docs.test/gone.html"
    page = "<html><head><title>Gone</title></head><body><article><h1>Gone</h1><p>" + "This page moved. " * 20
    fetcher = Web({gone: Fetched(gone, gone, 410, "text/html", (page + "</p></article></body></html>").encode(),
                                 error=PageError("http", "HTTP 410"))})
    doc = run(job({"url": gone, "formats": ["markdown", "rawHtml"]}), fetcher=fetcher)
    assert "This page moved." in doc["markdown"] and doc["rawHtml"].startswith(page)
    assert doc["metadata"]["statusCode"] == 410 and doc["metadata"]["title"] == "Gone" and "warning" not in doc


def test_an_error_status_without_a_body_is_a_document_with_that_status_and_a_warning() -> None:
    missing = "https://docs.test/missing.html"
    doc = run(job({"url": missing}))
    assert "markdown" not in doc and doc["metadata"]["statusCode"] == 404 and doc["metadata"]["error"] == "HTTP 404"
    assert doc["warning"] == f"{missing} has no content: HTTP 404"


def test_a_json_page_is_its_text_fenced_as_json() -> None:
    api = "https://docs.test/api/todo.json"
    body = '{"id": 1, "title": "write the docs", "done": false}'
    fetcher = Web({api: Fetched(api, api, 200, "application/json", body.encode())})
    doc = run(job({"url": api, "formats": ["markdown", "rawHtml"]}), fetcher=fetcher)
    assert doc["markdown"] == f"```json\n{body}\n```" and doc["rawHtml"] == body
    assert doc["metadata"]["contentType"] == "application/json" and doc["metadata"]["statusCode"] == 200


@pytest.mark.parametrize(("kind", "error", "status", "code"), [
    ("blocked", "blocked: docs.test resolves to 127.0.0.1, a non-public address", 403, "UNSUPPORTED_SITE"),
    ("dns", "blocked: nowhere.test does not resolve ([Errno -2] Name or service not known)", 200,
     "SCRAPE_DNS_RESOLUTION_ERROR"),
    ("unreachable", "ConnectError: [Errno 111] Connection refused", 500, "SCRAPE_SITE_ERROR"),
    ("tls", "ConnectError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed", 500, "SCRAPE_SSL_ERROR"),
    ("unsupported", "unsupported content type image/png", 500, "SCRAPE_UNSUPPORTED_FILE_ERROR"),
    ("timeout", "still loading at the deadline", 408, "SCRAPE_TIMEOUT"),
])
def test_a_page_that_cannot_be_had_is_firecrawls_status_and_code(kind: FailureKind, error: str, status: int,
                                                                 code: str) -> None:
    bad = "https://docs.test/bad"
    with pytest.raises(ScrapeFailed) as failed:
        run(job({"url": bad}), fetcher=Web({bad: Fetched(bad, bad, error=PageError(kind, error))}))
    assert (failed.value.status, failed.value.code) == (status, code) and error in failed.value.message


@pytest.mark.parametrize("kind", get_args(FailureKind))
def test_every_failure_either_leaves_a_page_to_show_or_has_firecrawls_status(kind: FailureKind) -> None:
    failed = Page(Fetched("https://docs.test/", "https://docs.test/", error=PageError(kind, "why")))
    assert failed.answered is (kind not in FAILURES)  # the one rule /v2/scrape and a batch's Documents follow


def test_an_extraction_past_the_timeout_is_a_408() -> None:
    with pytest.raises(ScrapeFailed) as failed:
        run(job({"timeout": 500}), cpu_pool=StuckPool())
    assert (failed.value.status, failed.value.code) == (408, "SCRAPE_TIMEOUT")


def test_summary_json_and_question_through_the_llm() -> None:
    llm = FakeLLM('{"title": "WAL"}')
    doc = run(job({"formats": ["summary", {"type": "json", "schema": {"type": "object"}},
                               {"type": "question", "question": "When?"}]}), llm)
    assert doc["summary"] == doc["answer"] == '{"title": "WAL"}' and doc["json"] == {"title": "WAL"}
    assert "markdown" not in doc and "warning" not in doc
    assert all("checkpoint" in r["messages"][-1]["content"] for r in llm.requests)  # the page went to the LLM


def test_v1_extract_comes_back_under_extract_and_a_failed_llm_is_a_warning() -> None:
    doc = run(job({"formats": ["extract"], "extract": {"prompt": "the title"}}, V1ScrapeRequest),
              FakeLLM('{"title": "WAL"}'))
    assert doc["extract"] == {"title": "WAL"} and "json" not in doc
    down = run(job({"formats": ["markdown", "summary"]}), FakeLLM(503))
    assert down["markdown"] and "summary" not in down and "page formats failed" in down["warning"]


class Browsing(Web):
    """A web whose pages a browser renders: what it was asked to do, and a screenshot and actions' outputs."""

    renders = True

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[BrowserWork] = []

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        self.asked.append(work)
        fetched = await super().fetch_before(url, deadline, types, cache_use)
        png = Image(b"\x89PNG-bytes", "image/png")
        fetched.rendered = Rendered(12.0, png if work.screenshot else None, (png,), (ScrapedState(url, "<p>x</p>"),),
                                    (ScriptReturn("number", 2),))
        return fetched


def test_a_rendered_page_gives_its_screenshot_as_a_data_url_and_the_actions_outputs_as_firecrawl_shapes_them(
        ) -> None:
    web = Browsing()
    asked = job({"formats": ["markdown", {"type": "screenshot", "fullPage": True, "quality": 80}],
                 "actions": [{"type": "click", "selector": "#more"}, {"type": "executeJavascript", "script": "1+1"}],
                 "waitFor": 100, "headers": {"X-Test": "1"}})
    doc = run(asked, fetcher=web)
    assert web.asked == [BrowserWork(100, False, (("X-Test", "1"),), (Click("#more"), ExecuteJavascript("1+1")),
                                     Shot(full_page=True, quality=80))]
    png = "data:image/png;base64," + base64.b64encode(b"\x89PNG-bytes").decode()
    assert doc["screenshot"] == png and "checkpoint" in doc["markdown"]
    assert doc["actions"] == {"screenshots": [png], "scrapes": [{"url": URL, "html": "<p>x</p>"}],
                              "javascriptReturns": [{"type": "number", "value": 2}], "pdfs": []}
    assert "actions" not in run(job({"formats": ["screenshot"]}), fetcher=Browsing())


def test_a_failed_action_is_firecrawls_400() -> None:
    failed = Fetched(URL, URL, error=PageError("action", "action 1 (click) failed: no #more"), outcome="error")
    with pytest.raises(ScrapeFailed) as refused:
        run(job({}), fetcher=_Failing(failed))
    assert (refused.value.status, refused.value.code) == (400, "SCRAPE_ACTION_ERROR")
    assert "no #more" in refused.value.message


class _Failing(Web):
    renders = True

    def __init__(self, fetched: Fetched) -> None:
        super().__init__()
        self.fetched = fetched

    async def fetch_before(self, url: str, deadline: float, types: tuple[str, ...] = (),
                           cache_use: CacheUse | None = None, work: BrowserWork = NO_BROWSER_WORK) -> Fetched:
        return self.fetched
