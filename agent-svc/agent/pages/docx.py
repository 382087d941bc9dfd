"""A DOCX file's text as markdown: headings, paragraphs, lists, tables, bold and italic, and links, read with the
standard library (zipfile, and expat as a stream).

A DOCX is hostile input, read within bounds: an archive of more than MAX_ENTRIES members is refused, a part is
read no further than MAX_PART_BYTES uncompressed (a zip bomb stops there, whatever its header claims) and the
text no further than the caller's `max_chars`. The XML may declare no DTD, so it defines no entity and names no
external one (expat would fetch none anyway). Word's numbering definitions are not read: every list item is a
bullet.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.parsers import expat

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
MAX_ENTRIES = 5000  # a Word document has a few dozen
MAX_PART_BYTES = 32 * 1024 * 1024  # uncompressed, per part read

_DOCUMENT, _STYLES = "word/document.xml", "word/styles.xml"
_RELATIONS, _CORE = "word/_rels/document.xml.rels", "docProps/core.xml"
_CHUNK = 64 * 1024
_WORD = frozenset({"http://schemas.openxmlformats.org/wordprocessingml/2006/main",
                   "http://purl.oclc.org/ooxml/wordprocessingml/main"})  # transitional and strict OOXML
_COMPATIBILITY = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_DUBLIN_CORE = "http://purl.org/dc/elements/1.1/"
_HEADING_NAME = re.compile(r"^(?:heading\s*(\d)|title)$", re.IGNORECASE)
_OFF = frozenset({"0", "false", "off", "none"})
_NESTED = frozenset({"p", "r", "hyperlink", "tbl"})  # what `finish` closes when reading stopped within it
_LIST_ITEM = re.compile(r"^ *- ")

Handler = Callable[..., None]


class UnreadableDocx(ValueError):
    """Not a DOCX, or a DOCX that cannot be read within the bounds."""


class _Enough(Exception):
    """The text budget or a part's byte bound is spent: what was read so far stands."""


@dataclass(frozen=True)
class Docx:
    markdown: str
    title: str  # the document's properties' title, else its first heading


def read_docx(body: bytes, max_chars: int) -> Docx:
    """A DOCX file's text as markdown, cut at `max_chars`; raises UnreadableDocx."""
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            if len(archive.infolist()) > MAX_ENTRIES:
                raise UnreadableDocx(f"not a DOCX: the archive has more than {MAX_ENTRIES} members")
            names = set(archive.namelist())
            if _DOCUMENT not in names:
                raise UnreadableDocx(f"not a DOCX: the archive holds no {_DOCUMENT}")
            text = _Text(_style_levels(archive) if _STYLES in names else {},
                         _link_targets(archive) if _RELATIONS in names else {}, max_chars)
            _parse(archive, _DOCUMENT, text.start, text.end, text.data)
            text.finish()
            title = _title(archive) if _CORE in names else ""
    except zipfile.BadZipFile as e:
        raise UnreadableDocx(f"not a DOCX: {e}") from None
    except (zlib.error, EOFError, RuntimeError, NotImplementedError, expat.ExpatError) as e:  # encrypted, corrupt
        raise UnreadableDocx(f"unreadable DOCX: {e}") from None
    return Docx("\n\n".join(text.blocks)[:max_chars], title or text.first_heading)


def _parse(archive: zipfile.ZipFile, name: str, start: Handler, end: Handler | None = None,
           data: Handler | None = None) -> None:
    """Stream the part `name` through expat to these handlers (element names as `namespace}local`), up to
    MAX_PART_BYTES or until a handler has had enough."""
    parser = expat.ParserCreate(namespace_separator="}")
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.StartElementHandler = start
    if end:
        parser.EndElementHandler = end
    if data:
        parser.CharacterDataHandler = data
    read = 0
    try:
        with archive.open(name) as part:
            while chunk := part.read(min(_CHUNK, MAX_PART_BYTES - read)):
                read += len(chunk)
                parser.Parse(chunk, False)
            if not part.read(1):  # the whole part (else it stops at the bound, whatever follows)
                parser.Parse(b"", True)
    except _Enough:
        pass


def _refuse_dtd(*_: object) -> None:
    raise UnreadableDocx("unreadable DOCX: its XML declares a DTD")


def _named(name: str) -> tuple[str, str]:
    """`namespace}local` → (namespace, local)."""
    namespace, _, local = name.rpartition("}")
    return namespace, local


def _attribute(attributes: dict[str, str], local: str) -> str | None:
    """The value of the attribute named `local` in whichever namespace (Word's `w:val`, `r:id`, or none)."""
    return next((value for name, value in attributes.items() if _named(name)[1] == local), None)


