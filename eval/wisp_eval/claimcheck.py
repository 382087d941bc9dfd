"""Precision and recall of a rich answer's `supported` on the judged claim set, before and after the lexical check.

Each claim is scored as agent-svc scores it (`agent.answers.claims`): the best probability (semantic-svc's
calibration of /similarity) of a two-sentence window of the passage it cites, and the terms
`grounding.missing_terms` finds missing. "before" is `supported` from the probability alone, "after" adds the
lexical check. The floor of each is chosen by cross-validation: on every fold, the floor with the best F1 on the
other folds, scored on this one; folds group a passage's claims, so no fold is judged on a passage its floor was
chosen on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent.answers.claims import windows
from agent.answers.grounding import missing_terms
from wisp_eval.claimset import KINDS, JudgedClaim

Similarity = Callable[[str, list[str]], list[float]]  # a claim and its windows → the probability of each
FLOORS = tuple(round(0.01 * i, 2) for i in range(101))
CHECKS = ("before", "after")  # similarity alone; similarity and the lexical check


@dataclass(frozen=True)
class Scored:
    claim: JudgedClaim
    similarity: float
    missing: tuple[str, ...]

    def supported(self, check: str, floor: float) -> bool:
        return self.similarity >= floor and (check == "before" or not self.missing)


def score(claims: Sequence[JudgedClaim], similarity: Similarity) -> list[Scored]:
    """Each claim's best similarity to a window of its passage, and the terms of it the passage lacks."""
    return [Scored(c, round(max(similarity(c.text, windows(c.passage.text))), 4),
                   missing_terms(c.text, [c.passage.text])) for c in claims]


def quality(scored: Sequence[Scored], check: str, floor: float) -> dict[str, float | None]:
    """Precision, recall and F1 of `supported` (the positive class) against the judgment."""
    return _quality([s.supported(check, floor) for s in scored], [s.claim.supported for s in scored])


def folds(scored: Sequence[Scored], k: int) -> list[list[Scored]]:
    """k folds dealt by a hash of the passage: stable across runs, and a passage's claims share one fold."""
    passages = sorted({s.claim.passage.pid for s in scored}, key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    fold_of = {pid: i % k for i, pid in enumerate(passages)}
    return [[s for s in scored if fold_of[s.claim.passage.pid] == i] for i in range(k)]


def cross_validate(scored: Sequence[Scored], check: str, k: int = 5) -> dict:
    """Per fold, the floor best on the others and its verdicts on this fold; pooled held-out quality."""
    parts = folds(scored, k)
    floors: list[float] = []
    tested: list[Scored] = []
    said: list[bool] = []
    for i, test in enumerate(parts):
        train = [s for n, part in enumerate(parts) if n != i for s in part]
        floor = max(FLOORS, key=lambda f: (quality(train, check, f)["f1"] or 0.0, -f))
        floors.append(floor)
        tested += test
        said += [s.supported(check, floor) for s in test]
    by_kind = {kind: _share([v for s, v in zip(tested, said, strict=True) if s.claim.kind == kind]) for kind in KINDS}
    return {"floors": floors, **_quality(said, [s.claim.supported for s in tested]), "supported_by_kind": by_kind}


def report(scored: Sequence[Scored], configured_floor: float, k: int = 5) -> dict:
    """Both checks: cross-validated, and at the floor agent-svc is configured with."""
    return {check: {"cross_validated": cross_validate(scored, check, k),
                    "at_configured_floor": {"floor": configured_floor, **quality(scored, check, configured_floor)}}
            for check in CHECKS}


def table(result: dict) -> str:
    """The report as a markdown table."""
    lines = ["| check | floor | precision | recall | F1 | supported: copied / paraphrased / wrong |",
             "|---|---|---|---|---|---|"]
    for check in CHECKS:
        cv, fixed = result[check]["cross_validated"], result[check]["at_configured_floor"]
        kinds = " / ".join(f"{cv['supported_by_kind'][k]}" for k in KINDS)
        lines.append(f"| {check} (cross-validated) | {', '.join(map(str, cv['floors']))} | {cv['precision']} | "
                     f"{cv['recall']} | {cv['f1']} | {kinds} |")
        lines.append(f"| {check} (configured) | {fixed['floor']} | {fixed['precision']} | {fixed['recall']} | "
                     f"{fixed['f1']} | |")
    return "\n".join(lines)


def _quality(said: Sequence[bool], truth: Sequence[bool]) -> dict[str, float | None]:
    hits = sum(p and t for p, t in zip(said, truth, strict=True))
    precision = hits / sum(said) if any(said) else None
    recall = hits / sum(truth) if any(truth) else None
    f1 = 2 * precision * recall / (precision + recall) if precision and recall else 0.0
    return {"claims": len(said), "precision": _r(precision), "recall": _r(recall), "f1": _r(f1)}


def _share(said: Sequence[bool]) -> float | None:
    """The share judged supported (1.0 is right for copied and paraphrased claims, 0.0 for wrong ones)."""
    return round(sum(said) / len(said), 4) if said else None


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
