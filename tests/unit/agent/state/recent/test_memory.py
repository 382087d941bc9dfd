import asyncio
import json

from agent.state.recent import Kept
from agent.state.recent.memory import RecentScrapes

ID = "0190a0a0-0000-7000-8000-00000000000{}"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def document(n: int, text: str = "page") -> dict:
    return {"markdown": text, "metadata": {"scrapeId": ID.format(n), "sourceURL": f"https://example.com/{n}"}}


def size(doc: dict) -> int:
    return len(json.dumps(doc, separators=(",", ":")))


def put(kept: RecentScrapes, owner: str, *documents: dict) -> None:
    for doc in documents:
        asyncio.run(kept.put(owner, doc))


def get(kept: RecentScrapes, n: int) -> Kept | None:
    return asyncio.run(kept.get(ID.format(n)))


def test_a_document_is_found_by_its_scrape_id_until_its_time_is_up() -> None:
    clock = Clock()
    kept = RecentScrapes(10, 10_000, ttl_s=60, clock=clock)
    put(kept, "key:a", document(1))
    clock.now = 59.9
    found = get(kept, 1)
    assert found.document == document(1) and found.owner == "key:a"
    assert get(kept, 2) is None
    clock.now = 60
    assert get(kept, 1) is None


def test_the_oldest_go_first_past_the_count_or_the_bytes() -> None:
    kept = RecentScrapes(2, 10_000, ttl_s=60)
    put(kept, "key:a", *(document(n) for n in (1, 2, 3)))
    assert [get(kept, n) is not None for n in (1, 2, 3)] == [False, True, True]
    by_bytes = RecentScrapes(100, 2 * size(document(1)), ttl_s=60)
    put(by_bytes, "key:a", *(document(n) for n in (1, 2, 3)))
    assert [get(by_bytes, n) is not None for n in (1, 2, 3)] == [False, True, True]


def test_a_document_over_the_whole_budget_or_without_an_id_is_not_kept() -> None:
    kept = RecentScrapes(10, size(document(1)), ttl_s=60)
    put(kept, "key:a", document(1, "x" * 100), {"markdown": "no id", "metadata": {}}, document(2))
    assert get(kept, 1) is None and get(kept, 2) is not None
    nothing = RecentScrapes(0, 10_000, ttl_s=60)
    put(nothing, "key:a", document(1))
    assert get(nothing, 1) is None


def test_no_time_to_keep_them_keeps_none() -> None:
    kept = RecentScrapes(10, 10_000, ttl_s=0)  # SCRAPE_KEEP_S=0: the documented way to keep no scrape
    put(kept, "key:a", *(document(n) for n in (1, 2, 3)))
    assert len(kept) == 0


def test_another_clients_id_is_not_taken_over_and_the_owner_may_replace_it() -> None:
    kept = RecentScrapes(10, 10_000, ttl_s=60)
    put(kept, "key:a", document(1, "mine"))
    put(kept, "key:b", document(1, "theirs"))  # a request id the client chose (X-Request-Id) can repeat another's
    assert get(kept, 1).document["markdown"] == "mine"
    put(kept, "key:a", document(1, "again"))
    assert get(kept, 1).document["markdown"] == "again"
    put(kept, "key:a", document(2), document(3))
    assert all(get(kept, n) for n in (1, 2, 3))  # the replaced one's bytes were given back


def test_expired_documents_give_their_bytes_back() -> None:
    clock = Clock()
    kept = RecentScrapes(10, 2 * size(document(1)), ttl_s=60, clock=clock)
    put(kept, "key:a", document(1), document(2))
    clock.now = 60
    put(kept, "key:b", document(1))  # the expired one of that id is no longer key:a's
    put(kept, "key:b", document(3))
    assert get(kept, 1).owner == "key:b" and get(kept, 3) is not None and len(kept) == 2
