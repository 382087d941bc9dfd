"""The evaluation harness end to end: dev queries q03, q07, q10 and q13 on the mini corpus, keyword mode and
raw searx, with numbers checked by hand against the rankings the BM25 engine gives on that corpus."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from offline_web.stack import OfflineStack
from wisp_eval.__main__ import main

MINI = Path(__file__).parent.parent / "fixtures" / "eval-mini"
SITES = Path(__file__).parent.parent / "fixtures" / "sites-mini.tsv"


def gain(grade: int, rank: int) -> float:
    return (2**grade - 1) / math.log2(rank + 1)


def dcg(grades: list[int]) -> float:
    return sum(gain(g, rank) for rank, g in enumerate(grades, 1))


# The top five pages each query gets on the mini corpus, and their grades in eval-mini/qrels.tsv:
# q03 wal.html 3, c3ref/wal_checkpoint_v2 2, c3ref/wal_autocheckpoint 2, c3ref/wal_checkpoint 1, pragma 2
# q07 git-commit 1, git-rebase 3, git-merge 1, git-cherry-pick 0, git-reset 0
# q10 releaselog/3_40_1 1, releaselog/3_40_0 3, releaselog/3_38_0 0, chronology 3, changes 3
EXPECTED_NDCG = {
    "q03": dcg([3, 2, 2, 1, 2]) / dcg([3, 2, 2, 2, 1]),  # 0.9927
    "q07": dcg([1, 3, 1, 0, 0]) / dcg([3, 1, 1]),  # 0.7277
    "q10": dcg([1, 3, 0, 3, 3]) / dcg([3, 3, 3, 1]),  # 0.7258
}


@pytest.fixture(scope="module")
def report(stack: OfflineStack, agent_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("eval")
    code = main(["run", "--queries", str(MINI / "queries.tsv"), "--qrels", str(MINI / "qrels.tsv"),
                 "--agent", agent_url, "--searx", stack.searx.url, "--modes", "keyword,raw_searxng",
                 "--out", str(out)])
    assert code == 0
    return {"json": json.loads((out / "results.json").read_text()), "md": (out / "report.md").read_text(),
            "png": (out / "quality_latency.png").read_bytes()}


def test_per_query_ndcg_matches_the_hand_computed_values(report: dict) -> None:
    for row in report["json"]["rows"]:
        if row["qid"] in EXPECTED_NDCG:
            assert row["ndcg"] == pytest.approx(EXPECTED_NDCG[row["qid"]], abs=1e-9), (row["qid"], row["pages"])
        else:
            assert row["qid"] == "q13" and row["ndcg"] is None and row["unanswerable"]


def test_summary_per_mode(report: dict) -> None:
    keyword, raw = report["json"]["summary"]
    mean = sum(EXPECTED_NDCG.values()) / 3
    for summary in (keyword, raw):
        assert summary["judged"] == 3 and summary["ndcg@5"] == pytest.approx(mean, abs=1e-4)
        assert summary["success@5"] == 1.0  # a grade-3 page is in every top five
        # the snippets answer q03 (sqlite3_wal_checkpoint_v2) and q10 (3.40.0's source id is dated
        # 2022-11-16), not q07
        assert summary["answerable"] == pytest.approx(2 / 3, abs=1e-4)
        assert summary["abstention_on_unanswerable"] == 0.0 and summary["errors"] == 0
    assert raw["vs_baseline"]["ndcg@5"] == {"wins": 0, "losses": 0, "ties": 3, "p": 1.0}
    assert set(keyword["stages_ms"]) == {"searxng", "total"} and raw["stages_ms"] == {}


def test_modes_alternate_first_turn(report: dict) -> None:
    first = [r["mode"] for r in report["json"]["rows"] if r["order"] == 0]
    assert first == ["keyword", "raw_searxng", "keyword", "raw_searxng"]


def test_markdown_and_plot(report: dict) -> None:
    assert "| keyword | 0.815 | 1.000 | 0.667 | 0.000 |" in report["md"]
    assert "| q13 | kubernetes horizontal pod autoscaler target cpu utilization | answered (should abstain) |" \
        in report["md"]
    assert report["png"][:8] == b"\x89PNG\r\n\x1a\n"


def test_the_judgments_hold_on_the_mini_corpus(stack: OfflineStack, capsys: pytest.CaptureFixture) -> None:
    code = main(["check", "--sites", str(SITES), "--queries", str(MINI / "queries.tsv"),
                 "--qrels", str(MINI / "qrels.tsv")])
    assert code == 0 and "0 problems" in capsys.readouterr().out


def test_duplicate_query_ids_stop_the_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    queries = tmp_path / "q.tsv"
    queries.write_text("q1\tc\tgit rebase\tk\nq1\tc\tgit merge\tk\n")
    assert main(["run", "--queries", str(queries), "--qrels", str(MINI / "qrels.tsv"), "--agent", "http://x"]) == 2
    assert "duplicate query id 'q1'" in capsys.readouterr().err
