"""Firecrawl's sources, categories, tbs and domain filters → one SearXNG request plan per source.

The single translation table of the service (seed 003, plus Firecrawl's extras). Each source becomes
its own SearXNG request, so every result lands in the bucket that asked for it, and each plan carries
the post-filters for what SearXNG engines may ignore (`site:`, `filetype:`, exact dates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from agent.core.hits import EngineCatalog
from agent.core.query import SearchQuery, SourceRequest
from agent.core.sources import DEFAULT_SOURCE, SOURCES, UNSERVED_SOURCES, source
from agent.errors import BadRequest
from agent.retrieval.tbs import TimeFilter, parse_tbs

CATEGORY_TO_SEARXNG = {"research": "science", "github": "it", "developer": "it"}
# Firecrawl's own aliases of its developer category
CATEGORY_ALIASES = {
    alias: "developer" for alias in ("repo", "code", "docs", "devdex", "repo_search", "developer_index")
}
QUERY_REWRITES = {"pdf": "filetype:pdf"}
RESEARCH_HOSTS = (
    "arxiv.org", "scholar.google.com", "pubmed.ncbi.nlm.nih.gov", "researchgate.net", "nature.com", "science.org",
    "ieee.org", "acm.org", "springer.com", "wiley.com", "sciencedirect.com", "plos.org", "biorxiv.org", "medrxiv.org",
)
# site: operators one query carries: engines fail or time out on a longer query (300 made SearXNG time out)
MAX_SITE_OPERATORS = 20
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*$")


@dataclass(frozen=True)
class ResultFilter:
    """What SearXNG's engines may have ignored, checked again on each result."""

    include_hosts: tuple[str, ...] = ()
    exclude_hosts: tuple[str, ...] = ()
    pdf_only: bool = False
    valid_urls_only: bool = False
    time: TimeFilter = field(default_factory=TimeFilter)

    def admits(self, url: str, published: datetime | None) -> bool:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if self.valid_urls_only and (parts.scheme not in ("http", "https") or not host):
            return False
        if self.include_hosts and not any(_on_host(host, d) for d in self.include_hosts):
            return False
        if any(_on_host(host, d) for d in self.exclude_hosts):
            return False
        if self.pdf_only and not parts.path.lower().endswith(".pdf"):
            return False
        return self.time.admits(published)


@dataclass(frozen=True)
class SourcePlan:
    """How to ask SearXNG for one source's results; `skip_reason` is set when it cannot be asked at all."""

    source: str
    params: dict[str, str]
    filter: ResultFilter
    skip_reason: str | None = None


def normalize_domains(domains: list[str], field_name: str) -> list[str]:
    """Lowercase and trim hostnames; reject anything that is not a bare hostname."""
    normalized = [d.strip().lower().rstrip(".") for d in domains if d.strip()]
    bad = [d for d in normalized if not _HOSTNAME.match(d)]
    if bad:
        raise BadRequest(f"{field_name} takes bare hostnames such as example.com; not hostnames: {bad}")
    return normalized


def searxng_categories(name: str, categories: list[str]) -> list[str]:
    """The SearXNG categories that serve one Firecrawl source; categories narrow only the web source."""
    served = source(name)
    if not served.takes_categories:
        return [served.searxng_category]
    mapped = []
    for category in categories:
        category = CATEGORY_ALIASES.get(category, category)
        if category in QUERY_REWRITES:
            continue
        target = CATEGORY_TO_SEARXNG.get(category, category)  # unknown values pass through
        if target not in mapped:
            mapped.append(target)
    return mapped or [served.searxng_category]


def needs_catalog(query: SearchQuery) -> bool:
    """Whether planning must know the instance's engines: to route an engine override or vet a category."""
    known = {*SOURCES, *UNSERVED_SOURCES, *CATEGORY_TO_SEARXNG, *CATEGORY_ALIASES, *QUERY_REWRITES}
    unknown = {s.type for s in query.sources} | set(query.categories)
    return bool(query.engines) or not unknown <= known


def plan_sources(query: SearchQuery, catalog: EngineCatalog | None = None, now: datetime | None = None
                 ) -> tuple[list[SourcePlan], list[str]]:
    """One SearXNG request plan per requested source, plus warnings about the translation itself."""
    warnings = _unknown_category_warnings(query, catalog) + _site_operator_warnings(query)
    if query.engines:
        _check_engines(query.engines, catalog)
    plans = [_plan(query, request, catalog, now) for request in query.sources]
    return plans, warnings


def language(lang: str | None, country: str | None) -> str | None:
    """SearXNG has no country, so `lang` and `country` become a regional language such as en-US."""
    if not lang:
        return None
    if country and "-" not in lang and len(country) == 2:
        return f"{lang.lower()}-{country.upper()}"
    return lang


