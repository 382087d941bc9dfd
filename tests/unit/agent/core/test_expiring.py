"""The in-memory map of values kept until they expire: lookups, order, and forgetting at the right time."""

from dataclasses import dataclass

from agent.core.expiring import ExpiringMap


@dataclass(frozen=True)
class Value:
    expires: float
    text: str = ""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_found_until_its_time_has_passed_and_then_forgotten() -> None:
    clock = Clock()
    kept: ExpiringMap[Value] = ExpiringMap(clock)
    kept.put("a", Value(10, "first"))
    kept.put("b", Value(20, "second"))
    clock.now = 9.9
    assert kept.get("a") == Value(10, "first") and kept.get("nope") is None
    clock.now = 10
    assert kept.get("a") is None and len(kept) == 2  # gone, but forgotten only by expire, which returns it
    assert kept.expire() == [Value(10, "first")] and kept.get("b") == Value(20, "second") and len(kept) == 1
    clock.now = 25
    assert kept.expire() == [Value(20, "second")] and len(kept) == 0


def test_a_replaced_value_keeps_its_place_and_a_popped_one_goes() -> None:
    kept: ExpiringMap[Value] = ExpiringMap(Clock())
    for key, expires in (("a", 10), ("b", 20), ("c", 30)):
        kept.put(key, Value(expires))
    kept.put("a", Value(10, "done"))
    assert [key for key, _ in kept.items()] == ["a", "b", "c"] and kept.get("a").text == "done"
    assert kept.pop("b") == Value(20) and [key for key, _ in kept.items()] == ["a", "c"]
