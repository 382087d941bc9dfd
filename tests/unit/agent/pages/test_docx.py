"""A DOCX's text as markdown (pages/docx.py), built here with zipfile: headings by style id, outline level or style
name, lists, tables, bold and italic, links and the title; and the bounds a hostile file meets."""

import io
import zipfile

import pytest

from agent.pages import docx as docx_module
from agent.pages.docx import MAX_ENTRIES, UnreadableDocx, read_docx

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
LINK = "https://www.sqlite.org/pragma.html"
RELATIONS = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
             f'<Relationship Id="rId5" Type="{R}/hyperlink" Target="{LINK}" TargetMode="External"/>'
             f'<Relationship Id="rId6" Type="{R}/image" Target="media/image1.png"/></Relationships>')
CORE = ('<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/'
        'core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Write-Ahead  Logging</dc:title>'
        '</cp:coreProperties>')
STYLES = (f'<?xml version="1.0"?><w:styles xmlns:w="{W}"><w:style w:type="paragraph" w:styleId="berschrift2">'
          '<w:name w:val="heading 2"/></w:style><w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/>'
          '</w:style></w:styles>')


def paragraph(*runs: str, properties: str = "") -> str:
    return f"<w:p><w:pPr>{properties}</w:pPr>{''.join(runs)}</w:p>"


def run(text: str, bold: bool = False, italic: bool = False) -> str:
    styles = ("<w:b/>" if bold else "") + ("<w:i/>" if italic else "")
    return f'<w:r><w:rPr>{styles}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>'


