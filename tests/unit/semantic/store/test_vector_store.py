"""The vector store on a real embedded Qdrant (qdrant-client's local mode), with hand-made vectors."""

from pathlib import Path

import pytest

from semantic.errors import CollectionNotFound, DimensionMismatch, StoreInUse
from semantic.store.lexical import document_vector, query_vector
from semantic.store.vector_store import StoredChunk, VectorStore, point_id


def chunk(url: str, index: int, vector: list[float], host: str = "a.org", sparse=None) -> StoredChunk:
    return StoredChunk(url, index, vector, sparse, {"url": url, "host": host, "chunk_index": index,
                                                    "content_hash": f"h-{url}", "text": f"{url} #{index}"})


@pytest.fixture
def store(tmp_path: Path):
    store = VectorStore(path=str(tmp_path / "qdrant"))
    store.ensure_collection("c", 3, lexical=None)
    store.replace_document("c", "https://a.org/1", [chunk("https://a.org/1", 0, [1, 0, 0]),
                                                    chunk("https://a.org/1", 1, [0.9, 0.1, 0])])
    store.replace_document("c", "https://b.org/2", [chunk("https://b.org/2", 0, [0, 1, 0], host="b.org")])
    yield store
    store.close()


def test_search_ranks_by_cosine_with_threshold_and_filter(store: VectorStore) -> None:
    matches = store.search("c", [1, 0, 0], None, limit=10, score_threshold=None, conditions=None)
    assert [m.payload["text"] for m in matches] == ["https://a.org/1 #0", "https://a.org/1 #1", "https://b.org/2 #0"]
    assert matches[0].score == pytest.approx(1.0)
    assert len(store.search("c", [1, 0, 0], None, 10, score_threshold=0.5, conditions=None)) == 2
    only_b = store.search("c", [1, 0, 0], None, 10, None, {"host": "b.org"})
    assert [m.payload["url"] for m in only_b] == ["https://b.org/2"]


def test_replacing_a_document_leaves_no_stale_chunk(store: VectorStore) -> None:
    store.replace_document("c", "https://a.org/1", [chunk("https://a.org/1", 0, [0, 0, 1])])
    assert store.stats("c")["chunks"] == 2 and store.stats("c")["documents"] == 2
    assert store.content_hash("c", "https://a.org/1") == "h-https://a.org/1"
    assert store.content_hash("c", "https://nowhere.org") is None


def test_delete_by_url_and_by_host(store: VectorStore) -> None:
    assert store.delete("c", {"url": "https://a.org/1"}) == 2
    assert store.delete("c", {"host": "b.org"}) == 1
    assert store.delete("c", {"host": "b.org"}) == 0
    assert store.stats("c")["chunks"] == 0


def test_unknown_collections_and_other_dimensions_are_refused(store: VectorStore) -> None:
    with pytest.raises(CollectionNotFound):
        store.search("nope", [1, 0, 0], None, 1, None, None)
    with pytest.raises(CollectionNotFound):
        store.stats("nope")
    with pytest.raises(DimensionMismatch, match="holds 3-dimensional vectors and the embedder gives 4"):
        store.ensure_collection("c", 4, lexical=None)


def test_a_models_sparse_vectors_are_fused_with_dense_and_hits_keep_their_cosine(tmp_path: Path) -> None:
    store = VectorStore(path=str(tmp_path / "q"))
    assert store.ensure_collection("s", 2, lexical="model") == "model" == store.lexical("s")
    store.replace_document("s", "u1", [chunk("u1", 0, [1, 0], sparse={7: 1.0})])
    store.replace_document("s", "u2", [chunk("u2", 0, [0.8, 0.6], sparse={9: 2.0})])
    dense_first = store.search("s", [1, 0], None, 2, None, None)
    fused = store.search("s", [0.8, 0.6], {7: 1.0}, 2, None, None)
    assert [m.payload["url"] for m in dense_first] == ["u1", "u2"]
    assert {m.payload["url"]: round(m.score, 4) for m in fused} == {"u1": 0.8, "u2": 1.0}
    assert store.stats("s")["sparse"] and store.stats("s")["lexical"] == "model"
    store.close()


