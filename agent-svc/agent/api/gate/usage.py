"""What each client has used since agent-svc started, for Firecrawl's team endpoints (team_routes.py).

A client is what the limits count (admission.py): an API key, or the caller's address when keyless. Wisp has no
plan and charges nothing; it counts one credit per request that started work (a POST, MCP's excepted) and
succeeded, and the requests each client has in flight. The counts here are in-process and start at zero; with
REDIS_URL the credits are counted in Redis for every replica (usage_redis.py), behind the same `Meter` calls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from starlette.datastructures import State
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.api.gate.admission import CLIENT, KEY_CLIENT, caller, starts_work


@dataclass
class ClientUsage:
    credits: int = 0
    in_flight: int = 0
    last_success: float | None = None


@dataclass(frozen=True)
class Counted:
    """What a client has used over the period that began at `started` (both times in epoch seconds)."""

    started: float
    credits: int
    last_success: float | None


class Meter(Protocol):
    """What the Metering middleware counts and the team routes report."""

    def began(self, client: str) -> None: ...

    def ended(self, client: str, credited: bool) -> None: ...

    def in_flight(self, client: str) -> int:
        """`client`'s requests in flight on this replica."""

    async def counted(self, client: str) -> Counted:
        """`client`'s credits and last success, and when the period they cover began."""


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


class Metering:
    """Pure ASGI middleware, inside the key gate (so refused requests are not counted): counts each HTTP request
    in flight for its client, and credits the client once a request that starts work is answered below 400. It
    counts on the `Meter` at `state.usage`, which the lifespan replaces with the replicas' own on REDIS_URL."""

    def __init__(self, app: ASGIApp, state: State) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        usage: Meter = self.state.usage
        usage.began(client)
        try:
            await self.app(scope, receive, sent)
        finally:
            usage.ended(client, starts_work(scope) and status < 400)


def client_of(scope: Scope) -> str:
    """The client the gate named, or the caller's address where no gate runs (keyless and unlimited)."""
    return scope.get(CLIENT) or caller(scope)


def owner_of(scope: Scope) -> str | None:
    """Whose the jobs and kept scrapes a request makes are: its API key's; None when keys are off, where they are
    everyone's, as on a keyless Firecrawl (an address is no identity: one client polls from several)."""
    client = client_of(scope)
    return client if client.startswith(KEY_CLIENT) else None
