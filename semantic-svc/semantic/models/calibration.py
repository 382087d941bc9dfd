"""How fast the loaded models are on this machine, timed once at start, and what that means for agent-svc.

One batch shaped like what agent-svc asks (hybrid's shortlist: 16 chunks of about 1,200 characters and 12 search
snippets of about 250, against a short query) is reranked, then embedded (by the similarity embedder too, when
SIMILARITY_MODEL gives /similarity one of its own). Those times seed the speed EWMAs and estimate agent-svc's
stages: hybrid's rerank of the shortlist, semantic mode's pass 2 (the same texts through /similarity's embedder),
one query embedding, and indexing throughput (the embedder's). A stage estimated over its share of agent-svc's
deadline gets a warning: the models still work, but ranked searches will score part of their shortlist or rank
by their first pass (BM25 and page features).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from semantic.models.embedders import Embedder
from semantic.models.rerankers import Reranker

SHORTLIST_CHUNKS, SHORTLIST_CHUNK_CHARS = 16, 1200
SHORTLIST_SNIPPETS, SNIPPET_CHARS = 12, 250
QUERY = "when does sqlite checkpoint the write-ahead log"
# web prose, so that the texts tokenize as pages do (tokens per character decide the cost, not the words)
_PROSE = (
    "A checkpoint moves the content of the write-ahead log back into the original database file.",
    "By default SQLite runs a checkpoint automatically when the log reaches 1000 pages.",
    "Interactive rebase lets you edit, reorder and squash commits before they are merged upstream.",
    "The configuration file sets the theme, the navigation and the plugins of a documentation site.",
    "Isolation keeps one connection from seeing the uncommitted changes of another connection.",
    "Release notes list every change, every fixed bug and every deprecated option of version 3.40.",
    "Cats sleep for twelve to sixteen hours a day, most of it in warm and quiet places.",
    "To install the package, run the installer with administrator rights and restart the service.",
    "The vacuum command rebuilds the database file, repacking it into a minimal amount of disk space.",
    "Requests that arrive while the queue is full are refused at once with status 503.",
)


@dataclass(frozen=True)
class Timed:
    model: str
    texts: int
    chars: int
    ms: float


@dataclass(frozen=True)
class Estimates:
    hybrid_rerank_ms: float  # /rerank of the shortlist
    semantic_pass2_ms: float  # the shortlist embedded
    query_embedding_ms: float
    indexing_chunks_per_s: float  # chunks of CHUNK_CHARS (the setting) embedded


@dataclass(frozen=True)
class Calibration:
    rerank: Timed
    embed: Timed
    similarity: Timed  # /similarity's embedder: `embed` when the embedder serves it
    estimates: Estimates
    deadline_s: float  # agent-svc's, PIPELINE_DEADLINE_S
    budget_s: float  # the share of it a ranking stage may take
    seconds: float  # the calibration's own time, warm-up included

    def warnings(self) -> list[str]:
        """One per stage estimated over its budget: which model, the estimate, the deadline."""
        stages = [("reranker", self.rerank.model, "hybrid's rerank", self.estimates.hybrid_rerank_ms),
                  ("embedder", self.similarity.model, "semantic mode's pass 2", self.estimates.semantic_pass2_ms)]
        return [f"the {role} {model} takes about {ms / 1000:.1f} s for {stage} of a {SHORTLIST_CHUNKS}-chunk, "
                f"{SHORTLIST_SNIPPETS}-snippet shortlist on this machine, more than the {self.budget_s:.1f} s it "
                f"may use of agent-svc's {self.deadline_s:.1f} s deadline (PIPELINE_DEADLINE_S x "
                "RANK_DEADLINE_SHARE): ranked searches will score part of their shortlist, or rank by their first pass"
                for role, model, stage, ms in stages if ms > self.budget_s * 1000]


def shortlist() -> list[str]:
    """Hybrid's shortlist as agent-svc sends it: chunks, then snippets."""
    return ([_prose(i, SHORTLIST_CHUNK_CHARS) for i in range(SHORTLIST_CHUNKS)]
            + [_prose(i, SNIPPET_CHARS) for i in range(SHORTLIST_SNIPPETS)])


def calibrate(embedder: Embedder, reranker: Reranker, chunk_chars: int, deadline_s: float, share: float,
              clock: Callable[[], float] = time.perf_counter, similarity: Embedder | None = None) -> Calibration:
    """Time the shortlist through the models (`similarity`: /similarity's embedder, if not `embedder`), on the
    calling thread, before anything else uses them."""
    texts = shortlist()
    started = clock()
    reranker.score(QUERY, texts[:1])  # the first calls pay one-time setup, which no later call does
    rerank = Timed(reranker.name, len(texts), sum(len(QUERY) + len(t) for t in texts),
                   _ms(clock, reranker.score, QUERY, texts))
    embed = _timed_embedding(embedder, texts, clock)
    pass2 = embed if similarity is None else _timed_embedding(similarity, texts, clock)
    query_ms = _ms(clock, embedder.encode, [QUERY], "query")
    estimates = Estimates(rerank.ms, pass2.ms, query_ms,
                          round(1000 / max(embed.ms / embed.chars * chunk_chars, 1e-3), 1))
    return Calibration(rerank, embed, pass2, estimates, deadline_s, deadline_s * share, round(clock() - started, 3))


def _timed_embedding(embedder: Embedder, texts: list[str], clock: Callable[[], float]) -> Timed:
    embedder.encode([QUERY], "query")  # its first call pays one-time setup, which no later call does
    return Timed(embedder.name, len(texts), sum(map(len, texts)), _ms(clock, embedder.encode, texts, "passage"))


def _ms(clock: Callable[[], float], call: Callable[..., Any], *args: Any) -> float:
    started = clock()
    call(*args)
    return round((clock() - started) * 1000, 1)


def _prose(start: int, chars: int) -> str:
    """About `chars` characters of prose, cut at a word, starting from the `start`th sentence; no two alike."""
    sentences = itertools.islice(itertools.cycle(_PROSE), start, None)
    text = f"Part {start + 1}."
    while len(text) < chars:
        text = f"{text} {next(sentences)}"
    return text[:chars].rsplit(" ", 1)[0]
