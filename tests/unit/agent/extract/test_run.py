"""One extract job through the page stage and a fake LLM: the pages it gathers (URLs, a site as /v2/map lists it,
Wisp's search for the prompt), the pages that fail, and each way a job fails with a cause instead of raising."""

import asyncio
from collections import Counter
from typing import Any
from urllib.parse import urlsplit

import httpx

from agent.api.settings import RequestSettings
from agent.core.extract_job import ExtractJob, ExtractResult
from agent.extract.run import Extractor, run_extract
from agent.extract.settings import ExtractSettings

from ..answers.test_rich import FakeLLM
from ..fake_searxng import FakeSearxng, replaced_search
from ..index.map.test_site_map import Site

SITE = "https://docs.test/"


def html(title: str, body: str, links: str = "") -> str:
    return (f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{body}</p>{links}"
            "</article></body></html>")


PAGES = {
    f"{SITE}guide/": html("Guide", "The guide of the project.", "<a href='/guide/b.html'>b</a> "
                          "<a href='/blog/news.html'>news</a> <a href='https://other.test/x.html'>x</a>"),
    f"{SITE}guide/a.html": html("A", "Ada wrote the first program."),
    f"{SITE}guide/b.html": html("B", "Bob wrote the second one."),
    f"{SITE}guide/sitemap.xml": f"<urlset><url><loc>{SITE}guide/a.html</loc></url>"
                                f"<url><loc>{SITE}elsewhere.html</loc></url></urlset>",
    "https://general.test/0": html("Zero", "Found by the search."),
}


def extract(job: ExtractJob, llm: FakeLLM, searx: FakeSearxng | None = None, web: Any = None,
            **settings) -> ExtractResult:
    """The job run on `searx` (one result, on another site) and `web` (by default PAGES)."""
    fake = searx or FakeSearxng(total=1)
    search = fake.search(pages=PAGES, llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)),
                         **settings)
    search = replaced_search(search, fetcher=web) if web else search
    extractor = Extractor(ExtractSettings(), search, RequestSettings().scrape_timeout_s)
    return asyncio.run(run_extract(job, extractor))


def site(pages: dict[str, str]) -> Site:
    """A web of HTML pages and sitemaps that records what was fetched."""
    return Site({url: ("application/xml" if url.endswith(".xml") else "text/html", body)
                 for url, body in pages.items()})


def read(llm: FakeLLM) -> str:
    return "".join(r["messages"][-1]["content"] for r in llm.requests)


def test_the_urls_pages_are_read_and_their_json_returned_with_sources() -> None:
    llm = FakeLLM('{"authors": ["Ada", "Bob"]}')
    job = ExtractJob((f"{SITE}guide/a.html", f"{SITE}guide/b.html"), (), "Who wrote what?", None)
    result = extract(job, llm)
    assert result.error is None and result.data == {"authors": ["Ada", "Bob"]}
    assert result.sources["authors"] == [f"{SITE}guide/a.html", f"{SITE}guide/b.html"]  # one batch read both
    assert "Ada wrote the first program" in read(llm) and "Bob wrote the second one" in read(llm)


def test_a_site_is_its_seed_its_sitemap_and_its_links_within_the_seeds_folder() -> None:
    llm = FakeLLM('{"authors": ["Ada"]}')
    result = extract(ExtractJob((), (f"{SITE}guide/",), "Who wrote what?", None), llm)
    assert result.error is None
    prompt = read(llm)
    for url in (f"{SITE}guide/", f"{SITE}guide/a.html", f"{SITE}guide/b.html"):
        assert f"({url})" in prompt
    assert "elsewhere.html" not in prompt and "news.html" not in prompt and "other.test" not in prompt


def test_the_sites_pages_are_bounded() -> None:
    llm = FakeLLM('{"authors": ["Ada"]}')
    extract(ExtractJob((), (f"{SITE}guide/",), "Who wrote what?", None, site_limit=2), llm)
    assert f"({SITE}guide/a.html)" in read(llm) and f"({SITE}guide/b.html)" not in read(llm)


def test_each_page_of_a_site_is_fetched_once() -> None:
    web = site(PAGES)
    result = extract(ExtractJob((), (f"{SITE}guide/",), "Who wrote what?", None), FakeLLM('{"authors": ["Ada"]}'),
                     web=web)
    assert result.error is None
    # the seed and b.html are read for their links, then for their text: from the request's pages the second time
    assert Counter(url for url in web.asked if url.endswith((".html", "/"))) == {
        f"{SITE}guide/": 1, f"{SITE}guide/a.html": 1, f"{SITE}guide/b.html": 1}


