"""The search stage's settings: the defaults of a request that names no mode or type, and its bounds."""

from __future__ import annotations

from pydantic import Field

from agent.core.section import Section


class SearchSettings(Section):
    """One search: what a request that names nothing gets, and what any request may ask."""

    default_retrieval_mode: str = Field(
        "keyword", description="Mode of requests that name none: the Firecrawl SDKs cannot send retrieval_mode"
    )
    default_search_type: str = Field(
        "fast", description="Search type of requests that name none (rich: every answer cited, for the SDKs)")
    max_query_chars: int = Field(2000, ge=10, description="Longest search query, in characters (SearXNG's engines "
                                 "take about this much)")
    max_domains: int = Field(1000, ge=1, description="Most includeDomains or excludeDomains of one search")
    index_organic: bool = Field(
        False, description="Also index the pages the ranked modes fetch (seed 001 kept it off: it leaks the queries "
        "an evaluation asks into the index that answers them)")
