import zlib
from pathlib import Path

import pytest

from agent.core.pages import Extraction, Fetched, PageError
from agent.pages.docx import DOCX_TYPE
from agent.pages.extract import MAX_PDF_CHARS, ExtractionFailed, cut, decode, extract, extract_page, outline

from .test_docx import ARTICLE as ARTICLE_DOCX
from .test_docx import docx_file

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


def test_markdown_passes_through_with_its_title_links_and_html_without_the_raw_html_it_holds() -> None:
    text = ("Intro\n\n# Write-Ahead Logging\n\nSee [the pragma](pragma.html), [SQLite](https://sqlite.org/#top) "
            "and [a script](javascript:alert(1)).\n\n<script>alert(1)</script>\n")
    page = extract(fetched(text.encode(), "text/markdown"), document=True)
    assert page.markdown == text.strip() and page.title == "Write-Ahead Logging"
    assert page.links == ["https://www.sqlite.org/pragma.html", "https://sqlite.org/"]
    assert page.html == page.raw_html and "<h1>Write-Ahead Logging</h1>" in page.html
    assert "<script>" not in page.html and "&lt;script&gt;" in page.html and 'href="javascript:' not in page.html
    assert extract(fetched(text.encode(), "text/markdown")).html is None  # only a Document's formats want it


def test_a_docx_is_its_markdown_and_one_that_is_not_is_an_extraction_failure() -> None:
    page = extract(fetched(ARTICLE_DOCX, DOCX_TYPE), document=True)
    assert page.markdown.startswith("# Write-Ahead Logging\n\nThe **default method**")
    assert page.title == "Write-Ahead Logging" and page.links == ["https://www.sqlite.org/pragma.html"]
    assert "<table>" in page.html
    for body, why in ((b"PK\x03\x04 not a zip", "not a DOCX"), (docx_file(), "the DOCX holds no text")):
        with pytest.raises(ExtractionFailed, match=why):
            extract(fetched(body, DOCX_TYPE))


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


def hostile_html(listener: str, secret: Path) -> str:
    """Every way an XML-minded parser could be made to read a file or open a connection, and to multiply entities
    (billion laughs), in one page."""
    laughs = "".join(f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10))
    return f"""<?xml version="1.0"?>
<!DOCTYPE html SYSTEM "{listener}/page.dtd" [
  <!ENTITY file SYSTEM "file://{secret}"> <!ENTITY net SYSTEM "{listener}/entity">
  <!ENTITY % remote SYSTEM "{listener}/parameter.dtd"> %remote;
  <!ENTITY lol0 "lol"> {laughs}
]>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:xi="http://www.w3.org/2001/XInclude">
<head><title>Entities &file; &net;</title><base href="{listener}/"/>
<link rel="stylesheet" href="{listener}/style.css"/><script src="{listener}/app.js"></script></head>
<body><article><h1>Hostile</h1>
<xi:include href="file://{secret}" parse="text"/><xi:include href="{listener}/include.xml"/>
<p>The file &file; and the network &net; and the laughs &lol9; stay words, in a paragraph long enough to be
kept as the main content of the page by the extraction.</p>
<p>A second paragraph, with an image <img src="{listener}/image.png"/> and a frame
<iframe src="file://{secret}"></iframe>, also long enough to count as content here.</p>
<a href="file://{secret}">file</a> <a href="javascript:fetch('{listener}')">script</a>
<a href="data:text/html,&lt;script&gt;1&lt;/script&gt;">data</a> <a href="{listener}/next">next</a>
</article></body></html>"""


