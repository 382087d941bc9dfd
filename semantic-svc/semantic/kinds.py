"""The plain types and names that semantic-svc's layers share; it imports none of them, so any may import it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

# INDEX_LEXICAL: which lexical (sparse) side a new collection of the index gets
LexicalSetting = Literal["auto", "model", "bm25", "off"]
# what a collection's lexical side holds: the embedder's trained head (BGE-M3), or BM25 term weights
Lexical = Literal["model", "bm25"]

# the model lane's (batching.py): a job is interactive (a search waits for it) or background (a crawl's page)
Priority = Literal["interactive", "background"]
PRIORITIES: tuple[Priority, ...] = get_args(Priority)  # the first one waiting is served first
# why a job got no model time: its caller gave up (skipped), it waited MAX_WAIT_S without starting (expired), or
# MAX_PENDING jobs were waiting when it came (refused, a 503 at once)
DropReason = Literal["skipped", "expired", "refused"]

# the models' measured speed (lane/speed.py), by kind of call. rerank: query-passage pairs scored (a
# cross-encoder's pairs, or the offline reranker's embeddings); embed: texts encoded for /embed, /similarity and
# the index
SpeedKind = Literal["rerank", "embed"]
SPEED_KINDS: tuple[SpeedKind, ...] = get_args(SpeedKind)
SpeedSource = Literal["unmeasured", "calibration", "measured"]


@dataclass(frozen=True)
class BatchRecord:
    """One model call of the lane, as /stats lists it and metrics.py observes it."""

    key: str
    jobs: int
    items: int
    chars: int
    ms: float


@dataclass(frozen=True)
class Depth:
    jobs: int
    items: int


@dataclass(frozen=True)
class LaneStats:
    pending_jobs: int
    pending_items: int
    waiting: dict[Priority, Depth]  # pending_jobs and pending_items by priority
    batches: int  # model calls since start
    jobs: int  # job slices those calls computed
    items: int
    skipped_jobs: int  # dropped because their caller gave up
    expired_jobs: int  # refused after waiting max_wait_s
    recent: list[BatchRecord]


@dataclass(frozen=True)
class Speed:
    """One kind's speed, as /models, /rerank and /similarity answer it and metrics.py serves it."""

    ms_per_kchar: float
    ms_per_text: float
    calls: int  # model calls measured since start, the calibration's not counted
    source: SpeedSource