def bm25_store(tmp_path: Path, texts: dict[str, tuple[str, list[float]]]) -> VectorStore:
    """A store whose collection `b` holds one chunk per url: its text's BM25 weights, and a hand-made vector."""
    store = VectorStore(path=str(tmp_path / "q"))
    assert store.ensure_collection("b", 2, lexical="bm25") == "bm25"
    for url, (text, dense) in texts.items():
        store.replace_document("b", url, [chunk(url, 0, dense, sparse=document_vector(text, 100))])
    return store


def test_bm25_puts_the_chunk_that_says_the_query_verbatim_above_one_merely_close(tmp_path: Path) -> None:
    store = bm25_store(tmp_path, {"close": ("a page about saving changes to a file", [1, 0]),
                                  "verbatim": ("how to squash commits in git", [0.6, 0.8])})
    query = "squash commits"
    assert [m.payload["url"] for m in store.search("b", [1, 0], None, 2, None, None)] == ["close", "verbatim"]
    fused = store.search("b", [1, 0], query_vector(query), 2, None, None)
    assert [m.payload["url"] for m in fused] == ["verbatim", "close"]
    assert [round(m.score, 4) for m in fused] == [0.6, 1.0]  # ordered by fusion, scored by cosine
    # the cosine threshold holds for what the lexical side alone brings
    assert [m.payload["url"] for m in store.search("b", [1, 0], query_vector(query), 2, 0.9, None)] == ["close"]
    store.close()


def test_idf_lets_a_rare_term_outweigh_a_common_one_said_thrice(tmp_path: Path) -> None:
    # by cosine: off-topic, then common, then rare; "common" is on most pages, "rare" on one
    store = bm25_store(tmp_path, {
        "off-topic": ("nothing to see", [1, 0]),
        "common": ("common common common", [0.9, 0.1]),
        "rare": ("rare", [0.8, 0.2]),
        **{f"other-{i}": ("common words", [0, 1]) for i in range(3)},
    })
    fused = store.search("b", [1, 0], query_vector("rare common"), 3, None, None)
    order = [m.payload["url"] for m in fused]
    assert order.index("rare") < order.index("common")
    store.close()


def test_a_collection_without_a_lexical_side_keeps_none(store: VectorStore) -> None:
    # made before lexical sides existed, or with INDEX_LEXICAL=off: indexing then stores and asks no sparse vector
    assert store.lexical("c") is None and store.ensure_collection("c", 3, lexical="bm25") is None
    assert store.stats("c")["lexical"] is None


def test_the_embedded_store_persists_across_a_restart(tmp_path: Path) -> None:
    first = VectorStore(path=str(tmp_path / "q"))
    first.ensure_collection("p", 2, lexical=None)
    first.replace_document("p", "u", [chunk("u", 0, [1, 0])])
    first.close()
    second = VectorStore(path=str(tmp_path / "q"))
    assert second.stats("p")["chunks"] == 1
    assert second.search("p", [1, 0], None, 1, None, None)[0].payload["url"] == "u"
    second.close()


def test_point_ids_are_stable() -> None:
    assert point_id("u", 0) == point_id("u", 0) != point_id("u", 1)


def test_a_second_embedded_store_on_one_folder_is_refused_until_the_first_closes(tmp_path: Path) -> None:
    first = VectorStore(path=str(tmp_path / "q"))
    with pytest.raises(StoreInUse, match="QDRANT_URL"):
        VectorStore(path=str(tmp_path / "q"))
    first.close()
    VectorStore(path=str(tmp_path / "q")).close()


def test_an_embedded_store_says_its_index_is_this_processs_alone(store: VectorStore, tmp_path: Path) -> None:
    described = store.describe()
    assert (described["mode"], described["location"], described["shared"]) == ("embedded", str(tmp_path / "qdrant"),
                                                                                False)
    assert "this process's alone" in described["note"] and "QDRANT_URL" in described["note"]
