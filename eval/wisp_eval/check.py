"""Check judgments against the offline corpus: every judged page exists, every answer key is in a grade-3 page.

Debian updates rename and rewrite pages; a judgment is only valid for the package versions it was made
against, which `versions.tsv` beside the qrels records.
"""

from __future__ import annotations

from pathlib import Path

from offline_web.corpus import cache_dir, cached_version, site_dir
from offline_web.pages import parse_page
from offline_web.sites import Site, match_site
from wisp_eval.dataset import Query, judged_fragments
from wisp_eval.metrics import contains_answer


def check_judgments(sites: list[Site], queries: list[Query], qrels_path: Path, cache: Path | None = None
                    ) -> tuple[list[str], list[str]]:
    """(problems, warnings) for the judgments of `queries`; problems mean the qrels cannot be trusted."""
    cache = cache or cache_dir()
    fragments = judged_fragments(qrels_path)
    problems: list[str] = []
    for query in queries:
        grade3_texts = []
        for url, grade in fragments.get(query.qid, []):
            page = url.split("#", 1)[0]
            path = _page_file(sites, cache, page)
            if path is None:
                problems.append(f"{query.qid}: judged page {page} is not in the corpus")
            elif grade >= 3:
                parsed = parse_page(path.read_bytes().decode("utf-8", errors="replace"))
                grade3_texts.append(parsed.title + "\n" + parsed.body)
        answerable = query.answer_keys and not query.unanswerable and grade3_texts
        if answerable and not any(contains_answer(text, query.answer_keys) for text in grade3_texts):
            problems.append(f"{query.qid}: no grade-3 page contains any of {list(query.answer_keys)}")
    return problems, _version_warnings(sites, cache, qrels_path.parent / "versions.tsv")


def _page_file(sites: list[Site], cache: Path, page: str) -> Path | None:
    found = match_site(sites, page)
    if found is None:
        return None
    site, rest = found
    path = site_dir(cache, site) / rest
    return path if path.is_file() else None


def _version_warnings(sites: list[Site], cache: Path, versions_file: Path) -> list[str]:
    if not versions_file.is_file():
        return [f"{versions_file} is missing: the judgments' package versions are unknown"]
    judged_against = dict(line.split("\t", 1) for line in versions_file.read_text().splitlines()
                          if line.strip() and not line.startswith("#"))
    warnings = []
    for package in sorted({s.package for s in sites}):
        now, then = cached_version(cache, package), judged_against.get(package, "").strip()
        if then and now != then:
            warnings.append(f"{package} is {now} here but was judged at {then}: re-read its judged pages")
    return warnings
