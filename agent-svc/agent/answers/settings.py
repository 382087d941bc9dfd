"""The answer stage's settings: rich answers, their claim check, and the LLM formats' context."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class RichSettings(Section):
    """search_type "rich" and the LLM formats: the deadline, the sources the LLM reads, when to abstain, what a
    claim needs."""

    rich_deadline_s: float = Field(60.0, gt=0, description="Deadline of a rich answer from the search's start "
                                   "(the request's timeout when smaller)")
    verify_reserve_s: float = Field(1.5, ge=0, description="Time a rich answer keeps from the LLM for its claim "
                                    "check (0.5–1.2 s measured)")
    rich_snippet_sources: int = Field(8, ge=1, le=50, description="A rich answer over a mode without passages "
                                      "(keyword) reads this many results' snippets")
    rich_context_chars: int = Field(4000, ge=500, description="Budget of the sources given to the LLM, in characters")
    rich_extractive_fallback: bool = Field(True, description="When no claim of the LLM's answer is supported, or "
                                           "its reply is no answer (its prompt written back, only citations of "
                                           "sources that do not exist), answer with the sources' own sentences "
                                           "closest to the question, each cited, checked the same way")
    # chosen on the dev set with the offline embedder as cosines (0.42 and 0.55: every answerable query's best
    # packed passage reached 0.449, 5 of the 7 unanswerable stayed below 0.391; a sentence copied from its source
    # scored at least 0.665, one checked against another query's sources above 0.55 in 2 of 63), now the
    # probabilities those cosines map to under the embedder's relevance calibration, so they hold for any model
    rich_abstain_below: float = Field(
        0.30, ge=0, le=1, description="Abstain without asking the LLM when no source passage's probability of "
        "relevance to the question reaches this (no abstention when semantic-svc has no calibration)")
    support_floor: float = Field(0.50, ge=0, le=1, description="A claim is supported when a window of the "
                                 "passages it cites reaches this probability (semantic-svc's calibration of "
                                 "/similarity) and holds the claim's terms")
