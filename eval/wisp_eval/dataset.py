"""Query sets and judgments in the dev format: queries.tsv (qid, category, query, answer_key), qrels.tsv."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ABSTAIN = "ABSTAIN"


class DatasetError(ValueError):
    """A query or qrels file the harness cannot trust; the message names the file and line."""


@dataclass(frozen=True)
class Query:
    qid: str
    category: str
    text: str
    answer_keys: tuple[str, ...]  # any one of them answers the query; empty when none was given

    @property
    def unanswerable(self) -> bool:
        return self.answer_keys == (ABSTAIN,)


def load_queries(path: Path) -> list[Query]:
    """Read a queries file; duplicate query ids are refused (they silently pool judgments otherwise)."""
    queries: list[Query] = []
    seen: dict[str, int] = {}
    for line_no, fields in _rows(path):
        if len(fields) < 3:
            raise DatasetError(f"{path}:{line_no}: expected qid, category, query[, answer_key]")
        qid, category, text = (f.strip() for f in fields[:3])
        if not qid or not text:
            raise DatasetError(f"{path}:{line_no}: empty qid or query")
        if qid in seen:
            raise DatasetError(f"{path}:{line_no}: duplicate query id {qid!r} (first on line {seen[qid]})")
        seen[qid] = line_no
        keys = tuple(k.strip() for k in fields[3].split("||") if k.strip()) if len(fields) > 3 else ()
        queries.append(Query(qid, category, text, keys))
    if not queries:
        raise DatasetError(f"{path}: no queries")
    return queries


def splits(queries: list[Query]) -> dict[str, str]:
    """qid → "dev" or "validation": every third query of the file (the 3rd, the 6th…) is held out for validation,
    a rule fixed before the probability floors were tuned (issue 34); tuning reads the dev split only."""
    return {q.qid: "validation" if i % 3 == 2 else "dev" for i, q in enumerate(queries)}


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """qid → {page (host/path, fragment stripped): grade}; a page judged under several fragments keeps its best."""
    qrels: dict[str, dict[str, int]] = {}
    for line_no, fields in _rows(path):
        if len(fields) < 3:
            raise DatasetError(f"{path}:{line_no}: expected qid, host/path[#fragment], grade")
        qid, url, grade = (f.strip() for f in fields[:3])
        try:
            value = int(grade)
        except ValueError:
            raise DatasetError(f"{path}:{line_no}: grade {grade!r} is not an integer") from None
        page = url.split("#", 1)[0]
        judged = qrels.setdefault(qid, {})
        judged[page] = max(judged.get(page, 0), value)
    return qrels


def judged_fragments(path: Path) -> dict[str, list[tuple[str, int]]]:
    """qid → [(host/path#fragment, grade)] as written, for checking the judgments against the corpus."""
    fragments: dict[str, list[tuple[str, int]]] = {}
    for _, fields in _rows(path):
        fragments.setdefault(fields[0].strip(), []).append((fields[1].strip(), int(fields[2])))
    return fragments


def check_consistency(queries: list[Query], qrels: dict[str, dict[str, int]]) -> list[str]:
    """Problems that would skew the metrics: judgments of unknown queries, unanswerable queries with judgments."""
    known = {q.qid for q in queries}
    problems = [f"qrels judge unknown query {qid!r}" for qid in qrels if qid not in known]
    problems += [
        f"{q.qid} is marked {ABSTAIN} but has judgments" for q in queries if q.unanswerable and qrels.get(q.qid)
    ]
    return problems


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e.strerror}") from None
    return [(n, line.split("\t")) for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
