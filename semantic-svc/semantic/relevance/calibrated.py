"""Each scoring model's relevance calibration, fitted on the shipped pair set when the model loads.

The set (pairs.tsv, from the dev split's judgments over the offline web: `python -m wisp_eval relevance-set`)
is scored by the model in the role it serves, and `fit` maps its raw scores to probabilities. The result is
cached by model, role, prefixes and the set's content, so a restart pays nothing; any model that loads (the
compose file's, the GPU profile's, the offline one) goes through this same code.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from semantic.relevance.fit import FitQuality, Fitted, RelevanceMap, fit

log = logging.getLogger(__name__)

SHIPPED_PAIRS = Path(__file__).with_name("pairs.tsv")
_ESCAPE = re.compile(r"\\(\\|n)")  # relevance_set's escapes: a backslash, a newline
FIT_VERSION = 1  # bump when fit() changes what it would produce, so that caches refit
# (queries, passages) → one raw score per pair
ScorePairs = Callable[[list[str], list[str]], Sequence[float]]


@dataclass(frozen=True)
class Pairs:
    queries: tuple[str, ...]
    passages: tuple[str, ...]
    labels: tuple[int, ...]
    groups: tuple[str, ...]  # the query id of each pair
    version: str  # the file's content hash

    @classmethod
    def load(cls, path: Path = SHIPPED_PAIRS) -> Pairs:
        """The pairs of a calibration file: qid, label, kind, url, query, passage (tab-separated, `\\n` escaped)."""
        raw = path.read_bytes()
        rows = [line.split("\t") for line in raw.decode("utf-8").splitlines() if line and not line.startswith("#")]
        return cls(tuple(r[4] for r in rows), tuple(_unescaped(r[5]) for r in rows), tuple(int(r[1]) for r in rows),
                   tuple(r[0] for r in rows), hashlib.sha256(raw).hexdigest()[:12])


@dataclass(frozen=True)
class Calibrated:
    """One model's calibration in one role (embedder, similarity, reranker)."""

    role: str
    model: str
    set_version: str
    map: RelevanceMap
    quality: FitQuality
    seconds: float  # what fitting it took (0 from the cache)
    cached: bool

    def probabilities(self, scores: Sequence[float]) -> list[float]:
        return self.map.probabilities(scores)

    def warning(self) -> str | None:
        return Fitted(self.map, self.quality).warning(f"the {self.role} {self.model}")

    def describe(self) -> dict[str, Any]:
        return {"model": self.model, "set_version": self.set_version, "method": self.map.method,
                **asdict(self.quality), "seconds": self.seconds, "cached": self.cached}


def calibrated(role: str, model_key: str, model: str, score: ScorePairs, pairs: Pairs, cache: Path) -> Calibrated:
    """`model`'s calibration in `role`: from the cache when this model, role and set were fitted before, else
    scored and fitted now. `model_key` names everything that changes the model's scores (name, backend,
    prefixes)."""
    key = hashlib.sha256(f"{FIT_VERSION}|{role}|{model_key}|{pairs.version}".encode()).hexdigest()[:24]
    path = cache.expanduser() / f"{key}.json"
    if path.is_file():
        try:
            stored = json.loads(path.read_text())
            return Calibrated(role, model, pairs.version, _map(stored["map"]), FitQuality(**stored["quality"]),
                              0.0, True)
        except (ValueError, KeyError, TypeError):
            log.warning("relevance calibration cache %s is unreadable: fitting again", path)
    started = time.perf_counter()
    fitted = fit(score(list(pairs.queries), list(pairs.passages)), pairs.labels, pairs.groups)
    result = Calibrated(role, model, pairs.version, fitted.map, fitted.quality,
                        round(time.perf_counter() - started, 1), False)
    _store(path, result)
    log.info("relevance calibration of the %s %s: %s, Brier %.3f, ECE %.3f, AUC %.2f on %d pairs (%.1f s)", role,
             model, fitted.map.method, fitted.quality.brier, fitted.quality.ece, fitted.quality.auc,
             fitted.quality.pairs, result.seconds)
    return result


def cosine_pairs(encode: Callable[[list[str], str], np.ndarray]) -> ScorePairs:
    """An embedder's pair scores: each query's and each passage's vector (`encode(texts, kind)`, normalized
    rows), each text encoded once."""
    def score(queries: list[str], passages: list[str]) -> list[float]:
        distinct_queries, distinct_passages = list(dict.fromkeys(queries)), list(dict.fromkeys(passages))
        q = dict(zip(distinct_queries, encode(distinct_queries, "query"), strict=True))
        p = dict(zip(distinct_passages, encode(distinct_passages, "passage"), strict=True))
        return [float(q[a] @ p[b]) for a, b in zip(queries, passages, strict=True)]

    return score


def grouped_pairs(rank: Callable[[str, list[str]], Sequence[float]]) -> ScorePairs:
    """A reranker's pair scores, asked one query at a time with all of its passages, as agent-svc asks."""
    def score(queries: list[str], passages: list[str]) -> list[float]:
        scores = [0.0] * len(queries)
        for query in dict.fromkeys(queries):
            indices = [i for i, q in enumerate(queries) if q == query]
            for i, s in zip(indices, rank(query, [passages[i] for i in indices]), strict=True):
                scores[i] = float(s)
        return scores

    return score


def _map(stored: dict[str, Any]) -> RelevanceMap:
    return RelevanceMap(stored["method"], tuple((float(a), float(b)) for a, b in stored["points"]))


def _store(path: Path, calibration: Calibrated) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {"map": asdict(calibration.map), "quality": asdict(calibration.quality), "model": calibration.model,
                "role": calibration.role, "set_version": calibration.set_version}
        temporary = path.with_suffix(f".{os.getpid()}.tmp")  # replicas sharing the cache write apart
        temporary.write_text(json.dumps(body))
        temporary.replace(path)
    except OSError as e:  # a read-only cache costs a refit at the next start, nothing else
        log.warning("relevance calibration not cached at %s: %s", path, e)


def _unescaped(text: str) -> str:
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else "\\", text)
