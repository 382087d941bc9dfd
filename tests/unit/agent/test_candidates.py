from agent.candidates import Candidate, keyword_form
from agent.context import Page
from agent.extract import Extracted
from agent.fetch import Fetched
from agent.searxng_client import Hit


def test_keyword_form_of_question_like_queries() -> None:
    assert keyword_form("which PostgreSQL version added the MERGE command") == "PostgreSQL version added MERGE command"
    assert keyword_form("how do I read a file line by line in node.js") == "read file line line node.js"
    assert keyword_form("sqlite wal checkpoint") is None  # nothing to drop
    assert keyword_form("what is it") is None  # too little left


def test_evidence_is_the_page_when_extracted_else_the_snippet() -> None:
    hit = Hit("https://a.org/x", "Title", "The snippet.")
    bare = Candidate(hit, 1)
    assert [c.text for c in bare.evidence(1200)] == ["The snippet."]
    fetched = Fetched(hit.url, hit.url, 200, "text/html", b"")
    page = Extracted(hit.url, "Intro.\n\n# Usage\n\nRun it.", title="Page title")
    with_page = Candidate(hit, 1, page=Page(fetched, page))
    assert [(c.heading, c.text) for c in with_page.evidence(1200)] == [("Page title", "Intro."), ("Usage", "Run it.")]
    assert with_page.title == "Page title"
    failed = Candidate(hit, 1, page=Page(fetched, error="HTTP 500"))
    assert [c.text for c in failed.evidence(1200)] == ["The snippet."]
