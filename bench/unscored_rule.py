"""Where should a candidate go that the deadline left unscored? Replays partial scoring on judged queries.

Input: a `wisp_eval fit --mode hybrid` JSON (every judged query's candidates with their features, from one
explain run with a deadline long enough to score them all). For each query, the first m candidates in priority
order are taken as scored (m = 0 … all; priority: SearXNG's rank, the order hybrid fetches in; hybrid itself
scores by each candidate's best BM25 chunk, which the fit's candidates do not record: this models the cut, not
its exact order) and the rest as unscored; each rule orders them, and nDCG@5 is averaged per share scored. Rules:
- after (linear | rrf): the scored in that fusion (agent-svc's functions: linear with its default weights,
  z-scored over the scored; rrf with equal weights), then the unscored in SearXNG order
- interleaved: agent-svc's reciprocal rank fusion of SearXNG's rank (every candidate) and the score's rank
  (the scored only), equal weights
- dropped: the scored alone in the linear fusion, as if unscored candidates were pruned

    python bench/unscored_rule.py --judged fit-hybrid.json --out unscored_rule.json

On the dev set (56 judged queries, offline models, the shortlist scored as one set): after (linear) 0.618 /
0.656 / 0.652 at 25 / 50 / 75% scored, dropped 0.611 / 0.652 / 0.652, either rrf 0.602 / 0.615 / 0.613, SearXNG's
order 0.579 and everything scored 0.655. Hybrid mode places unscored candidates after the scored.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from agent.ranking.fusion import FITTED_WEIGHTS, merged_lists
from wisp_eval.fit import Candidate, Judged, linear_order, load_judged, rrf_order
from wisp_eval.metrics import ndcg_at_k

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


def after_linear(scored: list[Candidate], unscored: list[Candidate]) -> list[Candidate]:
    return linear_order(scored, FITTED_WEIGHTS) + unscored


def after_rrf(scored: list[Candidate], unscored: list[Candidate]) -> list[Candidate]:
    return rrf_order(scored, 0.5) + unscored


def interleaved(scored: list[Candidate], unscored: list[Candidate]) -> list[Candidate]:
    by_page = {c.page: c for c in scored + unscored}
    by_prior = [c.page for c in sorted(by_page.values(), key=lambda c: c.rank)]
    by_score = [c.page for c in sorted(scored, key=lambda c: c.features["score"], reverse=True)]
    return [by_page[p] for p in merged_lists([by_prior, by_score], [0.5, 0.5])
            if by_page[p] not in scored or by_page[p].kept]


def dropped(scored: list[Candidate], unscored: list[Candidate]) -> list[Candidate]:
    return linear_order(scored, FITTED_WEIGHTS)


RULES = {"after (linear)": after_linear, "after (rrf)": after_rrf, "interleaved (rrf)": interleaved,
         "dropped (linear)": dropped}


def replay(judged: list[Judged], share: float, rule) -> float:
    values = []
    for query in judged:
        candidates = sorted(query.candidates, key=lambda c: c.rank)
        m = round(share * len(candidates))
        order = rule(candidates[:m], candidates[m:]) if m else candidates
        if (value := ndcg_at_k([c.page for c in order], dict(query.grades), 5)) is not None:
            values.append(value)
    return statistics.fmean(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judged", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=Path("unscored_rule.json"))
    args = parser.parse_args()
    judged = load_judged(json.loads(args.judged.read_text())["judged"])
    table = {name: {str(share): round(replay(judged, share, rule), 4) for share in SHARES}
             for name, rule in RULES.items()}
    print(f"{len(judged)} judged queries; nDCG@5 by share of candidates scored (priority: SearXNG's rank)")
    print("| rule | " + " | ".join(f"{share:.0%}" for share in SHARES) + " |")
    print("|---|" + "---|" * len(SHARES))
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in row.values()) + " |")
    args.out.write_text(json.dumps({"queries": len(judged), "ndcg5": table}, indent=2))


if __name__ == "__main__":
    main()
