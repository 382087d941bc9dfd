"""The multi-hop set for research jobs: questions that need two or more pages, each hop's gold pages, and the fact
each gold page holds (checked in the page's text, as the single-hop judgments are).

    questions.tsv: qid, kind (bridge | comparison | aggregation | constraint), split (dev | validation), question,
                   answer_key ("a || b": any one answers it)
    hops.tsv:      qid, hop (1, 2, ...), page (host/path), fact (words the page's text holds for that hop)

A hop may name several pages (rows with the same hop number): any one of them covers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from offline_web.corpus import cache_dir
from offline_web.pages import parse_page
from offline_web.sites import Site
from wisp_eval.check import _page_file
from wisp_eval.dataset import DatasetError, _rows
from wisp_eval.metrics import contains_answer

KINDS = ("bridge", "comparison", "aggregation", "constraint")
SPLITS = ("dev", "validation")


@dataclass(frozen=True)
class Hop:
    number: int
    pages: tuple[str, ...]  # host/path; any one covers the hop
    facts: tuple[str, ...]  # the fact each page holds, in the same order


@dataclass(frozen=True)
class MultiHopQuestion:
    qid: str
    kind: str
    split: str
    text: str
    answer_keys: tuple[str, ...]
    hops: tuple[Hop, ...]


def load_multihop(questions_path: Path, hops_path: Path) -> list[MultiHopQuestion]:
    """The questions with their hops; a question without two hops, an unknown kind or split is refused."""
    gold: dict[str, dict[int, list[tuple[str, str]]]] = {}
    for line_no, fields in _rows(hops_path):
        if len(fields) != 4 or not fields[1].strip().isdigit():
            raise DatasetError(f"{hops_path}:{line_no}: expected qid, hop number, host/path, fact")
        qid, hop, page, fact = (f.strip() for f in fields)
        gold.setdefault(qid, {}).setdefault(int(hop), []).append((page, fact))
    questions = []
    for line_no, fields in _rows(questions_path):
        if len(fields) != 5:
            raise DatasetError(f"{questions_path}:{line_no}: expected qid, kind, split, question, answer_key")
        qid, kind, split, text, key = (f.strip() for f in fields)
        if kind not in KINDS or split not in SPLITS:
            raise DatasetError(f"{questions_path}:{line_no}: kind must be one of {KINDS}, split one of {SPLITS}")
        hops = tuple(Hop(n, tuple(p for p, _ in rows), tuple(f for _, f in rows))
                     for n, rows in sorted(gold.pop(qid, {}).items()))
        if len(hops) < 2:
            raise DatasetError(f"{questions_path}:{line_no}: {qid} has {len(hops)} hop(s); a multi-hop question "
                               "needs 2 or more")
        questions.append(MultiHopQuestion(qid, kind, split, text, tuple(k.strip() for k in key.split("||")
                                                                        if k.strip()), hops))
    if gold:
        raise DatasetError(f"{hops_path}: hops of unknown questions {sorted(gold)}")
    return questions


def check_multihop(sites: list[Site], questions: list[MultiHopQuestion], cache: Path | None = None) -> list[str]:
    """Problems: a gold page not in the corpus, a fact its page does not hold, an answer key no gold page holds."""
    cache = cache or cache_dir()
    problems = []
    for question in questions:
        texts = []
        for hop in question.hops:
            for page, fact in zip(hop.pages, hop.facts, strict=True):
                path = _page_file(sites, cache, page)
                if path is None:
                    problems.append(f"{question.qid} hop {hop.number}: {page} is not in the corpus")
                    continue
                parsed = parse_page(path.read_bytes().decode("utf-8", errors="replace"))
                texts.append(parsed.title + "\n" + parsed.body)
                if not contains_answer(texts[-1], (fact,)):
                    problems.append(f"{question.qid} hop {hop.number}: {page} does not hold {fact!r}")
        if texts and not any(contains_answer(text, question.answer_keys) for text in texts):
            problems.append(f"{question.qid}: no gold page holds any of {list(question.answer_keys)}")
    return problems
