"""The dashboard (deploy/grafana.json) and the PromQL of docs/operations.md name only metrics the services export,
and docs/operations.md lists every one of them."""

import json
import re
from pathlib import Path

from prometheus_client import REGISTRY

import agent.metrics  # noqa: F401 - registers agent-svc's metrics
import semantic.metrics  # noqa: F401 - registers semantic-svc's metrics

ROOT = Path(__file__).parents[2]
METRIC = re.compile(r"\bwisp_[a-z_]+\b")


def exported() -> dict[str, set[str]]:
    """Each Wisp metric's name as docs/operations.md lists it → the series names PromQL may use."""
    series = {}
    for family in REGISTRY.collect():
        if not family.name.startswith("wisp_"):
            continue
        if family.type == "counter":
            series[f"{family.name}_total"] = {f"{family.name}_total"}
        elif family.type == "histogram":
            series[family.name] = {f"{family.name}_{suffix}" for suffix in ("bucket", "sum", "count")}
        else:
            series[family.name] = {family.name}
    return series


def test_the_dashboards_queries_name_exported_series() -> None:
    dashboard = json.loads((ROOT / "deploy" / "grafana.json").read_text())
    used = {name for panel in dashboard["panels"] for target in panel["targets"]
            for name in METRIC.findall(target["expr"])}
    known = set().union(*exported().values())
    assert used and used <= known, used - known


def test_the_docs_promql_names_exported_series_and_its_tables_every_metric() -> None:
    doc = (ROOT / "docs" / "operations.md").read_text()
    promql = "\n".join(re.findall(r"```promql\n(.*?)```", doc, re.DOTALL))
    assert METRIC.findall(promql) and set(METRIC.findall(promql)) <= set().union(*exported().values())
    listed = set(re.findall(r"^\| `(wisp_[a-z_]+)` \|", doc, re.MULTILINE))
    assert listed == set(exported())
