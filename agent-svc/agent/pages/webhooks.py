"""Webhook deliveries: a job's events POSTed as JSON to the URL its caller named, through the same SSRF guard as
page fetches (the host resolved and checked, the connection pinned to the checked address, no redirects
followed), signed with HMAC-SHA256 when a secret is set (Firecrawl's X-Firecrawl-Signature: sha256=<hex>).

A delivery is retried twice on a failure that may pass (a connection error, a timeout, a 5xx or 429), then given up
with a log line: a receiver that is down never holds a job up for more than its bounded attempts."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from typing import Any

import httpx

from agent.pages.fetch import Pinned
from agent.pages.ssrf import Allowlist, Blocked, check_url

log = logging.getLogger(__name__)

RETRY_DELAYS_S = (1.0, 4.0)
SIGNATURE_HEADER = "X-Firecrawl-Signature"


class WebhookSender:
    def __init__(self, http: httpx.AsyncClient, allow: Allowlist, secret: str, timeout_s: float) -> None:
        self._http, self._allow, self._secret, self._timeout_s = http, allow, secret, timeout_s

    async def check(self, url: str) -> None:
        """Blocked (with the reason) unless `url` is http(s) and every address of its host may be reached."""
        await check_url(url, self._allow)

    async def send(self, url: str, headers: dict[str, str], payload: dict[str, Any]) -> bool:
        """POST `payload` to `url`; whether the receiver took it (a 2xx). Never raises for what the receiver did."""
        body = json.dumps(payload, separators=(",", ":")).encode()
        sent = {"Content-Type": "application/json", **headers}
        if self._secret:
            digest = hmac.new(self._secret.encode(), body, hashlib.sha256).hexdigest()
            sent[SIGNATURE_HEADER] = f"sha256={digest}"
        for delay in (0.0, *RETRY_DELAYS_S):
            await asyncio.sleep(delay)
            outcome = await self._attempt(url, sent, body)
            if outcome is None:
                return True
            if outcome == "final":
                break
        log.warning("webhook delivery of %s to %s given up", payload.get("type"), url)
        return False

    async def _attempt(self, url: str, headers: dict[str, str], body: bytes) -> str | None:
        """None: delivered; "final": a failure that a retry would meet again; "retry": one that may pass."""
        try:
            target = Pinned.of(url, await check_url(url, self._allow))  # checked again: DNS may have changed
            response = await self._http.post(target.url, content=body, extensions=target.extensions,
                                             headers={**headers, "Host": target.host}, timeout=self._timeout_s)
        except Blocked as e:
            log.warning("webhook to %s blocked: %s", url, e)
            return "final"
        except httpx.HTTPError as e:
            log.info("webhook to %s failed: %s", url, type(e).__name__)
            return "retry"
        if response.is_success:
            return None
        return "retry" if response.status_code >= 500 or response.status_code == 429 else "final"