def _style_levels(archive: zipfile.ZipFile) -> dict[str, int]:
    """Each heading style's id → its level (1–9), from its outline level or its name ("heading 2", "Title"):
    style ids are localized ("berschrift1"), the names of the built-in styles are not."""
    levels: dict[str, int] = {}
    style: dict[str, str] = {}

    def start(name: str, attributes: dict[str, str]) -> None:
        namespace, local = _named(name)
        if namespace in _WORD and local in ("style", "name", "outlineLvl"):
            style[local] = _attribute(attributes, "styleId" if local == "style" else "val") or ""

    def end(name: str) -> None:
        namespace, local = _named(name)
        if namespace in _WORD and local == "style":
            if (level := _level(style.get("outlineLvl"), style.get("name", ""))) and style.get("style"):
                levels[style["style"]] = level
            style.clear()

    _parse(archive, _STYLES, start, end)
    return levels


def _level(outline: str | None, name: str) -> int | None:
    if outline and outline.isdigit() and int(outline) < 9:
        return int(outline) + 1
    match = _HEADING_NAME.match(name.strip())
    return int(match.group(1) or 1) if match else None


def _link_targets(archive: zipfile.ZipFile) -> dict[str, str]:
    """The document's relationships that are http(s) links: id → URL."""
    targets: dict[str, str] = {}

    def start(name: str, attributes: dict[str, str]) -> None:
        target = attributes.get("Target", "")
        if _named(name)[1] == "Relationship" and target.lower().startswith(("http://", "https://")):
            targets[attributes.get("Id", "")] = target

    _parse(archive, _RELATIONS, start)
    return targets


def _title(archive: zipfile.ZipFile) -> str:
    """The title in the document's properties."""
    inside, title = [False], []

    def start(name: str, _: dict[str, str]) -> None:
        inside[0] = name == f"{_DUBLIN_CORE}}}title"

    def end(_: str) -> None:
        inside[0] = False

    def data(text: str) -> None:
        if inside[0] and len(title) < 100:
            title.append(text)

    _parse(archive, _CORE, start, end, data)
    return " ".join("".join(title).split())


@dataclass
class _Paragraph:
    style: str = ""
    outline: str | None = None
    listed: bool = False
    depth: int = 0
    pieces: list[tuple[str, bool, bool, str | None]] = field(default_factory=list)  # text, bold, italic, link

    def markdown(self, levels: dict[str, int]) -> tuple[str, int | None]:
        """The paragraph's markdown, and its heading level (None when it is not a heading)."""
        text = "".join(_styled(pieces) for pieces in _groups(self.pieces)).strip()
        level = _level(self.outline, "") or levels.get(self.style) or _level(None, self.style)
        if not text:
            return "", None
        if level:
            return f"{'#' * min(level, 6)} {' '.join(text.split())}", level
        if self.listed:
            return f"{'  ' * self.depth}- {' '.join(text.split())}", None
        return text, None


@dataclass
class _Run:
    bold: bool = False
    italic: bool = False
    text: list[str] = field(default_factory=list)


