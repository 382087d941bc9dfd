"""The models' measured speed, per kind of call: milliseconds per 1,000 characters and per text.

agent-svc sizes its batches to the time it has left from these figures, so they follow the machine as it is now
(a busy neighbour, a cold cache) rather than a benchmark of another day. Each kind's figure is an EWMA of model
calls, weighted by their work: a call moves it as much as its characters (or texts) are a share of the half-life.
So a one-query call's fixed overhead barely moves the per-character figure, which then tracks total time over
total characters of the recent calls, the cost a batch of passages will have.
"""

from __future__ import annotations

from dataclasses import replace

from semantic.kinds import SPEED_KINDS, Speed, SpeedKind

# about two of hybrid's shortlists (16 chunks of 1,200 and 12 snippets of 250 characters: 28 texts, 22,000
# characters): quick enough to follow a machine that became busy, slow enough that one odd call does not swing it
HALF_LIFE_CHARS = 44_000
HALF_LIFE_TEXTS = 56

UNMEASURED = Speed(0.0, 0.0, 0, "unmeasured")


class SpeedMeter:
    def __init__(self) -> None:
        self._speeds: dict[SpeedKind, Speed] = dict.fromkeys(SPEED_KINDS, UNMEASURED)

    def calibrate(self, kind: SpeedKind, ms: float, chars: int, texts: int) -> None:
        """Seed `kind` with a calibration batch, before any call is measured."""
        self._speeds[kind] = Speed(_per(ms, chars / 1000), _per(ms, texts), 0, "calibration")

    def observe(self, kind: SpeedKind, ms: float, chars: int, texts: int) -> None:
        """One model call's `ms` for `chars` characters in `texts` texts (or pairs) of this kind."""
        old = self._speeds[kind]
        per_kchar, per_text = _per(ms, chars / 1000), _per(ms, texts)
        if old.source != "unmeasured":
            per_kchar = _toward(old.ms_per_kchar, per_kchar, chars / HALF_LIFE_CHARS)
            per_text = _toward(old.ms_per_text, per_text, texts / HALF_LIFE_TEXTS)
        self._speeds[kind] = replace(old, ms_per_kchar=per_kchar, ms_per_text=per_text, calls=old.calls + 1,
                                     source="measured")

    def speed(self, kind: SpeedKind) -> Speed:
        return self._speeds[kind]

    def speeds(self) -> dict[SpeedKind, Speed]:
        return dict(self._speeds)


def _per(ms: float, amount: float) -> float:
    return ms / amount if amount else 0.0


def _toward(old: float, sample: float, half_lives: float) -> float:
    return old + (1 - 0.5**half_lives) * (sample - old)
