"""A page whose text came with its search result: chunked for ranking as a fetched page is, never fetched."""

from agent.core.hits import Hit
from agent.core.pages import Extraction
from agent.pages.supplied import supplied_page


def test_supplied_text_is_a_page_in_chunks() -> None:
    hit = Hit(url="https://a.test/", title="A", content="snippet", found_by=("exa",),
              text="# Locking\n\n" + "SQLite takes a reserved lock before writing. " * 40)
    page = supplied_page(hit, Extraction(chunk_chars=400))
    assert page is not None and page.fetched.supplied and page.extracted is not None
    assert page.extracted.markdown == hit.text and len(page.extracted.chunks) > 3
    assert all(len(c.text) <= 400 for c in page.extracted.chunks)
    assert page.extracted.chunks[0].heading == "Locking"
    assert page.serves(Extraction(chunk_chars=400)) and not page.serves(Extraction(chunk_chars=400, document=True))


def test_no_text_no_page() -> None:
    assert supplied_page(Hit(url="https://a.test/", title="A", content="s"), Extraction(chunk_chars=400)) is None
    assert supplied_page(Hit(url="https://a.test/", title="A", content="s", text=" \n"), Extraction()) is None