class _Text:
    """The handlers that turn word/document.xml into markdown blocks. Paragraphs, runs and tables nest (a text
    box's paragraphs sit inside a run of another paragraph; a table inside a table's cell), so each is a stack."""

    def __init__(self, levels: dict[str, int], targets: dict[str, str], max_chars: int) -> None:
        self._levels, self._targets, self._left = levels, targets, max_chars
        self.blocks: list[str] = []
        self.first_heading = ""
        self._paragraphs: list[_Paragraph] = []
        self._runs: list[_Run] = []
        self._tables: list[list[list[list[str]]]] = []  # rows of cells of paragraphs' text
        self._links: list[str | None] = []
        self._in_text = False
        self._skipped = 0  # depth within mc:Fallback, which repeats its mc:Choice for older readers
        self._open: list[str] = []  # the elements of _NESTED open now, outermost first

    def finish(self) -> None:
        """Close what was still open when reading stopped (the text's or the part's bound): its text stands."""
        self._skipped, self._in_text = 0, False
        while self._open:
            self.end(f"{min(_WORD)}}}{self._open[-1]}")

    def start(self, name: str, attributes: dict[str, str]) -> None:
        namespace, local = _named(name)
        if namespace == _COMPATIBILITY and local == "Fallback":
            self._skipped += 1
        if namespace not in _WORD or self._skipped:
            return
        if local in _NESTED:
            self._open.append(local)
        if local == "p":
            self._paragraphs.append(_Paragraph())
        elif local == "r":
            self._runs.append(_Run())
        elif local == "t":
            self._in_text = True
        elif local in ("tab", "br", "cr") and self._runs:  # not a tab stop of the paragraph's properties
            self._runs[-1].text.append("\t" if local == "tab" else "\n")
        elif local in ("b", "i") and self._runs:
            setattr(self._runs[-1], "bold" if local == "b" else "italic", _attribute(attributes, "val") not in _OFF)
        elif local == "hyperlink":
            self._links.append(self._targets.get(_attribute(attributes, "id") or ""))
        elif local == "tbl":
            self._tables.append([])
        elif local == "tr" and self._tables:
            self._tables[-1].append([])
        elif local == "tc" and self._tables and self._tables[-1]:
            self._tables[-1][-1].append([])
        elif self._paragraphs:
            self._paragraph_property(local, attributes)

    def _paragraph_property(self, local: str, attributes: dict[str, str]) -> None:
        paragraph, value = self._paragraphs[-1], _attribute(attributes, "val")
        if local == "pStyle":
            paragraph.style = value or ""
        elif local == "outlineLvl":
            paragraph.outline = value
        elif local == "numPr":
            paragraph.listed = True
        elif local == "ilvl" and value and value.isdigit():
            paragraph.depth = min(int(value), 8)

    def end(self, name: str) -> None:
        namespace, local = _named(name)
        if namespace == _COMPATIBILITY and local == "Fallback":
            self._skipped -= 1
        if namespace not in _WORD or self._skipped:
            return
        if local in _NESTED and self._open:
            self._open.pop()
        if local == "t":
            self._in_text = False
        elif local == "r" and self._runs:
            run = self._runs.pop()
            if self._paragraphs and run.text:
                link = self._links[-1] if self._links else None
                self._paragraphs[-1].pieces.append(("".join(run.text), run.bold, run.italic, link))
        elif local == "hyperlink" and self._links:
            self._links.pop()
        elif local == "p" and self._paragraphs:
            self._add(*self._paragraphs.pop().markdown(self._levels))
        elif local == "tbl" and self._tables:
            rows = self._tables.pop()
            if self._tables:  # a table in a cell: its text in the outer cell
                self._in_cell(" ".join(text for row in rows for cell in row for text in cell))
            elif table := _table(rows):
                self.blocks.append(table)

    def data(self, text: str) -> None:
        if self._in_text and self._runs and not self._skipped:
            self._left -= len(text)
            self._runs[-1].text.append(text)
            if self._left < 0:
                raise _Enough

    def _add(self, markdown: str, level: int | None) -> None:
        if not markdown:
            return
        if level and not self.first_heading:
            self.first_heading = markdown.lstrip("#").strip()
        if self._tables:
            self._in_cell(markdown)
        elif self.blocks and _LIST_ITEM.match(markdown) and _LIST_ITEM.match(self.blocks[-1].rsplit("\n", 1)[-1]):
            self.blocks[-1] += f"\n{markdown}"  # one list, not a list per item
        else:
            self.blocks.append(markdown)

    def _in_cell(self, text: str) -> None:
        rows = self._tables[-1]
        if rows and rows[-1]:
            rows[-1][-1].append(text)


def _groups(pieces: list[tuple[str, bool, bool, str | None]]) -> list[list[tuple[str, bool, bool, str | None]]]:
    """Adjacent pieces of the same style and link together, so that `**a**` `**b**` is written `**ab**`."""
    groups: list[list[tuple[str, bool, bool, str | None]]] = []
    for piece in pieces:
        if groups and groups[-1][-1][1:] == piece[1:]:
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups


def _styled(group: list[tuple[str, bool, bool, str | None]]) -> str:
    text = "".join(piece[0] for piece in group)
    _, bold, italic, link = group[0]
    core = text.strip()
    if not core:
        return text
    marker = "*" * ((2 if bold else 0) + (1 if italic else 0))
    styled = f"{marker}{core}{marker}"
    if link:
        styled = f"[{styled}]({link})"
    return text[:len(text) - len(text.lstrip())] + styled + text[len(text.rstrip()):]


def _table(rows: list[list[list[str]]]) -> str:
    """A table as markdown's pipe table, its first row the header."""
    cells = [[" ".join(" ".join(cell).replace("|", "\\|").split()) for cell in row] for row in rows if row]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    lines = [f"| {' | '.join(row + [''] * (width - len(row)))} |" for row in cells]
    return "\n".join([lines[0], "|" + " --- |" * width, *lines[1:]])