def archive(parts: dict[str, str | bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in parts.items():
            zipped.writestr(name, content)
    return out.getvalue()


def document(*body: str, declaration: str = "") -> str:
    """word/document.xml of these paragraphs and tables."""
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>{declaration}<w:document xmlns:w="{W}" '
            f'xmlns:r="{R}" xmlns:mc="{MC}"><w:body>{"".join(body)}</w:body></w:document>')


def docx_file(*body: str, parts: dict[str, str | bytes] | None = None) -> bytes:
    """A DOCX whose document body is these paragraphs and tables, with more `parts` (name → content) beside it."""
    return archive({"[Content_Types].xml": "<Types/>", "word/document.xml": document(*body), **(parts or {})})


ARTICLE = docx_file(
    paragraph(run("Write-Ahead Logging"), properties='<w:pStyle w:val="Heading1"/>'),
    paragraph(run("The "), run("default", bold=True), run(" method", bold=True), run(" is a "),
              run("rollback journal", italic=True), run(".")),
    paragraph(run("Checkpointing"), properties='<w:pStyle w:val="berschrift2"/>'),
    paragraph(run("Tabs\tand"), "<w:r><w:tab/><w:t>breaks</w:t><w:br/><w:t>kept</w:t></w:r>",
              properties='<w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs>'),
    paragraph(run("first item"), properties='<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'),
    paragraph(run("nested item"), properties='<w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr>'),
    paragraph(f'<w:hyperlink r:id="rId5">{run("the pragma page")}</w:hyperlink>', run(" and "),
              f'<w:hyperlink w:anchor="top">{run("a bookmark")}</w:hyperlink>'),
    "<w:tbl><w:tr><w:tc>" + paragraph(run("Mode")) + "</w:tc><w:tc>" + paragraph(run("Pages")) + "</w:tc></w:tr>"
    "<w:tr><w:tc>" + paragraph(run("WAL | rollback")) + "</w:tc><w:tc>" + paragraph(run("1000")) +
    paragraph(run("at most")) + "</w:tc></w:tr></w:tbl>",
    paragraph(run("Outline level 3"), properties='<w:outlineLvl w:val="2"/>'),
    paragraph(run("   "), properties='<w:pStyle w:val="Quote"/>'),
    parts={"word/_rels/document.xml.rels": RELATIONS, "docProps/core.xml": CORE, "word/styles.xml": STYLES})


def test_headings_paragraphs_lists_links_and_tables_as_markdown() -> None:
    read = read_docx(ARTICLE, 100_000)
    assert read.markdown.split("\n\n") == [
        "# Write-Ahead Logging",
        "The **default method** is a *rollback journal*.",
        "## Checkpointing",  # a localized style id, known by its name in styles.xml
        "Tabs\tand\tbreaks\nkept",  # a tab stop of the paragraph's properties adds nothing
        "- first item\n  - nested item",
        f"[the pragma page]({LINK}) and a bookmark",  # a link within the document is its text
        "| Mode | Pages |\n| --- | --- |\n| WAL \\| rollback | 1000 at most |",
        "### Outline level 3",
    ]
    assert read.title == "Write-Ahead Logging"  # the document's properties, spaces collapsed


def test_without_properties_the_title_is_the_first_heading() -> None:
    read = read_docx(docx_file(paragraph(run("Intro text")), paragraph(run("Release notes"),
                                                                       properties='<w:pStyle w:val="Title"/>')), 1000)
    assert read.title == "Release notes" and read.markdown == "Intro text\n\n# Release notes"


def test_a_text_boxs_fallback_is_read_once_and_a_nested_table_in_its_cell() -> None:
    box = paragraph(run("Box text"))
    body = docx_file(
        paragraph(f"<w:r><mc:AlternateContent><mc:Choice><w:drawing><w:txbxContent>{box}</w:txbxContent>"
                  f"</w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent>{box}</w:txbxContent></w:pict>"
                  "</mc:Fallback></mc:AlternateContent></w:r>", run("Outer text")),
        "<w:tbl><w:tr><w:tc>" + paragraph(run("Outer")) + "<w:tbl><w:tr><w:tc>" + paragraph(run("inner")) +
        "</w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl>")
    assert read_docx(body, 1000).markdown == "Box text\n\nOuter text\n\n| Outer inner |\n| --- |"


def test_the_text_stops_at_its_bound_and_keeps_the_paragraph_it_stopped_in() -> None:
    body = docx_file(paragraph(run("Heading")), "<w:tbl><w:tr><w:tc>",
                     *(paragraph(run("lorem ipsum " * 100)) for _ in range(100)), "</w:tc></w:tr></w:tbl>")
    markdown = read_docx(body, 5000).markdown
    assert len(markdown) == 5000 and markdown.startswith("Heading\n\n| lorem ipsum lorem")


@pytest.mark.parametrize(("body", "why"), [
    (b"plain text, no archive", "not a DOCX: File is not a zip file"),
    (archive({"xl/workbook.xml": "<workbook/>"}), "not a DOCX: the archive holds no word/document.xml"),
    (docx_file("<w:p><w:r><w:t>unclosed"), "unreadable DOCX: "),
])
def test_what_is_not_a_docx_is_unreadable(body: bytes, why: str) -> None:
    with pytest.raises(UnreadableDocx, match=why):
        read_docx(body, 1000)


@pytest.mark.parametrize("declaration", [
    '<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/hostname">]>',
    '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    '<!DOCTYPE d SYSTEM "http://127.0.0.1:9/word.dtd">',
])
def test_xml_with_a_dtd_is_refused_before_any_entity_is_defined(declaration: str) -> None:
    body = archive({"word/document.xml": document(paragraph(run("&x;&b;")), declaration=declaration)})
    with pytest.raises(UnreadableDocx, match="declares a DTD"):
        read_docx(body, 1000)


def test_an_archive_of_too_many_members_is_refused() -> None:
    parts = {f"customXml/item{n}.xml": "" for n in range(MAX_ENTRIES)}
    with pytest.raises(UnreadableDocx, match=f"more than {MAX_ENTRIES} members"):
        read_docx(docx_file(parts=parts), 1000)


def test_a_zip_bomb_is_read_no_further_than_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docx_module, "MAX_PART_BYTES", 1_000_000)
    # 20 MB of one paragraph's text compressed to about 20 kB: reading stops after the first megabyte
    bomb = docx_file(paragraph(run("kept")), paragraph(run("a" * 20_000_000)))
    assert len(bomb) < 100_000
    kept, rest = read_docx(bomb, 100_000_000).markdown.split("\n\n")
    assert kept == "kept" and 990_000 < len(rest) < 1_000_000 and set(rest) == {"a"}
