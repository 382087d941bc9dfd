"""A page's Document says where its page came from as Firecrawl's does: cacheState and cachedAt only when the
request asked the cache."""

from datetime import UTC, datetime, timedelta, timezone

from agent.core.pages import Extracted, Fetched, Page
from agent.pages.documents import document

URL = "https://docs.test/guide.html"


def metadata(fetched: Fetched) -> dict:
    return document(URL, "", "", Page(fetched, Extracted(URL, "# Guide", "Guide")), ["markdown"])["metadata"]


def test_a_page_from_the_cache_says_so_and_when_it_was_fetched() -> None:
    fetched_at = datetime(2026, 12, 4, 21, 40, 12, 345678, UTC)
    hit = metadata(Fetched(URL, URL, 200, "text/html", cache_state="hit", cached_at=fetched_at))
    assert hit["cacheState"] == "hit" and hit["cachedAt"] == "2026-12-04T21:40:12.345Z"  # toISOString()'s form
    miss = metadata(Fetched(URL, URL, 200, "text/html", cache_state="miss"))
    assert miss["cacheState"] == "miss" and "cachedAt" not in miss
    fetched = metadata(Fetched(URL, URL, 200, "text/html"))
    assert "cacheState" not in fetched and "cachedAt" not in fetched


def test_cached_at_is_written_as_a_utc_instant_whatever_zone_the_fetch_time_has() -> None:
    paris = timezone(timedelta(hours=1))
    fetched_at = datetime(2026, 12, 4, 22, 40, 12, 345678, paris)
    hit = metadata(Fetched(URL, URL, 200, "text/html", cache_state="hit", cached_at=fetched_at))
    assert hit["cachedAt"] == "2026-12-04T21:40:12.345Z"
