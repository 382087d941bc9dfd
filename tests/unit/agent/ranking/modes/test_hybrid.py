import asyncio
from collections.abc import Callable

from agent.core.outcome import SearchOutcome
from agent.core.query import SearchQuery

from ...fake_searxng import FakeSearxng, FakeSemantic

URL = "https://general.test/{}".format


def page(title: str, *sections: str) -> str:
    body = "".join(f"<h2>Part {i}</h2><p>{text}</p>" for i, text in enumerate(sections))
    return f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{body}</article></body></html>"


def searches(semantic: FakeSemantic, pages: dict[str, str], mode: str = "hybrid", **settings
             ) -> Callable[[], SearchOutcome]:
    """Searches of `mode` on one set of services (one semantic-svc client), as many as a test runs."""
    fake = FakeSearxng(total=5, snippets={3: "squash commits with an interactive rebase", 4: "unrelated"})
    search = fake.search(semantic=semantic, pages=pages, fetch_top=3, chunk_chars=200, **settings)
    services = search.services
    query = SearchQuery("squash git commits", limit=5, retrieval_mode=mode, explain=True)
    return lambda: asyncio.run(search.ranking.modes[mode](query, services.context(30), services.upstreams))


def hybrid(semantic: FakeSemantic, pages: dict[str, str], **settings) -> SearchOutcome:
    return searches(semantic, pages, **settings)()


LONG = "Squash git commits into one with an interactive rebase and fixup. " * 3
PAGES = {URL(0): page("Rebase", LONG, LONG, LONG), URL(1): page("Commit", LONG, LONG),
         URL(2): page("Cats", "Cats purr and sleep in the sun all day long, whatever the weather.")}


def test_every_candidate_gets_a_fair_look_even_past_the_shortlist() -> None:
    semantic = FakeSemantic()
    outcome = hybrid(semantic, PAGES, shortlist=2)
    passages = semantic.passages("/rerank")
    assert {path for path, _ in semantic.calls} == {"/rerank"}
    # the cats page and both unfetched snippets are scored although BM25 would have left them out
    assert any("Cats purr" in p for p in passages) and any(p.endswith("\nunrelated") for p in passages)
    assert sum("Squash git commits" in p for p in passages) == 2  # one chunk a page; snippets come on top
    assert {row.url: row.score is not None for row in outcome.explain} == {URL(n): True for n in range(5)}


def test_the_shortlist_fills_up_with_the_best_remaining_chunks() -> None:
    semantic = FakeSemantic()
    hybrid(semantic, PAGES, shortlist=5)
    passages = semantic.passages("/rerank")
    assert sum("Squash git commits" in p for p in passages) == 4  # the cats page's one chunk is the fifth


def test_the_pages_follow_their_best_passage() -> None:
    outcome = hybrid(FakeSemantic(), PAGES, shortlist=8, relevance_margin=0.5)
    urls = [h.url for h in outcome.buckets["web"]]
    assert URL(2) not in urls and urls[0] in (URL(0), URL(1))
    assert all(outcome.details[u].passages for u in urls)


def test_the_reranker_failing_ranks_by_the_first_pass() -> None:
    outcome = hybrid(FakeSemantic(failing={"/rerank"}), PAGES)
    # BM25 over the pages and snippets: the cats page falls behind the snippet that names the query's words
    assert [h.url for h in outcome.buckets["web"]] == [URL(0), URL(1), URL(3), URL(2), URL(4)]
    assert outcome.warnings[-1].startswith("semantic-svc failed (semantic-svc answered /rerank with HTTP 503")
    assert outcome.warnings[-1].endswith(": ranked by a first pass (BM25 and page features)")
    assert {row.reason for row in outcome.explain} == {"first pass (BM25)"}


def test_the_reranker_failing_with_no_page_fetched_keeps_searxng_order() -> None:
    outcome = hybrid(FakeSemantic(failing={"/rerank"}), {})
    assert [h.url for h in outcome.buckets["web"]] == [URL(n) for n in range(5)]
    assert "semantic-svc answered /rerank with HTTP 503" in outcome.warnings[-1]
    assert outcome.warnings[-1].endswith("results keep SearXNG's order")


def test_a_lane_full_beyond_the_deadline_is_not_asked_and_the_first_pass_ranks() -> None:
    semantic = FakeSemantic(queued_ms=60_000)
    search = searches(semantic, PAGES)
    first = search()  # asked: nothing was known of the lane; the answer says a minute of work waits there
    second = search()
    assert "ranked by a first pass" not in "".join(first.warnings)
    assert len(semantic.calls) == 1  # the second search did not join the queue
    assert second.warnings[-1].startswith("semantic-svc's model lane would not reach this search's texts in time")
    assert [h.url for h in second.buckets["web"]][:2] == [URL(0), URL(1)]
