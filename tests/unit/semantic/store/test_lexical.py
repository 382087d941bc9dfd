"""BM25 as sparse vectors: the same words give the same indices everywhere, and INDEX_LEXICAL's choices."""

import subprocess
import sys

import pytest

from semantic.store.lexical import K1, document_vector, for_new_collections, query_vector


def test_a_query_weighs_each_distinct_word_once_with_the_documents_indices() -> None:
    query = query_vector("Squash the commits, squash them")
    assert len(query) == 4 and set(query.values()) == {1.0}
    assert set(query_vector("squash")) <= set(document_vector("How to SQUASH commits", 100))


def test_indices_do_not_change_from_one_process_to_the_next() -> None:
    # Python's str hash is salted per process; an index must outlive the process that wrote it
    code = "from semantic.store.lexical import query_vector; print(sorted(query_vector('checkpoint')))"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert runs == {f"{sorted(query_vector('checkpoint'))}\n"}


def test_term_counts_saturate_and_a_short_chunk_counts_as_short() -> None:
    [once] = document_vector("wal", 3).values()
    [thrice] = document_vector("wal wal wal", 11).values()  # as long as typical: tf * (k1 + 1) / (tf + k1)
    assert once == pytest.approx(1.0) and thrice == pytest.approx(3 * (K1 + 1) / (3 + K1)) and thrice < 3 * once
    assert document_vector("wal", 100)[next(iter(query_vector("wal")))] > once


@pytest.mark.parametrize(("setting", "head", "side"), [
    ("auto", True, "model"), ("auto", False, "bm25"), ("model", True, "model"), ("model", False, None),
    ("bm25", True, "bm25"), ("off", True, None)])
def test_index_lexical_chooses_the_side_of_new_collections(setting, head, side) -> None:
    assert for_new_collections(setting, head) == side
