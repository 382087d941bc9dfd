"""A research job's webhook events (Firecrawl's agent.started, agent.action, agent.completed, agent.failed,
agent.cancelled), delivered in order by one task beside the job, so that a slow receiver never slows the job;
the job's end waits at most FLUSH_S for the last ones. Once a delivery is given up (the receiver is down), the
job's further actions are not sent; its end still is."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from types import TracebackType
from typing import Any

from agent.core.research import CANCELLED, ResearchResult, Step
from agent.core.webhook import Webhook
from agent.pages.webhooks import WebhookSender

FLUSH_S = 30.0
MAX_QUEUED = 200  # events waiting for a slow receiver; beyond them actions are dropped, never the job's end


class JobEvents:
    def __init__(self, sender: WebhookSender, webhook: Webhook | None, job_id: str) -> None:
        self._sender, self._webhook, self._job_id = sender, webhook, job_id
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._failing = False

    async def __aenter__(self) -> JobEvents:
        if self._webhook is not None:
            self._task = asyncio.create_task(self._deliver())
        self.emit("started", [])
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        if self._task is None:
            return
        self._queue.put_nowait(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._task), FLUSH_S)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def step(self, step: Step) -> None:
        """An agent.action event: what the job did."""
        if self._queue.qsize() < MAX_QUEUED:
            self.emit("action", [{"action": step.kind, "detail": step.detail, "atSeconds": step.at_s}])

    def ended(self, result: ResearchResult, failed: bool, answer: Any) -> None:
        """agent.completed, agent.failed or agent.cancelled, with the answer (or what was found) and its credits."""
        event = "cancelled" if result.stop_reason == CANCELLED else "failed" if failed else "completed"
        self.emit(event, [{"creditsUsed": result.credits_used, "data": answer, "stopReason": result.stop_reason}],
                  error=(result.error or f"the job stopped early ({result.stop_reason})") if failed else None)

    def emit(self, event: str, data: list[dict[str, Any]], error: str | None = None) -> None:
        if self._webhook is None or not self._webhook.wants(event):
            return
        payload = {"success": error is None, "type": f"agent.{event}", "id": self._job_id,
                   "webhookId": str(uuid.uuid4()), "data": data, "metadata": self._webhook.metadata}
        self._queue.put_nowait(payload | ({"error": error} if error else {}))

    async def _deliver(self) -> None:
        assert self._webhook is not None
        while (payload := await self._queue.get()) is not None:
            if self._failing and payload["type"] == "agent.action":
                continue
            delivered = await self._sender.send(self._webhook.url, self._webhook.headers, payload)
            self._failing = self._failing or not delivered
