"""What semantic-svc's models cost, read once when agent-svc starts: logged, with semantic-svc's warning when
they cannot meet this deadline, so that an operator sees it before the searches degrade."""

from __future__ import annotations

import asyncio
import logging

from agent.upstream.semantic import SemanticClient, SemanticUnavailable

log = logging.getLogger(__name__)
TRIES = 24  # semantic-svc may still be loading its models when agent-svc starts
RETRY_S = 5.0


async def log_model_costs(semantic: SemanticClient, retry_s: float = RETRY_S) -> None:
    """Ask semantic-svc's /models until it answers (TRIES at most), then log its speeds and warnings."""
    for _ in range(TRIES):
        try:
            models = await semantic.models()
        except SemanticUnavailable:
            await asyncio.sleep(retry_s)
            continue
        described = {key: models.get(key) for key in ("embedder", "similarity", "reranker", "speed")}
        log.info("semantic-svc's models: %s", described)
        for warning in models.get("warnings") or ():
            log.warning("semantic-svc: %s", warning)
        return
    log.warning("semantic-svc did not answer /models within %.0f s of start", TRIES * retry_s)
