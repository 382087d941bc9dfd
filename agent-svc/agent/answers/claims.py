"""Stage 6, verify: every claim of an answer checked against the passages it cites, before the answer leaves.

A claim's support score is the best cosine (semantic-svc /similarity) between the claim and a window of two
sentences of any passage of the sources it cites: a whole 1,200-character chunk would dilute a sentence that
states one fact of it. A claim below the floor, or citing nothing, is flagged `supported: false`, never
dropped or passed off as checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from agent.answers.synthesis import Claim, Source, sentences
from agent.core.context import SearchContext
from agent.upstream.semantic import SemanticClient

WINDOW = 2  # sentences per piece of evidence


@dataclass(frozen=True)
class Checked:
    claim: Claim
    supported: bool
    score: float | None  # None: it cites nothing, so nothing was checked


async def checked(claims: Sequence[Claim], sources: Sequence[Source], floor: float, ctx: SearchContext,
                  semantic: SemanticClient) -> tuple[Checked, ...]:
    """Each claim with its verdict; raises Degraded when semantic-svc cannot score."""
    by_number = {s.number: s for s in sources}
    return tuple(await asyncio.gather(*(_check(c, by_number, floor, ctx, semantic) for c in claims)))


async def _check(claim: Claim, sources: dict[int, Source], floor: float, ctx: SearchContext,
                 semantic: SemanticClient) -> Checked:
    evidence = [w for n in claim.citations if n in sources for text in sources[n].texts for w in windows(text)]
    if not evidence:
        return Checked(claim, supported=False, score=None)
    scores = await semantic.similarity(claim.text, evidence, ctx.rich_remaining_s())
    best = max(scores)
    return Checked(claim, supported=best >= floor, score=round(best, 4))


def windows(text: str) -> list[str]:
    """Overlapping windows of WINDOW sentences (one window when the text is shorter)."""
    parts = sentences(text)
    if len(parts) <= WINDOW:
        return [" ".join(parts)] if parts else []
    return [" ".join(parts[i:i + WINDOW]) for i in range(len(parts) - WINDOW + 1)]
