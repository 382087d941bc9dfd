"""What a second search source adds (issue 36): one ranked mode of agent-svc with and without `SEARCH_SOURCES`.

The sites are split by a rule fixed before any result was seen: every third site of the sites file, in file order
(the 3rd, the 6th…, as `dataset.splits` holds out every third query), is indexed by the second source only, and
the others by the searx both agent-svcs search. One offline web serves every site's pages to both, so a
page the second source finds is fetched and judged like any other. The second source is, by `kind`:
`searxng`, a second searx over the held-back sites; `tavily`, a third agent-svc over that searx, asked through
its Tavily /search.

Every query is asked of both arms, the first arm alternating per query (`runner.evaluate`), and scored as the
other commands score; quality is reported per split, the validation split being data nothing was tuned on. The
services inherit this process's environment: SOURCES_TIMEOUT_S set here bounds the arm with the source.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline_web.searx import Searx
from offline_web.sites import Site, load_sites
from offline_web.stack import agent_service, offline_search_stack, semantic_service
from wisp_eval.dataset import Query
from wisp_eval.report import fmt, summarize, versus
from wisp_eval.runner import Row
from wisp_eval.targets import Answer, Target

SOURCE_NAME = "second"
WITHOUT, WITH = "without source", "with second source"
SPLITS = ("dev", "validation")


def split_sites(sites: list[Site]) -> tuple[list[Site], list[Site]]:
    """(the first searx's sites, the second source's): every third site of the file goes to the second."""
    return [s for i, s in enumerate(sites) if i % 3 != 2], [s for i, s in enumerate(sites) if i % 3 == 2]


def hosts_of(sites: list[Site]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.host for s in sites))


def search_sources(kind: str, url: str, max_results: int) -> str:
    """The `SEARCH_SOURCES` value naming one source of `kind` at `url`, on one free tier."""
    return json.dumps([{"name": SOURCE_NAME, "kind": kind, "tiers": [{"name": "free", "url": url}],
                        "max_results": max_results}])


@dataclass(frozen=True)
class Arms:
    """The two agent-svcs compared (base URLs), and the hosts that only the second source indexes."""

    without: str
    with_source: str
    second_hosts: tuple[str, ...]


@contextmanager
def arms(sites_path: Path, kind: str, max_results: int) -> Iterator[Arms]:
    """The offline web, searx A over the first sites, searx B over the others, semantic-svc, and two agent-svcs on
    searx A, the second with searx B (`kind` searxng) or an agent-svc over it (`tavily`) as its extra source."""
    first, second = split_sites(load_sites(sites_path))
    shared = set(hosts_of(first)) & set(hosts_of(second))
    if shared:
        raise ValueError(f"hosts on both sides of the split cannot be told apart: {sorted(shared)}")
    with tempfile.TemporaryDirectory(prefix="wisp-sources-") as tmp, ExitStack() as running:
        workdir = Path(tmp)
        offline = running.enter_context(offline_search_stack(sites_path, workdir / "searx-a", hosts=hosts_of(first)))
        searx_b = running.enter_context(Searx(offline.web.url, workdir / "searx-b", hosts=hosts_of(second)))
        semantic = running.enter_context(semantic_service(workdir).started(timeout_s=300)).url

        def agent(name: str, searxng_url: str, **env: str) -> str:
            service = agent_service(name, searxng_url, workdir, SEMANTIC_SVC_URL=semantic, **env)
            return running.enter_context(service).url

        source_url = searx_b.url if kind == "searxng" else agent("agent-source", searx_b.url)
        yield Arms(agent("agent-without", offline.searx.url),
                   agent("agent-with", offline.searx.url, SEARCH_SOURCES=search_sources(kind, source_url, max_results)),
                   hosts_of(second))


@dataclass(frozen=True)
class Arm:
    """A target under another name: the same retrieval mode asked of two agent-svcs."""

    name: str
    target: Target

    def ask(self, query: Query) -> Answer:
        return self.target.ask(query)


def by_split(rows: list[Row], split: dict[str, str], second_hosts: tuple[str, ...], k: int) -> dict[str, list[dict]]:
    """Per split, one summary per arm (report.summarize, against the arm without the source), each with the share
    of its top-k pages that only the second source indexes."""
    return {name: [{**s, "from_second_sites": _share_on(rows, s["mode"], name, split, second_hosts)}
                   for s in summarize([r for r in rows if split[r.qid] == name], WITHOUT, k)]
            for name in SPLITS}


def _share_on(rows: list[Row], arm: str, name: str, split: dict[str, str], hosts: tuple[str, ...]) -> float | None:
    pages = [p for r in rows if r.mode == arm and split[r.qid] == name for p in r.pages]
    return round(sum(p.split("/", 1)[0] in hosts for p in pages) / len(pages), 4) if pages else None


def needing_second(queries: list[Query], qrels: dict[str, dict[str, int]], split: dict[str, str],
                   hosts: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per split, judged queries with a relevant page on the second source's sites: `some`, and `only` there."""
    counts = {name: {"judged": 0, "some": 0, "only": 0} for name in SPLITS}
    for q in queries:
        relevant = [page.split("/", 1)[0] in hosts for page, grade in qrels.get(q.qid, {}).items() if grade > 0]
        if q.unanswerable or not relevant:
            continue
        counts[split[q.qid]]["judged"] += 1
        counts[split[q.qid]]["some"] += any(relevant)
        counts[split[q.qid]]["only"] += all(relevant)
    return counts


def table(name: str, summaries: list[dict], needs: dict[str, int], k: int) -> str:
    """One split's Markdown table: quality, cost and wins/losses against the arm without the source."""
    lines = [f"### {name} split: {summaries[0]['queries']} queries; {needs['some']} of {needs['judged']} judged have "
             f"a relevant page on the second source's sites, {needs['only']} only there", "",
             f"| arm | nDCG@{k} | answerable | p50 ms | p95 ms | nDCG@{k} W/L/T (p) | answerable W/L/T (p) "
             f"| top-{k} pages from second sites | errors |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        lines.append(f"| {s['mode']} | {fmt(s[f'ndcg@{k}'])} | {fmt(s['answerable'])} "
                     f"| {fmt(s['latency_ms']['p50'], 0)} | {fmt(s['latency_ms']['p95'], 0)} "
                     f"| {versus(s, f'ndcg@{k}', WITHOUT)} | {versus(s, 'answerable', WITHOUT)} "
                     f"| {fmt(s['from_second_sites'], 2)} | {s['errors']} |")
    return "\n".join(lines) + "\n"


def write(path: Path, meta: dict[str, Any], splits: dict[str, list[dict]], rows: list[Row]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "splits": splits, "rows": [r.as_dict() for r in rows]}, indent=2))
