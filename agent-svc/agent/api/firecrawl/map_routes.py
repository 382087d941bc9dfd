"""HTTP routes of Firecrawl's map API (v2, and v1's request and answer): parse, map the site, shape the links."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from agent.api.bodies import read_request
from agent.api.firecrawl.map_wire import MapRequest, V1MapRequest, v1_body, v2_body
from agent.api.gate.admission import admit_costly
from agent.api.settings import request_settings
from agent.index.map.site_map import SiteMap, map_site

router = APIRouter()


@router.post("/v2/map")
async def map_v2(request: Request) -> JSONResponse:
    body = await read_request(request, MapRequest)
    await admit_costly(request)  # pages fetched and read in the worker pool, sitemaps, SearXNG: seconds
    services = request.app.state.services
    return await _answer(v2_body, await map_site(body.to_job(request_settings(request)), services.map_tools))


@router.post("/v1/map")
async def map_v1(request: Request) -> JSONResponse:
    body = await read_request(request, V1MapRequest)
    await admit_costly(request)
    services = request.app.state.services
    return await _answer(v1_body, await map_site(body.to_job(request_settings(request)), services.map_tools))


async def _answer(shaped: Callable[[SiteMap], dict[str, Any]], site_map: SiteMap) -> JSONResponse:
    """The map's JSON, made in a thread: 100,000 links take a part of a second to shape and encode."""
    return await asyncio.to_thread(lambda: JSONResponse(shaped(site_map)))
