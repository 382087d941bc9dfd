"""A webhook as a job's request names it (Firecrawl's AgentWebhookConfig): where events go, the headers and
metadata each delivery carries, and which events it wants."""

from __future__ import annotations

from dataclasses import dataclass, field

AGENT_EVENTS = ("started", "action", "completed", "failed", "cancelled")


@dataclass(frozen=True)
class Webhook:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    events: tuple[str, ...] = AGENT_EVENTS

    def wants(self, event: str) -> bool:
        return event in self.events
