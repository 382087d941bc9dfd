"""Stage 6, verify: every claim of an answer checked against the passages it cites, before the answer leaves.

A claim's support score is the best cosine (semantic-svc /similarity) between the claim and a window of two
sentences of any passage of the sources it cites: a whole 1,200-character chunk would dilute a sentence that
states one fact of it. Similarity is blind to a wrong number or name in an on-topic sentence, so a claim must
also pass the lexical check (`grounding.missing_terms`) against the passages it cites. A claim below the floor,
missing a term, or citing nothing, is flagged `supported: false` with the `reason`, never dropped or passed off
as checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from agent.answers.grounding import missing_terms
from agent.answers.synthesis import Claim, Source, sentences
from agent.core.context import SearchContext
from agent.errors import Degraded
from agent.upstream.semantic import SemanticClient

WINDOW = 2  # sentences per piece of evidence


@dataclass(frozen=True)
class Checked:
    claim: Claim
    supported: bool
    score: float | None  # its best window's probability of support; None: it cites nothing, so nothing was checked
    reason: str | None  # why it is not supported; None when it is


async def checked(claims: Sequence[Claim], sources: Sequence[Source], floor: float, ctx: SearchContext,
                  semantic: SemanticClient) -> tuple[Checked, ...]:
    """Each claim with its verdict; raises Degraded when semantic-svc cannot score."""
    by_number = {s.number: s for s in sources}
    return tuple(await asyncio.gather(*(_check(c, by_number, floor, ctx, semantic) for c in claims)))


async def _check(claim: Claim, sources: dict[int, Source], floor: float, ctx: SearchContext,
                 semantic: SemanticClient) -> Checked:
    cited = [text for n in claim.citations if n in sources for text in sources[n].texts]
    evidence = [w for text in cited for w in windows(text)]
    if not evidence:
        return Checked(claim, supported=False, score=None, reason="it cites no source")
    ratings = await semantic.similarity(claim.text, evidence, ctx.rich_remaining_s())
    best = ratings.best_probability()
    if best is None:
        raise Degraded("semantic-svc's similarity model has no relevance calibration, so no probability to hold "
                       "against SUPPORT_FLOOR")
    reason = verdict_reason(best, floor, missing_terms(claim.text, cited))
    return Checked(claim, supported=reason is None, score=round(best, 4), reason=reason)


def verdict_reason(score: float, floor: float, missing: Sequence[str]) -> str | None:
    """Why a claim whose best window has this probability and whose cited passages lack these terms is not
    supported; None when it is."""
    reasons = []
    if score < floor:
        reasons.append(f"probability {score:.2f} is below the floor {floor:.2f}")
    if missing:
        reasons.append(f"not in the cited passages: {', '.join(missing)}")
    return "; ".join(reasons) or None


def windows(text: str) -> list[str]:
    """Overlapping windows of WINDOW sentences (one window when the text is shorter)."""
    parts = sentences(text)
    if len(parts) <= WINDOW:
        return [" ".join(parts)] if parts else []
    return [" ".join(parts[i:i + WINDOW]) for i in range(len(parts) - WINDOW + 1)]
