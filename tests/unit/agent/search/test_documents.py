from datetime import UTC, datetime

from agent.core.pages import Extracted, Fetched, Page, PageError
from agent.pages.documents import document

URL = "https://a.org/x"


def test_a_scraped_item_repeats_url_and_title_in_metadata() -> None:
    fetched = Fetched(URL, URL + "/", 200, "text/html", b"<html>")
    extracted = Extracted(URL + "/", "# Body", title="Page", description="Desc", raw_html="<html>",
                          links=["https://b.org"], language="en", published=datetime(2024, 1, 2, tzinfo=UTC))
    doc = document(URL, "Hit title", "Snippet", Page(fetched, extracted), ["markdown", "links", "rawHtml"])
    assert doc == {
        "markdown": "# Body", "links": ["https://b.org"], "rawHtml": "<html>",
        "metadata": {"title": "Page", "description": "Desc", "url": URL + "/", "sourceURL": URL, "statusCode": 200,
                     "contentType": "text/html", "proxyUsed": "basic", "language": "en",
                     "publishedTime": "2024-01-02T00:00:00+00:00"}}


def test_a_failed_item_has_metadata_only() -> None:
    refused = PageError("blocked", "blocked: no")
    blocked = Page(Fetched(URL, URL, error=refused), error=refused)
    assert document(URL, "T", "D", blocked, ["markdown"]) == {"metadata": {
        "title": "T", "description": "D", "url": URL, "sourceURL": URL, "statusCode": 403, "contentType": None,
        "proxyUsed": "basic", "error": "blocked: no"}}
    failed = Page(Fetched(URL, URL, 404, "text/html", error=PageError("http", "HTTP 404")),
                  error=PageError("http", "HTTP 404"))
    assert document(URL, "T", "D", failed, ["markdown"])["metadata"]["statusCode"] == 404
