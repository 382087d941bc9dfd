"""What each client has used since agent-svc started, for Firecrawl's team endpoints (api/firecrawl/team_routes.py).

A client is what the limits count (admission.py): an API key, or the caller's address when keyless. Wisp has no
plan and charges nothing; it counts one credit per request that started work (a POST, MCP's excepted) and
succeeded, and the requests each client has in flight. The counts are kept by state/usage/ (in the process, or the
credits in Redis for every replica with REDIS_URL), behind the same `Meter` calls; this is the middleware that
counts, and who a request's client and owner are.
"""

from __future__ import annotations

from starlette.datastructures import State
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.api.gate.admission import CLIENT, KEY_CLIENT, caller, starts_work
from agent.state.usage import Meter


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
