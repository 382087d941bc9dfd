"""Which links a crawl follows, and when two URLs are one page."""

import pytest

from agent.core.crawl_options import CrawlOptions
from agent.index.crawl.options import MAX_URL_CHARS
from agent.index.crawl.scope import Scope, url_key

SEED = "https://docs.test/guide/intro.html"


def scope(seed: str = SEED, junk: str | None = None, **fields: object) -> Scope:
    options = CrawlOptions(seeds=(seed,), limit=10, **fields)
    return Scope(options) if junk is None else Scope(options, junk)


@pytest.mark.parametrize("variant", [
    "http://docs.test/guide", "https://docs.test/guide/", "https://www.docs.test/guide/", "https://DOCS.test/guide",
    "https://docs.test/guide/index.html", "http://www.docs.test/guide/index.htm#part-2", "https://docs.test:443/guide",
])
def test_similar_urls_are_one_page(variant: str) -> None:
    assert url_key(variant) == url_key("https://docs.test/guide") == "http://docs.test/guide"


def test_a_file_ending_in_index_html_is_not_its_folder() -> None:
    assert url_key("https://docs.test/guide/reindex.html") == "http://docs.test/guide/reindex.html"
    assert url_key("https://docs.test/guide/reindex.html") != url_key("https://docs.test/guide/re")
    assert url_key("https://docs.test/index.html") == url_key("https://docs.test") == "http://docs.test/"


def test_without_dedupe_similar_only_the_fragment_and_host_case_go() -> None:
    keys = {url_key(u, dedupe_similar=False) for u in ("https://docs.test/guide/", "http://docs.test/guide/",
                                                       "https://www.docs.test/guide/", "https://docs.test/guide")}
    assert len(keys) == 4
    assert url_key("https://Docs.test/guide/#top", dedupe_similar=False) == "https://docs.test/guide/"


def test_the_query_is_part_of_the_page_unless_ignored() -> None:
    assert url_key("https://docs.test/a?page=2") != url_key("https://docs.test/a?page=3")
    assert url_key("https://docs.test/a?page=2", ignore_query=True) == url_key("https://docs.test/a")


def test_another_port_is_another_page() -> None:
    assert url_key("https://docs.test:8443/a") == "http://docs.test:8443/a"
    assert url_key("https://docs.test:8443/a") != url_key("https://docs.test/a")


def test_a_crawl_stays_under_the_seeds_folder_on_its_host() -> None:
    s = scope()
    assert s.follows("https://docs.test/guide/setup.html") is None
    assert s.follows("http://www.docs.test/guide/deep/more") is None  # the same site by www. and scheme
    assert s.follows("https://docs.test/reference/api.html") == "outside /guide/"
    assert s.follows("https://other.test/guide/a") == "another site"
    assert s.follows("https://sub.docs.test/guide/a") == "another site"
    assert s.follows("https://docs.test:8443/guide/a") == "another site"


def test_a_seed_folder_keeps_its_own_path_as_prefix() -> None:
    assert scope("https://docs.test/guide/").follows("https://docs.test/guide/a") is None
    assert scope("https://docs.test/guide/").follows("https://docs.test/guides") == "outside /guide/"
    assert scope("https://docs.test").follows("https://docs.test/anything/at/all") is None


def test_options_widen_the_scope() -> None:
    assert scope(entire_domain=True).follows("https://docs.test/reference/api.html") is None
    assert scope(entire_domain=True).follows("https://sub.docs.test/guide/a") == "another site"
    assert scope(subdomains=True).follows("https://sub.docs.test/guide/a") is None
    assert scope(subdomains=True).follows("https://notdocs.test/guide/a") == "another site"
    assert scope(external=True).follows("https://other.test/anywhere") is None


@pytest.mark.parametrize(("url", "why"), [
    ("mailto:someone@docs.test", "not an http(s) URL"),
    ("ftp://docs.test/guide/file", "not an http(s) URL"),
    ("file:///etc/passwd", "not an http(s) URL"),
    ("javascript:fetch('https://docs.test/guide/')", "not an http(s) URL"),
    ("data:text/html,<a href=https://docs.test/guide/>", "not an http(s) URL"),
    ("//docs.test/guide/relative", "not an http(s) URL"),  # a link is joined to its page's URL before
    ("https://docs.test:99999/guide/", "malformed URL"),
    ("https://docs.test/guide/" + "a" * MAX_URL_CHARS, "not an http(s) URL"),
    ("https://docs.test/guide/diagram.PNG", "not a page"),
    ("https://docs.test/guide/archive.tar", "not a page"),
    ("https://docs.test/guide/app.js", "not a page"),
])
def test_what_is_not_a_page_is_not_followed(url: str, why: str) -> None:
    assert scope().follows(url) == why


