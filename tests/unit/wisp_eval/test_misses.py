"""Where an answer was lost: the first stage, in pipeline order, that let its page go."""

import pytest

from wisp_eval.dataset import Query
from wisp_eval.misses import _stage

QUERY = Query("q1", "infra", "sqlite wal checkpoint", ("wal_checkpoint",))
ANSWER = {"www.sqlite.org/wal.html"}


def row(url: str, fetch: str | None, decision: str = "kept") -> dict:
    return {"url": f"https://{url}", "fetch": fetch, "decision": decision}


@pytest.mark.parametrize(("body", "stage"), [
    ({"context": "PRAGMA wal_checkpoint", "explain": []}, "answered"),
    ({"context": "", "explain": [row("other.org/x", "ok")]}, "not a candidate"),
    ({"context": "", "explain": [row("www.sqlite.org/wal.html", None)]}, "not fetched"),
    ({"context": "", "explain": [row("www.sqlite.org/wal.html", "HTTP 404")]}, "fetch failed"),
    ({"context": "", "explain": [row("www.sqlite.org/wal.html", "ok", "pruned")]}, "pruned"),
    ({"context": "", "explain": [row("www.sqlite.org/wal.html", "ok")]}, "not packed"),
])
def test_the_first_stage_that_lost_the_answer_page_is_named(body: dict, stage: str) -> None:
    assert _stage(body, QUERY, ANSWER) == stage
