from datetime import UTC, datetime

import pytest

from agent.core.hits import EngineCatalog
from agent.core.query import SearchQuery, SourceRequest
from agent.errors import BadRequest
from agent.retrieval.translation import (
    ResultFilter,
    category_label,
    language,
    needs_catalog,
    normalize_domains,
    plan_sources,
    searxng_categories,
)

NOW = datetime(2026, 12, 2, tzinfo=UTC)
CATALOG = EngineCatalog(
    {"duckduckgo": frozenset({"general"}), "bing news": frozenset({"news"}), "github": frozenset({"it"}),
     "bing images": frozenset({"images"}), "stackoverflow": frozenset({"it", "q&a"})},
    frozenset({"general", "news", "images", "it", "science", "q&a"}),
)


def query(**fields) -> SearchQuery:
    return SearchQuery(**{"query": "q", "limit": 5, **fields})


def sources(*names: str) -> list[SourceRequest]:
    return [SourceRequest(n) for n in names]


@pytest.mark.parametrize(
    ("source", "categories", "expected"),
    [
        ("web", [], ["general"]),
        ("news", [], ["news"]),
        ("images", [], ["images"]),
        ("web", ["research"], ["science"]),
        ("web", ["github"], ["it"]),
        ("web", ["developer"], ["it"]),
        ("web", ["code"], ["it"]),  # Firecrawl's alias of developer
        ("web", ["github", "research"], ["it", "science"]),
        ("web", ["pdf"], ["general"]),  # pdf is a query rewrite, not a category
        ("web", ["videos"], ["videos"]),  # unknown values pass through
        ("news", ["research"], ["news"]),  # categories narrow the web source only
        ("videos", [], ["videos"]),
    ],
)
def test_translation_table(source, categories, expected) -> None:
    assert searxng_categories(source, categories) == expected


def test_one_plan_per_source_with_its_parameters() -> None:
    plans, warnings = plan_sources(query(sources=sources("web", "news", "images"), tbs="qdr:d", lang="de",
                                         country="at", safe=True), now=NOW)
    web, news, images = plans
    assert warnings == []
    assert web.params == {"q": "q", "format": "json", "categories": "general", "language": "de-AT",
                          "time_range": "day", "safesearch": "2"}
    assert news.params["categories"] == "news" and news.params["time_range"] == "day"
    # images inherit neither the time filter nor the language (Firecrawl's string form of images)
    assert images.params == {"q": "q", "format": "json", "categories": "images", "safesearch": "2"}


def test_source_objects_override_the_request() -> None:
    [plan], _ = plan_sources(query(sources=[SourceRequest("web", tbs="qdr:w", lang="fr")], tbs="qdr:y"), now=NOW)
    assert plan.params["time_range"] == "week" and plan.params["language"] == "fr"


def test_domains_become_operators_and_filters() -> None:
    [plan], _ = plan_sources(query(include_domains=["a.org", "b.org"]), now=NOW)
    assert plan.params["q"] == "q site:a.org OR site:b.org"
    assert plan.filter.admits("https://docs.a.org/x", None) and not plan.filter.admits("https://c.org/x", None)
    [plan], _ = plan_sources(query(exclude_domains=["a.org"]), now=NOW)
    assert plan.params["q"] == "q -site:a.org"
    assert not plan.filter.admits("https://a.org/x", None) and plan.filter.admits("https://ba.org/x", None)


def test_pdf_category_rewrites_and_filters_the_web_source_only() -> None:
    web, news = plan_sources(query(sources=sources("web", "news"), categories=["pdf"]), now=NOW)[0]
    assert web.params["q"] == "q filetype:pdf" and news.params["q"] == "q"
    assert web.filter.admits("https://x.org/a.PDF", None) and not web.filter.admits("https://x.org/a.html", None)
    assert news.filter.admits("https://x.org/a.html", None)


def test_engine_override_routes_engines_to_the_sources_they_serve() -> None:
    plans, _ = plan_sources(query(sources=sources("web", "news", "images"),
                                  engines=["duckduckgo", "bing news", "stackoverflow"]), CATALOG, NOW)
    web, news, images = plans
    assert web.params["engines"] == "duckduckgo,stackoverflow" and "categories" not in web.params
    assert news.params["engines"] == "bing news"
    assert images.skip_reason == "none of the requested engines serve images"


def test_engine_override_with_a_category_sends_engines_of_that_category() -> None:
    [web], _ = plan_sources(query(categories=["github"], engines=["github", "duckduckgo"]), CATALOG, NOW)
    assert web.params["engines"] == "github,duckduckgo"


def test_unknown_engines_are_refused_with_the_available_ones() -> None:
    with pytest.raises(BadRequest, match=r"Unknown SearXNG engine\(s\) \['google'\].*bing images"):
        plan_sources(query(engines=["google"]), CATALOG, NOW)


def test_categories_searxng_lacks_are_reported() -> None:
    _, warnings = plan_sources(query(categories=["videos"]), CATALOG, NOW)
    assert warnings == ["SearXNG has no category videos; it searched its default engines instead"]


def test_firecrawls_provider_catalogue_is_an_empty_bucket_not_a_second_web_search() -> None:
    # what the Firecrawl MCP server sends once it has a key
    web, alexandria = plan_sources(query(sources=sources("web", "alexandria")), CATALOG, NOW)[0]
    assert web.params["categories"] == "general" and not web.skip_reason
    assert alexandria.params == {} and "Alexandria" in alexandria.skip_reason
    assert plan_sources(query(sources=sources("alexandria")), CATALOG, NOW)[1] == []  # no "no category" warning


def test_catalog_is_needed_only_for_overrides_and_unknown_names() -> None:
    assert not needs_catalog(query(sources=sources("web", "news", "alexandria"), categories=["github", "pdf", "code"]))
    assert needs_catalog(query(engines=["x"]))
    assert needs_catalog(query(categories=["videos"]))
    assert needs_catalog(query(sources=sources("videos")))


@pytest.mark.parametrize(
    ("lang", "country", "expected"),
    [("en", "us", "en-US"), ("de", None, "de"), ("zh-CN", "us", "zh-CN"), (None, "us", None),
     ("en", "United States", "en")],
)
def test_language(lang, country, expected) -> None:
    assert language(lang, country) == expected


@pytest.mark.parametrize(
    ("url", "requested", "label"),
    [
        ("https://github.com/a/b", [], "github"),
        ("https://gist.github.com/a", [], "github"),
        ("https://arxiv.org/abs/1", [], "research"),
        ("https://www.nature.com/x", ["github"], "research"),
        ("https://x.org/paper.pdf", ["pdf"], "pdf"),
        ("https://x.org/paper.pdf", [], None),
        ("https://notgithub.com/a", [], None),
    ],
)
def test_category_labels(url, requested, label) -> None:
    assert category_label(url, requested) == label


def test_domains_are_normalized_and_checked() -> None:
    assert normalize_domains([" Example.COM. ", ""], "includeDomains") == ["example.com"]
    with pytest.raises(BadRequest, match="bare hostnames"):
        normalize_domains(["https://example.com/path"], "includeDomains")


def test_invalid_urls_are_dropped_only_when_asked() -> None:
    strict, lenient = ResultFilter(valid_urls_only=True), ResultFilter()
    assert not strict.admits("ftp://x.org/a", None) and not strict.admits("mailto:a@b.c", None)
    assert strict.admits("https://x.org/a", None) and lenient.admits("ftp://x.org/a", None)
