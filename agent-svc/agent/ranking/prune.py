"""The relative-margin prune of the ranked modes.

Seed 000's decision record: prune with a margin relative to the top score, not a fixed threshold (scores are
not calibrated across queries) nor a fixed count (some queries have one good source, some five). The best
candidate always survives.
"""

from __future__ import annotations

from collections.abc import Sequence


def within_margin(scores: Sequence[float], margin: float) -> list[bool]:
    """Which scores lie within `margin` of the best one (the best always does)."""
    if not scores:
        return []
    top = max(scores)
    return [top - s <= margin for s in scores]
