import pytest

from agent.retrieval.dedupe import dedupe, normalize_url


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://Example.com/a/", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com/a#section", "https://example.com/a"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/a?utm_source=x&id=3&fbclid=y", "https://example.com/a?id=3"),
        ("https://example.com", "https://example.com/"),
    ],
)
def test_equivalent_urls_collide(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://example.com/a", "https://example.com/b"),
        ("https://example.com:8080/a", "https://example.com/a"),
        ("https://example.com/a?id=1", "https://example.com/a?id=2"),
        ("https://example.com/A", "https://example.com/a"),  # paths are case-sensitive
        ("https://www.example.com/a", "https://example.com/a"),
    ],
)
def test_different_pages_stay_apart(a: str, b: str) -> None:
    assert normalize_url(a) != normalize_url(b)


def test_dedupe_keeps_the_first_of_each_page_in_order() -> None:
    items = [("https://a.org/x", 1), ("https://b.org/", 2), ("http://a.org/x/", 3), ("https://c.org", 4)]
    assert dedupe(items, lambda i: i[0]) == [items[0], items[1], items[3]]


def test_unparsable_urls_do_not_raise() -> None:
    assert normalize_url("http://[::1") == "http://[::1"
