"""The extra sources' results merged with SearXNG's: in turn, one per URL key, a page found twice keeping the first
hit with every source's name and the text one of them supplied."""

from dataclasses import replace

from agent.core.hits import Hit
from agent.retrieval.sourced import merged_hits


def hit(url: str, by: str = "searxng", text: str | None = None) -> Hit:
    return Hit(url=url, title=url, content="", found_by=(by,), text=text)


def test_in_turn_one_per_url_key() -> None:
    searx = [hit("https://a.test/1"), replace(hit("https://a.test/2"), engines=("bing",)), hit("https://a.test/3")]
    exa = [hit("https://b.test/1", "exa", "b"), hit("http://A.test/2/", "exa", "two")]
    tavily = [hit("https://a.test/1#top", "tavily", "one")]
    merged = merged_hits([searx, exa, tavily])
    assert [h.url for h in merged] == ["https://a.test/1", "https://b.test/1", "https://a.test/2", "https://a.test/3"]
    assert merged[0] == replace(searx[0], found_by=("searxng", "tavily"), text="one")
    assert merged[2] == replace(searx[1], found_by=("searxng", "exa"), text="two")
    assert merged[1].found_by == ("exa",) and merged[1].text == "b"


def test_searxng_alone_is_unchanged() -> None:
    searx = [hit("https://a.test/1"), hit("https://a.test/1#top")]
    assert merged_hits([searx]) == searx[:1]
