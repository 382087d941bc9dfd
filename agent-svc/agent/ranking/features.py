"""The cheap page features the final order may combine, one column per feature over a mode's candidates.

- score: the mode's own score (its best passage, recency included)
- prior: SearXNG's rank as a prior, −log(rank)
- title: BM25 of the query against each page's title and the words of its URL path, which on documentation
  sites name the page's subject (`wal.html`, `git-rebase.html`)
- pass1: the first pass's snippet score (0 where a mode has none)
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from wisp_text.bm25 import bm25_scores

if TYPE_CHECKING:  # the fusion settings read FEATURES, and the pool reads them
    from agent.ranking.candidates import Candidate

FEATURES = ("score", "prior", "title", "pass1")
Columns = dict[str, list[float]]


def page_features(query: str, candidates: Sequence[Candidate], scores: Sequence[float],
                  preliminary: Sequence[float] | None) -> Columns:
    """Each feature's value for each candidate, in the candidates' order."""
    return {
        "score": list(scores),
        "prior": prior(candidates),
        "title": bm25_scores(query, [_title_words(c) for c in candidates]),
        "pass1": list(preliminary) if preliminary is not None else [0.0] * len(candidates),
    }


def prior(candidates: Sequence[Candidate]) -> list[float]:
    """SearXNG's rank as a feature: −log(rank), so the first places differ most."""
    return [-math.log(c.rank) for c in candidates]


def _title_words(candidate: Candidate) -> str:
    path = unquote(urlsplit(candidate.url).path)
    return f"{candidate.title} {re.sub(r'[/_.-]+', ' ', path)}"
