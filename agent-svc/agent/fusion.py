"""How a ranked mode's scores combine with SearXNG's order into the final order, one function per strategy.

On the first dev set, cosine alone left pages SearXNG had right behind pages with better snippets, and fusing
with SearXNG's rank rescued it; fusion also caps how far a page SearXNG ranked low can rise. `weight` is the
share the mode's own score gets: 1 ranks by the score alone, 0 keeps SearXNG's order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import fmean, pstdev

RRF_K = 10  # small pools (about 20 candidates): a smaller k than the usual 60 keeps the top ranks decisive

Fusion = Callable[[Sequence[float], float], list[int]]


def rrf(scores: Sequence[float], weight: float) -> list[int]:
    """Weighted reciprocal rank fusion of SearXNG's order (the order of `scores`) and the scores' order."""
    by_score = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)
    fused = [(1 - weight) / (RRF_K + i + 1) for i in range(len(scores))]
    for rank, i in enumerate(by_score, 1):
        fused[i] += weight / (RRF_K + rank)
    return sorted(range(len(scores)), key=lambda i: fused[i], reverse=True)


def blend(scores: Sequence[float], weight: float) -> list[int]:
    """Calibrated blending: the z-scored score against a z-scored prior of SearXNG's rank (−log rank), so a
    clear score gap can overturn SearXNG's order, where rank fusion only sees that one page beats another."""
    prior = [-math.log(rank) for rank in range(1, len(scores) + 1)]
    fused = [weight * s + (1 - weight) * p for s, p in zip(_z(scores), _z(prior), strict=True)]
    return sorted(range(len(scores)), key=lambda i: fused[i], reverse=True)


def _z(values: Sequence[float]) -> list[float]:
    spread = pstdev(values) if len(values) > 1 else 0.0
    mean = fmean(values) if values else 0.0
    return [(v - mean) / spread if spread > 0 else 0.0 for v in values]


FUSIONS: dict[str, Fusion] = {"rrf": rrf, "blend": blend}
