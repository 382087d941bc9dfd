"""The engine pool's health from SearXNG's recent answers, on a clock the test moves."""

from agent.upstream.engine_health import RECENT_ANSWERS, EngineHealth


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_nothing_recorded_reports_no_engines() -> None:
    report = EngineHealth(600).report()
    assert report == {"window_s": 600, "answers": 0, "answering": [], "unresponsive": [], "engines": {},
                      "median_engines_answering": None}


def test_engines_that_answered_and_those_that_only_failed() -> None:
    health = EngineHealth(600)
    health.record({"duckduckgo", "startpage"}, [("brave", "too many requests")])
    health.record({"duckduckgo"}, [("brave", "CAPTCHA"), ("startpage", "timeout")])
    health.record({"duckduckgo", "mwmbl", "startpage"}, [])
    report = health.report()
    assert report["answers"] == 3
    assert report["answering"] == ["duckduckgo", "mwmbl", "startpage"]
    assert report["unresponsive"] == ["brave"]  # startpage failed once but answered too
    assert report["engines"]["brave"] == {"answered": 0, "unresponsive": 2, "last_reason": "CAPTCHA"}
    assert report["engines"]["startpage"] == {"answered": 2, "unresponsive": 1, "last_reason": "timeout"}
    assert report["median_engines_answering"] == 2


def test_answers_older_than_the_window_are_forgotten() -> None:
    clock = Clock()
    health = EngineHealth(60, clock)
    health.record({"old"}, [("gone", "timeout")])
    clock.now += 61
    health.record({"new"}, [])
    report = health.report()
    assert (report["answers"], report["answering"], report["unresponsive"]) == (1, ["new"], [])


def test_memory_stays_bounded() -> None:
    health = EngineHealth(600)
    for n in range(RECENT_ANSWERS + 50):
        health.record({f"engine-{n}"}, [])
    assert health.report()["answers"] == RECENT_ANSWERS
