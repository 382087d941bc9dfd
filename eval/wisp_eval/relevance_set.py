"""The relevance calibration set semantic-svc ships: query–passage pairs from the dev judgments, labelled
relevant (the passage answers the query) or not, with hard negatives.

Only the dev split's queries are shipped (`dataset.splits`); the validation split's pairs are built the same
way to test calibrations on (wisp_eval.transfer), and its queries stay held out from the floors' tuning.
Passages are chunks as agent-svc makes them (its extraction, its chunker, the chunk with its heading). For an
answerable query:
- relevant: a chunk of a page judged 2 or 3 that holds one of the query's answer keys;
- hard negatives: the answer page's other chunks (same page) and the BM25-best chunks of pages judged for other
  queries on the same site (same site, same vocabulary), none of which holds an answer key;
an unanswerable query gets the BM25-best chunks of the pages judged for any query (none answers it).
The draw is seeded, so the same corpus gives the same file.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from wisp_text.bm25 import bm25_scores
from wisp_text.chunking import chunk_text
from wisp_text.markdown import unescaped

from agent.core.pages import Fetched
from agent.pages.extract import extract
from offline_web.corpus import site_dir
from offline_web.sites import Site, match_site
from wisp_eval.dataset import Query, splits
from wisp_eval.metrics import contains_answer

SEED = 34
CHUNK_CHARS = 1200  # agent-svc's CHUNK_CHARS default
PER_QUERY = {"relevant": 3, "same_page": 2, "same_site": 3, "unanswerable": 6}


@dataclass(frozen=True)
class Pair:
    qid: str
    query: str
    label: int  # 1: the passage answers the query
    kind: str  # relevant, same_page, same_site, unanswerable
    url: str
    passage: str


def build(sites: list[Site], cache: Path, queries: list[Query], qrels: dict[str, dict[str, int]],
          split: str = "dev") -> list[Pair]:
    """The pairs of one split's queries, in query order (the validation split's: to test a calibration on)."""
    chunks = _Chunks(sites, cache)
    rng = random.Random(SEED)
    pairs: list[Pair] = []
    of = splits(queries)
    for query in (q for q in queries if of[q.qid] == split):
        judged = qrels.get(query.qid, {})
        if query.unanswerable:
            pool = sorted({page for grades in qrels.values() for page in grades})
            pairs += _best(query, "unanswerable", chunks.of_pages(pool), PER_QUERY["unanswerable"])
        elif judged and query.answer_keys:
            pairs += _answerable(query, judged, qrels, chunks, rng)
    return pairs


def write(pairs: list[Pair], path: Path) -> None:
    header = "# qid\tlabel\tkind\turl\tquery\tpassage (newlines as \\n)"
    rows = [f"{p.qid}\t{p.label}\t{p.kind}\t{p.url}\t{p.query}\t{_escaped(p.passage)}" for p in pairs]
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")


def _answerable(query: Query, judged: dict[str, int], qrels: dict[str, dict[str, int]], chunks: _Chunks,
                rng: random.Random) -> list[Pair]:
    relevant, same_page = [], []
    for page, grade in sorted(judged.items()):
        for url, text in chunks.of_page(page) if grade >= 2 else ():
            holds = contains_answer(text, query.answer_keys)
            if holds:
                relevant.append((url, text))
            elif grade >= 3:
                same_page.append((url, text))
    if not relevant:
        return []
    hosts = {page.split("/", 1)[0] for page in judged}
    others = sorted({page for qid, grades in qrels.items() if qid != query.qid for page in grades
                     if page.split("/", 1)[0] in hosts and page not in judged})
    same_site = [(url, text) for url, text in chunks.of_pages(others)
                 if not contains_answer(text, query.answer_keys)]
    rng.shuffle(relevant)
    rng.shuffle(same_page)
    return ([Pair(query.qid, query.text, 1, "relevant", url, text)
             for url, text in relevant[: PER_QUERY["relevant"]]]
            + [Pair(query.qid, query.text, 0, "same_page", url, text)
               for url, text in same_page[: PER_QUERY["same_page"]]]
            + _best(query, "same_site", same_site, PER_QUERY["same_site"]))


def _best(query: Query, kind: str, pool: list[tuple[str, str]], count: int) -> list[Pair]:
    """The `count` chunks of `pool` BM25 ranks first for the query: the negatives that look most like answers."""
    if not pool:
        return []
    scores = bm25_scores(query.text, [text for _, text in pool])
    best = sorted(range(len(pool)), key=lambda i: scores[i], reverse=True)[:count]
    return [Pair(query.qid, query.text, 0, kind, *pool[i]) for i in best]


class _Chunks:
    """Each judged page's chunks as agent-svc scores them, extracted once."""

    def __init__(self, sites: list[Site], cache: Path) -> None:
        self._sites, self._cache = sites, cache
        self._pages: dict[str, list[tuple[str, str]]] = {}

    def of_pages(self, pages: list[str]) -> list[tuple[str, str]]:
        return [chunk for page in pages for chunk in self.of_page(page)]

    def of_page(self, page: str) -> list[tuple[str, str]]:
        if page not in self._pages:
            self._pages[page] = self._extracted(page)
        return self._pages[page]

    def _extracted(self, page: str) -> list[tuple[str, str]]:
        found = match_site(self._sites, page)
        path = site_dir(self._cache, found[0]) / found[1] if found else None
        if path is None or not path.is_file():
            return []
        url = f"https://{page}"
        extracted = extract(Fetched(url, url, 200, "text/html", path.read_bytes()))
        chunks = chunk_text(unescaped(extracted.markdown), CHUNK_CHARS, extracted.title)
        return [(url, chunk.with_heading) for chunk in chunks if len(chunk.text) >= 80]


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", " ").replace("\n", "\\n")
