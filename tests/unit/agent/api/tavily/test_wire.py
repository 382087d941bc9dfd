"""Tavily's request fields as Wisp's query, and the error shape."""

import json

import pytest

from agent.api.bodies import parsed
from agent.api.tavily.wire import TavilyExtractRequest, TavilySearchRequest, error_body
from agent.errors import InvalidRequest, RateLimited


def query(**body):
    return parsed(json_bytes({"query": "sqlite wal", **body}), TavilySearchRequest).to_query()


def json_bytes(body: dict) -> bytes:
    return json.dumps(body).encode()


@pytest.mark.parametrize(("depth", "mode", "fetch_top"), [
    (None, "hybrid", None), ("basic", "hybrid", None), ("advanced", "hybrid", 12), ("fast", "keyword", None),
    ("ultra-fast", "keyword", None)])
def test_search_depth_chooses_the_mode_and_how_many_pages_are_read(depth, mode, fetch_top) -> None:
    q = query(**({"search_depth": depth} if depth else {}))
    assert (q.retrieval_mode, q.fetch_top) == (mode, fetch_top)


def test_the_other_fields_map_onto_the_query() -> None:
    q = query(max_results=3, topic="news", time_range="week", include_answer="advanced", include_raw_content="text",
              include_images=True, include_domains=["SQLite.org"], country="germany", chunks_per_source=2)
    assert q.limit == 3 and [s.type for s in q.sources] == ["news", "images"] and q.tbs == "qdr:w"
    assert q.search_type == "rich" and q.scrape_formats == ["markdown"] and q.include_domains == ["sqlite.org"]
    assert query().limit == 5 and query().search_type == "fast" and query(days=3).tbs == "qdr:d3"


def test_extract_takes_one_url_or_many_each_once() -> None:
    one = parsed(json_bytes({"urls": "https://a.test/"}), TavilyExtractRequest)
    assert [j.url for j in one.jobs(10)] == ["https://a.test/"] and one.jobs(10)[0].timeout_ms == 10_000
    many = parsed(json_bytes({"urls": ["https://a.test/", "https://a.test/"], "timeout": 5}), TavilyExtractRequest)
    assert len(many.jobs(10)) == 1 and many.jobs(10)[0].timeout_ms == 5000


def test_errors_are_tavilys_detail_naming_each_refused_field() -> None:
    with pytest.raises(InvalidRequest) as refused:
        parsed(json_bytes({"query": "x", "max_results": 99, "topic": "sports"}), TavilySearchRequest)
    message = error_body(refused.value)["detail"]["error"]
    assert "max_results" in message and "topic" in message
    assert error_body(RateLimited("slow down", 5)) == {"detail": {"error": "slow down"}}
