"""Values kept in memory by id until their `expires` has passed: the recent scrapes and the extract jobs. Every
value of one map lives as long (one TTL), so the oldest expire first, and forgetting them looks at the oldest
alone, however many are kept."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar


class Expires(Protocol):
    @property
    def expires(self) -> float: ...  # on the map's clock


V = TypeVar("V", bound=Expires)


class ExpiringMap(Generic[V]):
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._values: OrderedDict[str, V] = OrderedDict()  # oldest first, so also soonest to expire

    def __len__(self) -> int:
        """How many values are held, the expired among them until `expire` forgets them."""
        return len(self._values)

    def put(self, key: str, value: V) -> None:
        """Keep `value` under `key`: a new key as the newest, a held one in its place (it must expire when the
        value it replaces did; `pop` it first to keep it longer)."""
        self._values[key] = value

    def get(self, key: str) -> V | None:
        """The value under `key`, unless it has expired (which only `expire` forgets, so that a caller counting
        what is held, bytes say, learns of every value that goes)."""
        value = self._values.get(key)
        return value if value is not None and value.expires > self._clock() else None

    def pop(self, key: str) -> V:
        return self._values.pop(key)

    def items(self) -> Iterator[tuple[str, V]]:
        """The values held and their keys, oldest first (expired ones included until `expire`)."""
        return iter(self._values.items())

    def expire(self) -> list[V]:
        """Forget the values whose time has passed; returns them."""
        now, gone = self._clock(), []
        while self._values and next(iter(self._values.values())).expires <= now:
            gone.append(self._values.popitem(last=False)[1])
        return gone
