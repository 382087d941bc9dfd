from datetime import date

from offline_web.engine import SearchEngine, parse_query
from offline_web.index import first_sentence, index_key


def test_query_parsing_honours_operators_and_drops_stopwords() -> None:
    parsed = parse_query("how to VACUUM the db site:www.alpha.org -site:beta.dev filetype:PDF")
    assert parsed.terms == ["vacuum", "db"]
    assert parsed.sites == ["www.alpha.org"] and parsed.excluded_sites == ["beta.dev"] and parsed.filetype == "pdf"
    assert parse_query("site:b.org x", honour_operators=False).terms == ["site", "b", "org", "x"]
    assert parse_query("the of and").terms == []


def test_bm25_ranking_and_included_pages_only(corpus) -> None:
    _, _, db = corpus
    engine = SearchEngine(db)
    results = engine.search("wal checkpoint")
    assert results[0]["url"] == "www.alpha.org/wal.html"
    assert all("private" not in r["url"] for r in engine.search("checkpoint"))
    assert engine.search("zzz nothing") == [] and engine.search("the") == []


def test_snippets_are_thin_and_skip_boilerplate(corpus) -> None:
    engine = SearchEngine(corpus[2])
    [wal] = [r for r in engine.search("write ahead log") if r["url"].endswith("wal.html")]
    # the first sentence is under 40 characters, so the snippet runs to the end of the next one
    assert wal["content"] == ("The write-ahead log is a journal mode. A checkpoint moves the WAL content back into "
                              "the database file.")
    [beta] = engine.search("rebase squash")
    assert beta["content"] == "Beta: the guide to rebasing."  # the meta description wins


def test_site_and_filetype_operators(corpus) -> None:
    engine = SearchEngine(corpus[2])
    assert {r["url"].split("/")[0] for r in engine.search("commit site:beta.dev")} == {"beta.dev"}
    assert all(not r["url"].startswith("beta.dev") for r in engine.search("commit -site:beta.dev"))
    assert engine.search("vacuum filetype:pdf") == []


def test_news_are_dated_pages_and_time_ranges_filter_them(corpus) -> None:
    engine = SearchEngine(corpus[2])
    news = engine.search("release added", category="news")
    assert {r["published"] for r in news} == {"2022-11-16", "2022-06-25"}
    assert engine.search("release added", category="news", time_range="month", today=date(2022, 12, 1))[0][
        "published"] == "2022-11-16"
    assert engine.search("release added", category="news", time_range="week", today=date(2026, 12, 1)) == []


def test_images_skip_site_boilerplate_and_carry_sizes(corpus) -> None:
    engine = SearchEngine(corpus[2])
    images = engine.search("wal diagram", category="images")
    assert images == [{"url": "www.alpha.org/wal.html", "title": "WAL diagram", "content": "",
                       "img": "www.alpha.org/img/wal.gif", "resolution": "300 x 200", "score": images[0]["score"]}]


def test_paging(corpus) -> None:
    engine = SearchEngine(corpus[2])
    assert engine.search("checkpoint", pageno=2) == []
    assert len(engine.search("checkpoint", pageno=1)) == 2


def test_first_sentence() -> None:
    assert first_sentence("Short. This is the real first sentence of the paragraph, long enough. More.") == (
        "Short. This is the real first sentence of the paragraph, long enough.")
    assert first_sentence("x" * 300) == "x" * 200


def test_index_key_follows_versions_and_sites() -> None:
    key = index_key("a\tb\tc\n", {"p": "1"})
    assert key == index_key("a\tb\tc\n", {"p": "1"})
    assert key != index_key("a\tb\tc\n", {"p": "2"}) and key != index_key("a\tb\td\n", {"p": "1"})


def test_a_bare_site_query_lists_the_sites_pages_also_by_the_offline_webs_own_address(corpus) -> None:
    engine = SearchEngine(corpus[2])
    listed = [r["url"] for r in engine.search("site:www.alpha.org")]
    assert listed and listed == sorted(listed) and all(u.startswith("www.alpha.org/") for u in listed)
    assert [r["url"] for r in engine.search("site:http://127.0.0.1:8899/www.alpha.org/")] == listed
    assert parse_query("site:127.0.0.1:8899/beta.dev/docs").sites == ["beta.dev/docs"]
    assert engine.search("site:www.alpha.org", category="news") == [] and engine.search("") == []
