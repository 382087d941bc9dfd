import json
import re

from offline_web.sites import Site
from wisp_eval.dataset import Query
from wisp_eval.runner import evaluate
from wisp_eval.sources import WITH, WITHOUT, Arm, by_split, needing_second, search_sources, split_sites, table
from wisp_eval.targets import Answer

QUERIES = [Query(f"q{i}", "c", f"query {i}", ("key",)) for i in range(1, 7)]
QRELS = {"q1": {"a.org/1": 3}, "q2": {"b.org/2": 2}, "q3": {"b.org/3": 3, "a.org/3": 1}, "q6": {"b.org/6": 0}}


def _site(host: str) -> Site:
    return Site(host, "root", f"{host}/docs", re.compile("x"))


class Fixed:
    def __init__(self, pages: list[str]) -> None:
        self.name, self._pages = "fixed", pages

    def ask(self, query: Query) -> Answer:
        return Answer(list(self._pages), "the key", latency_ms=10.0)


def test_every_third_site_in_file_order_goes_to_the_second_source() -> None:
    sites = [_site(f"h{i}.org") for i in range(7)]
    first, second = split_sites(sites)
    assert [s.host for s in second] == ["h2.org", "h5.org"] and len(first) == 5


def test_search_sources_names_one_source_on_a_free_tier() -> None:
    [source] = json.loads(search_sources("tavily", "http://127.0.0.1:9", 10))
    assert source == {"name": "second", "kind": "tavily", "tiers": [{"name": "free", "url": "http://127.0.0.1:9"}],
                      "max_results": 10}


def test_queries_needing_the_second_source_count_relevant_pages_only() -> None:
    split = {q.qid: "validation" if q.qid in ("q3", "q6") else "dev" for q in QUERIES}
    counts = needing_second(QUERIES, QRELS, split, ("b.org",))
    assert counts == {"dev": {"judged": 2, "some": 1, "only": 1}, "validation": {"judged": 1, "some": 1, "only": 0}}


def test_each_split_compares_the_arm_with_the_source_against_the_one_without() -> None:
    arms = [Arm(WITHOUT, Fixed(["a.org/1", "a.org/3"])), Arm(WITH, Fixed(["b.org/2", "a.org/1"]))]
    rows = evaluate(QUERIES[:3], QRELS, arms, k=5)
    split = {"q1": "dev", "q2": "dev", "q3": "validation"}
    summaries = by_split(rows, split, ("b.org",), 5)
    without, with_source = summaries["dev"]
    assert (without["mode"], without["from_second_sites"]) == (WITHOUT, 0.0)
    assert with_source["from_second_sites"] == 0.5 and with_source["vs_baseline"]["ndcg@5"]["wins"] == 1
    rendered = table("dev", summaries["dev"], {"judged": 2, "some": 1, "only": 1}, 5)
    assert "| without source |" in rendered and "| baseline |" in rendered and "(1.00)" in rendered
