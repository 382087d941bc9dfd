import asyncio

import httpx
import pytest

from agent.core.query import SearchQuery, SourceRequest
from agent.errors import BadRequest, UpstreamError
from agent.retrieval.searxng_results import retrieve_candidates

from ..fake_searxng import FakeSearxng


def candidates(fake: FakeSearxng, **fields):
    query = SearchQuery(**{"query": "q", "limit": 10, **fields})
    services = fake.services(searxng_page_size=10, searxng_max_pages=5)
    ctx = services.context(10)
    return asyncio.run(retrieve_candidates(query, ctx, services.upstreams)), ctx


def test_one_page_when_it_is_enough() -> None:
    fake = FakeSearxng()
    outcome, ctx = candidates(fake, limit=10)
    assert [r["pageno"] for r in fake.requests] == ["1"]
    assert [h.url for h in outcome.buckets["web"]] == [f"https://general.test/{i}" for i in range(10)]
    assert ctx.timings.as_dict()["searxng"] >= 0


def test_further_pages_are_asked_concurrently() -> None:
    fake = FakeSearxng(total=100)
    arrived: list[str] = []
    everyone = asyncio.Event()
    handle = fake.handle

    async def gated(request):
        arrived.append(request.url.params["pageno"])
        if len(arrived) == 3:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 2)  # times out unless all three pages are in flight together
        return await handle(request)

    fake.handle = gated
    outcome, _ = candidates(fake, limit=25)
    assert sorted(arrived) == ["1", "2", "3"]
    assert [h.url for h in outcome.buckets["web"]][:25] == [f"https://general.test/{i}" for i in range(25)]


def test_duplicates_across_pages_are_dropped_and_the_shortfall_fetched() -> None:
    fake = FakeSearxng(total=100, duplicates=True)
    outcome, _ = candidates(fake, limit=20)
    urls = [h.url for h in outcome.buckets["web"]]
    assert len(urls) == len(set(urls)) >= 20
    assert [r["pageno"] for r in fake.requests] == ["1", "2", "3"]  # page 2 held only 9 new results


def test_paging_stops_at_an_empty_page_and_at_the_page_cap() -> None:
    fake = FakeSearxng(total=12)
    outcome, _ = candidates(fake, limit=50)
    assert len(outcome.buckets["web"]) == 12 and len(fake.requests) == 5
    capped = FakeSearxng(total=1000)
    outcome, _ = candidates(capped, limit=100)
    assert len(outcome.buckets["web"]) == 50 and len(capped.requests) == 5  # searxng_max_pages


def test_a_failed_later_page_keeps_what_came_before_with_a_warning() -> None:
    outcome, _ = candidates(FakeSearxng(total=100, failing={2}), limit=15)
    assert len(outcome.buckets["web"]) == 10
    assert outcome.warnings == ("web: SearXNG page 2 failed (SearXNG answered HTTP 500: boom); "
                                "fewer results than asked for",)


def test_a_failed_source_is_a_warning_while_another_succeeds() -> None:
    fake = FakeSearxng()
    fake.handle = _fail_category(fake.handle, "news")
    outcome, _ = candidates(fake, sources=[SourceRequest("web"), SourceRequest("news")], limit=5)
    assert outcome.buckets["news"] == [] and len(outcome.buckets["web"]) == 10
    assert list(outcome.warnings) == ["news: SearXNG answered HTTP 500: boom; its results are empty"]


def _fail_category(handle, category):
    async def handler(request):
        if request.url.params.get("categories") == category:
            return httpx.Response(500, json={"error": "boom"})
        return await handle(request)

    return handler


def test_every_source_failing_raises_the_failure() -> None:
    with pytest.raises(UpstreamError, match="HTTP 500"):
        candidates(FakeSearxng(failing={1}))


def test_no_results_with_every_engine_down_is_a_failure_not_an_empty_answer() -> None:
    fake = FakeSearxng(total=0, unresponsive=[["ddg", "CAPTCHA"], ["brave", "too many requests"]])
    with pytest.raises(UpstreamError, match=r"every SearXNG engine asked for web failed: brave \(too many"):
        candidates(fake)


def test_unresponsive_engines_with_results_are_a_warning() -> None:
    outcome, _ = candidates(FakeSearxng(unresponsive=[["ddg", "timeout"]]), limit=5)
    assert len(outcome.buckets["web"]) == 10
    assert outcome.warnings == ("web: some SearXNG engines did not answer: ddg (timeout); results may be incomplete",)


def test_post_filters_apply_and_more_pages_make_up_for_them() -> None:
    fake = FakeSearxng(total=100)
    outcome, _ = candidates(fake, limit=5, tbs="cdr:1,cd_min:1/1/2026,cd_max:1/3/2026")
    days = sorted(h.published.day for h in outcome.buckets["web"])
    assert len(days) == 5 and set(days) <= {1, 2, 3}
    assert len(fake.requests) > 1


def test_sort_by_date() -> None:
    outcome, _ = candidates(FakeSearxng(), limit=10, tbs="sbd:1")
    published = [h.published for h in outcome.buckets["web"]]
    assert published == sorted(published, reverse=True)


def test_an_unknown_engine_is_refused_before_any_search() -> None:
    fake = FakeSearxng()
    handle = fake.handle

    async def with_config(request):
        if request.url.path == "/config":
            return httpx.Response(200, json={"categories": ["general"],
                                             "engines": [{"name": "ddg", "categories": ["general"]}]})
        return await handle(request)

    fake.handle = with_config
    with pytest.raises(BadRequest, match="Unknown SearXNG engine"):
        candidates(fake, engines=["nope"])
    assert fake.requests == []


def test_an_unreadable_engine_list_degrades_to_a_warning() -> None:
    fake = FakeSearxng()
    handle = fake.handle

    async def no_config(request):
        if request.url.path == "/config":
            return httpx.Response(404, text="not found")
        return await handle(request)

    fake.handle = no_config
    outcome, _ = candidates(fake, engines=["ddg"], limit=3)
    assert fake.requests[-1]["engines"] == "ddg" and len(outcome.buckets["web"]) == 10
    assert outcome.warnings[0].startswith("could not read SearXNG's engine list")
