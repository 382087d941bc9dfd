"""The judged claim set: sentences picked from the offline web's pages, and the claims written from them.

`pick` chooses, reproducibly (a seeded draw over the sorted pages), sentences that state a checkable fact (a
number, version, flag or identifier) and keeps each with the paragraph around it: the passage a rich answer
would cite. The claims (claims.tsv) are written by hand from those passages: a third copied, a third
paraphrased, a third subtly wrong (one changed number, version, flag, name or negation). `load` reads both.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from wisp_text.sentences import split_sentences

from offline_web.corpus import site_dir
from offline_web.pages import parse_page
from offline_web.sites import Site
from wisp_eval.dataset import DatasetError

_FACT = re.compile(r"\d|--?[a-z][\w-]+|\w_\w|`")
_PROSE = re.compile(r"^(?!Copyright)[A-Z][^|{}<>=;]{50,200}[.]$")
KINDS = ("copied", "paraphrased", "wrong")


@dataclass(frozen=True)
class Passage:
    pid: str
    url: str
    sentence: str  # the sentence the claims are written from
    text: str  # the paragraph it stands in: what a claim about it cites


@dataclass(frozen=True)
class JudgedClaim:
    cid: str
    passage: Passage
    kind: str  # copied, paraphrased or wrong
    text: str
    supported: bool  # the judgment: copied and paraphrased claims are, wrong ones are not


def pick(sites: list[Site], cache: Path, count: int, seed: int) -> list[Passage]:
    """`count` passages, at most one per page, drawn with `seed` from every site's pages in sorted order."""
    pages = [(site, path) for site in sites for path in sorted(site_dir(cache, site).rglob("*.html"))
             if site.includes(path.relative_to(site_dir(cache, site)).as_posix())]
    random.Random(seed).shuffle(pages)
    picked: list[Passage] = []
    for site, path in pages:
        if len(picked) == count:
            break
        found = _fact_of(path.read_bytes().decode("utf-8", errors="replace"))
        if found and found[0] not in {p.sentence for p in picked}:  # a page copied into two sites
            url = f"https://{site.prefix}/{path.relative_to(site_dir(cache, site)).as_posix()}"
            picked.append(Passage(f"p{len(picked) + 1:03d}", url, *found))
    return picked


def write_passages(passages: list[Passage], path: Path) -> None:
    lines = ["# pid\turl\tsentence\tpassage"] + [f"{p.pid}\t{p.url}\t{p.sentence}\t{p.text}" for p in passages]
    path.write_text("\n".join(lines) + "\n")


def load(passages_tsv: Path, claims_tsv: Path) -> list[JudgedClaim]:
    """The judged claims (claims.tsv: cid, pid, kind, claim), each with the passage it cites."""
    passages = {pid: Passage(pid, url, sentence, text) for pid, url, sentence, text in _rows(passages_tsv, 4)}
    claims = []
    for cid, pid, kind, text in _rows(claims_tsv, 4):
        if pid not in passages or kind not in KINDS:
            raise DatasetError(f"{claims_tsv}: claim {cid} names an unknown passage {pid!r} or kind {kind!r}")
        claims.append(JudgedClaim(cid, passages[pid], kind, text, supported=kind != "wrong"))
    return claims


def _fact_of(html: str) -> tuple[str, str] | None:
    """The first prose sentence of the page that states a checkable fact, and its paragraph."""
    for paragraph in parse_page(html).paragraphs:
        for sentence in split_sentences(paragraph):
            if _PROSE.match(sentence) and _FACT.search(sentence):
                return sentence, paragraph
    return None


def _rows(path: Path, width: int) -> list[tuple[str, ...]]:
    rows = []
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            fields = tuple(f.strip() for f in line.split("\t"))
            if len(fields) != width:
                raise DatasetError(f"{path}:{line_no}: expected {width} tab-separated fields")
            rows.append(fields)
    return rows
