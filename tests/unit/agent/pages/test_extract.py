import pytest

from agent.core.pages import Extraction, Fetched, PageError
from agent.pages.extract import ExtractionFailed, cut, decode, extract, extract_page, outline

ARTICLE = """<html lang="en"><head><title>Write-Ahead Logging</title>
<meta name="description" content="How WAL works."><meta name="date" content="2022-11-16"></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<h1>Write-Ahead Logging</h1>
<p>The default method by which SQLite implements atomic commit and rollback is a rollback journal. Beginning
with version 3.7.0 a new write-ahead log option is available, and this paragraph is long enough to be kept.</p>
<h2>Checkpointing</h2><p>A checkpoint moves the WAL content back into the database file; by default it runs
when the WAL reaches 1000 pages, and PRAGMA wal_checkpoint runs one by hand at any time.</p>
<p>See <a href="pragma.html#wal">the pragma page</a> and <a href="https://example.org/x#y">elsewhere</a>.</p>
<footer>Copyright notice</footer></body></html>"""


def fetched(body: bytes, content_type: str = "text/html", charset: str | None = None) -> Fetched:
    return Fetched("https://www.sqlite.org/wal.html", "https://www.sqlite.org/wal.html", 200, content_type, body,
                   charset)


def test_main_content_as_markdown_with_metadata_and_links() -> None:
    page = extract(fetched(ARTICLE.encode()), document=True)
    assert "rollback journal" in page.markdown and "Checkpointing" in page.markdown
    assert "Copyright notice" not in page.markdown
    assert page.title == "Write-Ahead Logging" and page.description == "How WAL works."
    assert page.published.date().isoformat() == "2022-11-16" and page.language == "en"
    assert page.links == ["https://www.sqlite.org/", "https://www.sqlite.org/docs",
                          "https://www.sqlite.org/pragma.html", "https://example.org/x"]
    assert page.html and "<p>" in page.html and page.raw_html.startswith("<html")


def test_an_outline_is_the_title_description_and_links_without_the_text() -> None:
    page = outline(fetched(ARTICLE.encode()))
    assert page.title == "Write-Ahead Logging" and page.description == "How WAL works." and page.markdown == ""
    assert page.links == extract(fetched(ARTICLE.encode())).links
    assert outline(fetched(b"just text", "text/plain")).links == []
    with pytest.raises(ExtractionFailed):
        outline(fetched(b""))


def test_the_whole_body_when_main_content_is_not_asked() -> None:
    assert "Copyright notice" in extract(fetched(ARTICLE.encode()), main_only=False).markdown


def test_charsets() -> None:
    latin = "<html><head><meta charset='iso-8859-1'></head><body><p>Café crème brûlée " * 3 + "</p></body></html>"
    assert decode(latin.encode("latin-1"), None).count("Café") == 3
    assert decode("é".encode(), None) == "é"
    assert decode("é".encode("latin-1"), "iso-8859-1") == "é"
    assert decode(b"\xff ok", "no-such-charset") == "\ufffd ok"


def test_plain_text_passes_through() -> None:
    assert extract(fetched(b"  just text  ", "text/plain")).markdown == "just text"


def test_a_json_page_is_fenced_as_json_and_its_raw_html_is_the_json() -> None:
    page = extract(fetched(b'{"ok": true}\n', "application/json"))
    assert page.markdown == '```json\n{"ok": true}\n```' and page.raw_html == '{"ok": true}\n'


def test_an_error_page_is_extracted_only_when_asked() -> None:
    gone = fetched(b"<html><body><article><h1>Gone</h1><p>" + b"This page moved away. " * 20 + b"</p></article>"
                   b"</body></html>")
    gone.status, gone.error = 410, PageError("http", "HTTP 410")
    assert extract_page(gone, Extraction()).extracted is None
    page = extract_page(gone, Extraction(error_pages=True))
    assert page.extracted is not None and "moved away" in page.extracted.markdown and page.failure == "http"


@pytest.mark.parametrize("body", [b"<html><body></body></html>", b"%PDF-1.4 not really a pdf"])
def test_nothing_usable_is_an_extraction_failure(body: bytes) -> None:
    with pytest.raises(ExtractionFailed):
        extract(fetched(body))


def long_page(paragraphs: int) -> bytes:
    body = "".join(f"<p>Paragraph {n} of a long manual, with enough words to count as content.</p>"
                   for n in range(paragraphs))
    return f"<html><head><title>Manual</title></head><body><article>{body}</article></body></html>".encode()


def test_ranking_extracts_a_page_only_up_to_its_byte_limit() -> None:
    body = long_page(2000)
    ranked = extract_page(fetched(body), Extraction(chunk_chars=1200, max_bytes=20_000))
    assert "Paragraph 10 " in ranked.extracted.markdown and "Paragraph 1999 " not in ranked.extracted.markdown
    assert ranked.extracted.chunks and ranked.fetched.body == body  # a later Document reads the whole page


def test_a_document_or_a_pdf_is_never_cut() -> None:
    body = long_page(2000)
    document = extract_page(fetched(body), Extraction(document=True, max_bytes=20_000))
    assert "Paragraph 1999 " in document.extracted.markdown
    pdf = fetched(b"%PDF-1.4 " + b"x" * 50_000, content_type="application/pdf")
    assert cut(pdf, 20_000) == pdf.body


def test_chunks_read_identifiers_as_the_page_writes_them_while_markdown_stays_escaped() -> None:
    body = ("<html><body><article><p>Enforcement needs PRAGMA foreign_keys = ON in every connection, as the "
            "foreign key documentation explains at some length for each of its examples.</p></article></body></html>")
    page = extract_page(fetched(body.encode()), Extraction(chunk_chars=1200))
    assert "foreign\\_keys" in page.extracted.markdown
    assert "PRAGMA foreign_keys = ON" in page.extracted.chunks[0].text
