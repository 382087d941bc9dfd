"""The per-client counts of this process: they start at zero when it starts (one replica)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from agent.state.usage import Counted


@dataclass
class ClientUsage:
    credits: int = 0
    in_flight: int = 0
    last_success: float | None = None


class Usage:
    """The per-client counts; the clients kept are those seen since start (bounded by `max_clients`: past it the
    least recently counted client with nothing in flight is forgotten)."""

    def __init__(self, max_clients: int = 10_000) -> None:
        self.started = time.time()
        self.max_clients = max_clients
        self._clients: dict[str, ClientUsage] = {}

    def of(self, client: str) -> ClientUsage:
        """`client`'s counts (zero when it has used nothing)."""
        return self._clients.get(client) or ClientUsage()

    def in_flight(self, client: str) -> int:
        return self.of(client).in_flight

    async def counted(self, client: str) -> Counted:
        usage = self.of(client)
        return Counted(self.started, usage.credits, usage.last_success)

    def began(self, client: str) -> None:
        usage = self._clients.pop(client, None) or ClientUsage()
        self._clients[client] = usage  # most recent last
        usage.in_flight += 1
        if len(self._clients) > self.max_clients:
            self._forget_one()

    def ended(self, client: str, credited: bool) -> None:
        usage = self._clients.get(client)
        if usage is None:
            return
        usage.in_flight -= 1
        if credited:
            usage.credits += 1
            usage.last_success = time.time()

    def _forget_one(self) -> None:
        idle = next((c for c, u in self._clients.items() if not u.in_flight), None)
        if idle is not None:
            del self._clients[idle]
