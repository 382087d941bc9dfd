"""Background jobs that a client starts and then polls by id (extractions, research): each runs in the background
and is forgotten its kind's TTL after it started. A kind (`Kind`) names itself in its errors and says how its
results read; memory.py keeps any kind's jobs in this process."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agent.errors import WispError

log = logging.getLogger(__name__)

PROCESSING, COMPLETED, FAILED = "processing", "completed", "failed"
J = TypeVar("J")
R = TypeVar("R")
# a job's id, the job, and whether it was told to stop (a cancel): a job that can stop early ends with what it has
Runner = Callable[[str, J, Callable[[], bool]], Awaitable[R]]


@dataclass(frozen=True)
class Record(Generic[J, R]):
    id: str
    job: J
    owner: str | None  # the API key that started it; None when keys are off (everyone's)
    expires: float  # time.time() when it is forgotten
    status: str = PROCESSING
    result: R | None = None
    cancelled: bool = False  # told to stop: it ends with what it has
    created: float = 0.0  # time.time() when it started (0: a Redis record kept before starts were recorded)


@dataclass(frozen=True)
class Kind(Generic[R]):
    """What a kind of job says of itself: its name in messages, the prefix of its settings, the error of a full
    store, and how its results read."""

    noun: str  # "extraction": "3 extractions are unfinished"
    setting: str  # "EXTRACT": EXTRACT_MAX_JOBS, EXTRACT_MAX_JOBS_PER_KEY
    not_found: str  # "Extract job not found", as Firecrawl words it
    too_many: type[WispError]
    failed: Callable[[R], bool]  # whether a result is a failure
    crashed: Callable[[str], R]  # the failed result of a job that met a bug, from what the client is told
    group_of: Callable[[Any], str] = lambda job: ""  # the group a job joins (a research thread); "" for none

    def too_many_of_yours(self, bound: int) -> WispError:
        return self.too_many(f"{bound} of your {self.noun}s are unfinished ({self.setting}_MAX_JOBS_PER_KEY): retry "
                             "when one has finished")

    def too_many_in_all(self, bound: int) -> WispError:
        return self.too_many(f"{bound} {self.noun}s are unfinished ({self.setting}_MAX_JOBS): retry when one has "
                             "finished")


@dataclass(frozen=True)
class Codec(Generic[J, R]):
    """How a kind's jobs and results are kept outside the process (Redis, SQLite), as JSON objects."""

    job_json: Callable[[J], dict[str, Any]]
    job_of: Callable[[dict[str, Any]], J]
    result_json: Callable[[R], dict[str, Any]]
    result_of: Callable[[dict[str, Any]], R]


def crashed(kind: Kind[R], job_id: str, error: Exception) -> R:
    """The result of a job that met a bug: logged, and failed with a message that points at the log."""
    log.error("%s job %s raised", kind.noun, job_id, exc_info=error)
    return kind.crashed(f"Internal error ({type(error).__name__}); the details are in agent-svc's log")