@pytest.mark.parametrize("path", ["blog/2024/post", "about.html", "tags", "tag/sqlite", "news/", "categories/x",
                                  "Special:RecentChanges", "w?action=edit", "page?oldid=12", "login"])
def test_navigation_pages_are_not_followed(path: str) -> None:
    assert scope().follows(f"https://docs.test/guide/{path}").startswith("a navigation page")


def test_a_word_that_only_starts_like_navigation_is_a_page() -> None:
    assert scope().follows("https://docs.test/guide/aboutness.html") is None
    assert scope().follows("https://docs.test/guide/newsletter-format") is None


def test_an_empty_junk_pattern_follows_navigation_too() -> None:
    assert scope(junk="").follows("https://docs.test/guide/blog/post") is None


def test_include_paths_choose_and_override_the_junk_filter() -> None:
    s = scope(include=("/guide/(blog|api)/",))
    assert s.follows("https://docs.test/guide/blog/post") is None
    assert s.follows("https://docs.test/guide/setup.html") == "not in includePaths"


def test_exclude_paths_win_over_include_paths() -> None:
    s = scope(include=("/guide/",), exclude=("secret",))
    assert s.follows("https://docs.test/guide/secret/a") == "excludePaths"
    assert s.follows("https://docs.test/guide/a") is None


def test_patterns_match_the_path_unless_regex_on_full_url() -> None:
    assert scope(exclude=("^https://",)).follows("https://docs.test/guide/a") is None
    assert scope(exclude=("^https://",), regex_on_full_url=True).follows("https://docs.test/guide/a") == "excludePaths"
    assert scope(exclude=(r"\?lang=",)).follows("https://docs.test/guide/a?lang=de") is None
    assert scope(exclude=(r"\?lang=",), regex_on_full_url=True).follows("https://docs.test/guide/a?lang=de") \
        == "excludePaths"


def test_a_seed_without_an_extension_names_a_folder() -> None:
    assert scope("https://docs.test/docs").follows("https://docs.test/docs/install") is None
    assert scope("https://docs.test/docs").follows("https://docs.test/docsearch") == "outside /docs/"
    assert scope("https://docs.test/docs/intro.html").follows("https://docs.test/docs/x") is None


def test_navigation_is_judged_below_the_seeds_folder_only() -> None:
    blog = scope("https://docs.test/blog/")
    assert blog.follows("https://docs.test/blog/2024/wal-explained") is None  # a crawl of /blog/ follows its posts
    assert blog.follows("https://docs.test/blog/tags/sqlite").startswith("a navigation page")
    assert scope("https://docs.test/news/").follows("https://docs.test/news/archive/about.html") \
        .startswith("a navigation page")


@pytest.mark.parametrize(("seed", "link"), [
    ("https://docs.test/guide/", "https://docs.test:443/guide/a"),
    ("http://docs.test:80/guide/", "http://docs.test/guide/a"),
    ("https://docs.test/guide/", "http://docs.test/guide/a"),  # http and https are one page, so one site
    ("http://docs.test/guide/", "https://www.docs.test:443/guide/a"),
])
def test_default_ports_and_either_scheme_are_the_same_site(seed: str, link: str) -> None:
    assert scope(seed).follows(link) is None


def test_an_explicit_other_port_is_another_site() -> None:
    assert scope("https://docs.test:8443/guide/").follows("https://docs.test:8443/guide/a") is None
    assert scope("https://docs.test:8443/guide/").follows("https://docs.test/guide/a") == "another site"
    assert scope("https://docs.test/guide/").follows("https://docs.test:80/guide/a") == "another site"


def test_v1s_max_depth_bounds_the_path_segments_of_what_is_followed() -> None:
    bounded = scope("https://docs.test/guide/", max_path_depth=2)  # maxDepth 1 from a seed one segment deep
    assert bounded.follows("https://docs.test/guide/intro.html") is None
    assert bounded.follows("https://docs.test/guide/a/intro.html") == "deeper than maxDepth"
    assert scope("https://docs.test/guide/").follows("https://docs.test/guide/a/b/c/d.html") is None