def category_label(url: str, requested: list[str]) -> str | None:
    """Firecrawl's `category` on a result: github for GitHub hosts, research hosts, pdf when asked for."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if _on_host(host, "github.com"):
        return "github"
    if not _RESEARCH.isdisjoint(_domains_of(host)):
        return "research"
    if "pdf" in requested and parts.path.lower().endswith(".pdf"):
        return "pdf"
    return None


def _plan(query: SearchQuery, request: SourceRequest, catalog: EngineCatalog | None, now: datetime | None
          ) -> SourcePlan:
    if unserved := UNSERVED_SOURCES.get(request.type):
        return SourcePlan(request.type, {}, ResultFilter(), unserved)
    asked = source(request.type)
    categories = searxng_categories(request.type, query.categories)
    time_filter = parse_tbs(request.tbs or query.tbs, now) if asked.dated else TimeFilter()
    pdf_only = asked.shape == "web" and "pdf" in query.categories
    params = {"q": _rewritten_query(query, pdf_only), "format": "json"}
    if query.engines:
        engines = _engines_for(request.type, categories, query, catalog)
        if not engines:
            return SourcePlan(request.type, {}, ResultFilter(), f"none of the requested engines serve {request.type}")
        params["engines"] = ",".join(engines)
    else:
        params["categories"] = ",".join(categories)
    lang = language(request.lang or query.lang, request.country or query.country)
    if lang and asked.localized:
        params["language"] = lang
    if time_filter.time_range:
        params["time_range"] = time_filter.time_range
    if query.safe is not None:
        params["safesearch"] = "2" if query.safe else "0"
    result_filter = ResultFilter(
        tuple(query.include_domains), tuple(query.exclude_domains), pdf_only, query.ignore_invalid_urls, time_filter
    )
    return SourcePlan(request.type, params, result_filter)


def _rewritten_query(query: SearchQuery, pdf_only: bool) -> str:
    parts = [query.query.strip()]
    if pdf_only:
        parts.append(QUERY_REWRITES["pdf"])
    if query.include_domains:
        # bare, not parenthesized: some engines don't parse "(site:…)"
        parts.append(" OR ".join(f"site:{d}" for d in query.include_domains[:MAX_SITE_OPERATORS]))
    parts += [f"-site:{d}" for d in query.exclude_domains[:MAX_SITE_OPERATORS]]
    return " ".join(parts)


def _engines_for(name: str, categories: list[str], query: SearchQuery, catalog: EngineCatalog | None
                 ) -> list[str]:
    """Route each requested engine to the sources whose categories it serves; the rest go to web."""
    if catalog is None:
        return list(query.engines) if name == DEFAULT_SOURCE else []
    served = {c for s in query.sources for c in searxng_categories(s.type, query.categories)}
    chosen = []
    for engine in query.engines:
        engine_categories = catalog.engines[engine]
        if engine_categories & set(categories) or (name == DEFAULT_SOURCE and not engine_categories & served):
            chosen.append(engine)
    return chosen


def _check_engines(engines: list[str], catalog: EngineCatalog | None) -> None:
    if catalog is None:
        return
    unknown = [e for e in engines if e not in catalog.engines]
    if unknown:
        raise BadRequest(
            f"Unknown SearXNG engine(s) {unknown}; this instance has: {', '.join(sorted(catalog.engines))}"
        )


def _unknown_category_warnings(query: SearchQuery, catalog: EngineCatalog | None) -> list[str]:
    if catalog is None:
        return []
    wanted = {c for s in query.sources if s.type not in UNSERVED_SOURCES
              for c in searxng_categories(s.type, query.categories)}
    missing = sorted(wanted - catalog.categories)
    if not missing:
        return []
    return [f"SearXNG has no category {', '.join(missing)}; it searched its default engines instead"]


def _site_operator_warnings(query: SearchQuery) -> list[str]:
    warnings = []
    for name, domains in (("includeDomains", query.include_domains), ("excludeDomains", query.exclude_domains)):
        if len(domains) > MAX_SITE_OPERATORS:
            warnings.append(f"{name}: SearXNG was sent the first {MAX_SITE_OPERATORS} of {len(domains)} as site: "
                            f"operators (its engines take no more); results are filtered against all {len(domains)}")
    return warnings


def _on_host(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


_RESEARCH = frozenset(RESEARCH_HOSTS)


def _domains_of(host: str) -> list[str]:
    """The host and every name after one of its dots: the domains `_on_host` would match it to, looked up in a
    set instead of one call per research host for every result."""
    return [host, *(host[i + 1:] for i, c in enumerate(host) if c == ".")]
