"""vector: the query against the vector index alone (seed 003): embed the query, search Qdrant, one result per
page with its best chunk as description and its cosine as `score`; nothing below the relevance floor.

Other sources than web have nothing in the index and come back empty. When the index cannot answer
(semantic-svc down, nothing crawled yet), the results are SearXNG's keyword results, and the warning says why.
"""

from __future__ import annotations

from agent import metrics
from agent.core.context import SearchContext
from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery
from agent.core.sources import DEFAULT_SOURCE
from agent.errors import Degraded
from agent.ranking.modes import keyword
from agent.ranking.pack import context_text, pack
from agent.retrieval.indexed import index_hits


async def run(query: SearchQuery, ctx: SearchContext) -> SearchOutcome:
    try:
        found = await index_hits(query, ctx, query.limit)
    except Degraded as e:
        metrics.degraded("index_unavailable")
        outcome = await keyword.run(query, ctx)
        return outcome.warned(f"the vector index could not answer ({e}): keyword results from SearXNG instead")
    settings = ctx.services.settings
    buckets = {s.type: [f.hit for f in found] if s.type == DEFAULT_SOURCE else [] for s in query.sources}
    warnings = []
    if others := [name for name in buckets if name != DEFAULT_SOURCE]:
        warnings.append(f"the vector index holds web pages only: {', '.join(others)} came back empty")
    if query.tbs or any(s.tbs for s in query.sources):
        warnings.append("the vector index keeps no dates: tbs was not applied")
    if not found:
        warnings.append(f"no indexed page reaches the relevance floor (VECTOR_FLOOR {settings.vector_floor})")
    packed = pack([f.passage for f in found], settings.pack_chars, settings.pack_per_url)
    details = {f.hit.url: f.detail() for f in found}
    return SearchOutcome(buckets, tuple(warnings), details, context=context_text(packed), packed=tuple(packed))