@pytest.mark.parametrize("content_type", ["text/html", "application/xhtml+xml", ""])
def test_a_hostile_page_reads_no_file_opens_no_connection_and_expands_no_entity(
        content_type: str, loopback_listener, secret_file: Path) -> None:
    page = fetched(hostile_html(loopback_listener.url, secret_file).encode(), content_type)
    marker = secret_file.read_text()
    results = [extract(page, main_only, document=True) for main_only in (True, False)]
    results += [outline(page), extract_page(page, Extraction(chunk_chars=1200)).extracted]
    for result in results:
        assert marker not in repr(result)
        assert len(repr(result)) < 4 * len(page.body)  # &lol9; alone would be 10^9 times "lol"
        # only http(s) links, resolved against the page's own URL (not its <base>); none of them fetched
        assert result.links == [f"{loopback_listener.url}/next"]
    assert "&file;" in results[0].markdown and "laughs &lol9;" in results[0].markdown
    assert loopback_listener.connections == 0


def pdf(*objects: bytes) -> bytes:
    """A PDF of these objects (numbered from 1, the catalog first), with a correct cross-reference table."""
    out, offsets = b"%PDF-1.7\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    table = b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return out + (b"xref\n0 %d\n0000000000 65535 f \n%strailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
                  % (len(objects) + 1, table, len(objects) + 1, len(out)))


def stream(data: bytes, entries: bytes = b"") -> bytes:
    packed = zlib.compress(data)
    return b"<< %s /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (entries, len(packed), packed)


def one_page(contents: bytes, resources: bytes = b"", page: bytes = b"", catalog: bytes = b"") -> list[bytes]:
    """Catalog 1, pages 2, page 3 drawing content stream 4 with font 5 (/F1) and `resources`; more objects from 6."""
    return [b"<< /Type /Catalog /Pages 2 0 R %s >>" % catalog, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> %s >> %s >>" % (resources, page), contents,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]


def test_a_pdf_reads_no_file_and_opens_no_connection_it_names(loopback_listener, secret_file: Path) -> None:
    url, file = loopback_listener.url.encode(), b"file://" + str(secret_file).encode()
    objects = one_page(
        stream(b"BT /F1 12 Tf 72 720 Td (Visible text of the page) Tj ET /X Do"),
        resources=b"/XObject << /X 6 0 R >>",
        page=b"/Annots [<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /URI /URI (%s/annotation) >> >> "
             b"<< /Type /Annot /Subtype /Link /Rect [0 0 9 9] /A << /S /Launch /F (%s) >> >>]" % (url, file),
        catalog=b"/OpenAction << /S /GoToR /F << /Type /Filespec /FS /URL /F (%s/remote.pdf) >> /D [0 /Fit] >> "
                b"/URI << /Base (%s/) >>" % (url, url))
    # a form whose data lives in a file (an external stream, PDF 1.2): pypdf reads no such thing
    objects.append(b"<< /Type /XObject /Subtype /Form /BBox [0 0 9 9] /Length 0 /F (%s) /FFilter /FlateDecode >>"
                   b"\nstream\n\nendstream" % file)
    text = extract(fetched(pdf(*objects), "application/pdf")).markdown
    assert "Visible text of the page" in text and secret_file.read_text() not in text
    assert loopback_listener.connections == 0


def test_a_pdfs_text_stops_at_its_bound_however_often_a_form_is_drawn() -> None:
    words = b"BT /F1 12 Tf 72 720 Td (" + b"amplified " * 10_000 + b") Tj ET"  # 100 KB of text
    form = stream(words, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>")
    # under 2 KB, drawing the form 1,000 times: 100 MB of text uncut
    body = pdf(*one_page(stream(b"/X Do\n" * 1000), b"/XObject << /X 6 0 R >>"), form)
    assert len(body) < 2000
    text = extract(fetched(body, "application/pdf")).markdown
    assert len(text) == MAX_PDF_CHARS and text.startswith("amplified amplified")


def test_a_pdf_nested_past_reason_is_unreadable_not_a_crash() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    body = pdf(*one_page(stream(b"BT /F1 12 Tf 72 720 Td " + deep + b" TJ ET"), page=b"/Deep " + deep))
    with pytest.raises(ExtractionFailed):
        extract(fetched(body, "application/pdf"))