def test_the_sites_are_mapped_at_once() -> None:
    class Hosts(Site):
        """Records how many hosts were being fetched from at once."""

        def __init__(self, pages: dict[str, tuple[str, str]]) -> None:
            super().__init__(pages, delay_s=0.05)
            self.busy: Counter[str] = Counter()
            self.most = 0

        async def fetch_before(self, url: str, *args: Any, **kwargs: Any) -> Any:
            host = urlsplit(url).netloc
            self.busy[host] += 1
            self.most = max(self.most, len(+self.busy))
            try:
                return await super().fetch_before(url, *args, **kwargs)
            finally:
                self.busy[host] -= 1

    seeds = [f"https://site{i}.test/" for i in range(3)]
    web = Hosts({seed: ("text/html", html(f"Site {i}", f"The page of site {i}.")) for i, seed in enumerate(seeds)})
    llm = FakeLLM('{"found": true}')
    result = extract(ExtractJob((), tuple(seeds), "What is there?", None), llm, web=web)
    assert result.error is None and all(f"({seed})" in read(llm) for seed in seeds)
    assert web.most == len(seeds)


def test_a_sites_reach_follows_include_subdomains_and_allow_external_links() -> None:
    links = "<a href='https://api.docs.test/guide/rest.html'>rest</a> <a href='https://other.test/x.html'>x</a>"
    pages = {**PAGES, f"{SITE}guide/": html("Guide", "The guide of the project.", links),
             "https://api.docs.test/guide/rest.html": html("Rest", "The REST API."),
             "https://other.test/x.html": html("X", "Another site.")}

    def read_with(**options: bool) -> str:
        llm = FakeLLM('{"found": true}')
        extract(ExtractJob((), (f"{SITE}guide/",), "What is there?", None, **options), llm, web=site(pages))
        return read(llm)

    by_default = read_with()
    assert "(https://api.docs.test/guide/rest.html)" in by_default and "other.test" not in by_default
    assert "api.docs.test" not in read_with(subdomains=False)
    assert "(https://other.test/x.html)" in read_with(external=True)


def test_a_site_whose_seed_cannot_be_read_is_its_url_with_the_maps_warning() -> None:
    result = extract(ExtractJob((), (f"{SITE}missing/",), "Who?", None), FakeLLM("{}"))
    assert result.error.startswith("none of the 1 pages could be read") and "missing/ (HTTP 404)" in result.error
    assert f"{SITE}missing/ could not be read for its links: HTTP 404" in result.warnings


def test_no_urls_searches_the_web_for_the_prompt() -> None:
    llm, searx = FakeLLM('{"found": true}'), FakeSearxng(total=1)
    result = extract(ExtractJob((), (), "what was found", None), llm, searx)
    assert result.data == {"found": True} and searx.requests[0]["q"] == "what was found"
    assert "Found by the search." in read(llm)


def test_a_page_that_fails_beside_one_that_did_not_is_a_warning() -> None:
    result = extract(ExtractJob((f"{SITE}guide/a.html", f"{SITE}missing.html"), (), "Who?", None),
                     FakeLLM('{"who": "Ada"}'))
    assert result.data == {"who": "Ada"} and result.error is None
    assert "1 of 2 pages could not be read" in result.warnings[0] and "missing.html (HTTP 404)" in result.warnings[0]


def test_no_page_to_read_fails_with_the_cause() -> None:
    result = extract(ExtractJob((f"{SITE}missing.html",), (), "Who?", None), FakeLLM('{"who": "Ada"}'))
    assert result.data is None and result.error.startswith("none of the 1 pages could be read")
    assert "HTTP 404" in result.error


def test_garbage_from_the_llm_fails_with_the_cause() -> None:
    result = extract(ExtractJob((f"{SITE}guide/a.html",), (), "Who?", None), FakeLLM("Sorry, no JSON today."))
    assert result.error and "did not validate after one repair (not JSON" in result.error


def test_a_search_that_finds_nothing_fails_saying_so() -> None:
    result = extract(ExtractJob((), (), "nothing at all", None), FakeLLM("{}"), FakeSearxng(total=0))
    assert result.error == "no pages to read: the web search for the prompt found nothing"


def test_the_deadline_fails_the_job() -> None:
    class SlowLLM(FakeLLM):
        async def handle(self, request: httpx.Request) -> httpx.Response:
            await asyncio.sleep(5)
            return await super().handle(request)

    result = extract(ExtractJob((f"{SITE}guide/a.html",), (), "Who?", None, timeout_s=0.5), SlowLLM("{}"))
    assert result.error and ("0.5 s" in result.error or "did not answer within" in result.error)
