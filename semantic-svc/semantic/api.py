"""HTTP routes of semantic-svc. Exposes `app`; the model endpoints arrive with their issue."""

from __future__ import annotations

import logging

from fastapi import FastAPI

from semantic.config import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    logging.basicConfig(level=settings.log_level.upper())
    app = FastAPI(title="Wisp semantic-svc", summary="Embeddings, reranking and the vector index")

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


app = create_app()
