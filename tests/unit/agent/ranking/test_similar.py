"""/v2/similar's pieces: the seed page's queries, and the exact cosine to the mean of its first two chunks."""

import asyncio
import math

import pytest

from agent.core.ratings import Ratings
from agent.ranking.similar import SEED_TERMS, _cosine_to_mean, seed_queries

from ..fake_searxng import FakeSearxng, replaced

Vector = tuple[float, ...]


def test_the_title_comes_first_then_the_common_words_then_both() -> None:
    text = ("The WAL journal: the WAL lets readers read while the writer writes. Readers and the writer share "
            "the WAL file, and checkpoints move the WAL back.")
    title, words, both = seed_queries("  SQLite WAL mode ", text)
    assert title == "SQLite WAL mode"
    assert words == "wal readers writer journal lets read writes share"
    assert both == "SQLite WAL mode wal readers writer journal"


def test_stopwords_short_words_and_numbers_make_no_query() -> None:
    [words] = seed_queries("", "The and of with you use page www https 2024 2024 ok ok is by sqlite sqlite vacuum")
    assert words == "sqlite vacuum"


def test_at_most_the_seed_terms_most_common_words() -> None:
    words = [f"word{chr(97 + n)}" for n in range(SEED_TERMS + 4)]
    text = " ".join(w for n, w in enumerate(words) for _ in range(len(words) - n))  # worda most common
    queries = seed_queries("Title", text)
    assert len(queries) == 3
    assert queries[1] == " ".join(words[:SEED_TERMS]) and queries[2] == "Title " + " ".join(words[:4])


def test_empty_and_repeated_queries_are_dropped() -> None:
    assert seed_queries("Title", "the and of 123") == ["Title"]
    assert seed_queries("", "sqlite vacuum sqlite") == ["sqlite vacuum"]
    assert seed_queries("", "") == []


def normalized(v: Vector) -> Vector:
    norm = math.sqrt(sum(x * x for x in v))
    return tuple(x / norm for x in v)


def cosine(u: Vector, v: Vector) -> float:
    return sum(x * y for x, y in zip(normalized(u), normalized(v), strict=True))


class CosineSemantic:
    """semantic-svc's /similarity over hand-made embeddings: the real cosine of each text's unit vector."""

    def __init__(self, vectors: dict[str, Vector]) -> None:
        self.vectors = {text: normalized(v) for text, v in vectors.items()}
        self.calls = 0

    async def similarity(self, query: str, passages: list[str], budget_s: float | None = None) -> Ratings:
        self.calls += 1
        return Ratings(tuple(cosine(self.vectors[query], self.vectors[p]) for p in passages))


A, B = (1.0, 0.0, 0.0), (0.6, 0.8, 0.0)
PASSAGES = {"p1": (0.0, 0.0, 1.0), "p2": (1.0, 1.0, 1.0), "p3": (0.2, 0.9, -0.4), "p4": (-1.0, 0.3, 0.0)}


def cosine_to_mean(seed: list[str], vectors: dict[str, Vector]) -> tuple[list[float], int]:
    semantic = CosineSemantic(vectors)
    services = replaced(FakeSearxng().services(), semantic=semantic)
    ctx = services.context(30)
    return asyncio.run(_cosine_to_mean(seed, list(PASSAGES), ctx, semantic)), semantic.calls


def test_two_seed_chunks_give_the_cosine_to_their_normalized_mean() -> None:
    scores, calls = cosine_to_mean(["a", "b"], {"a": A, "b": B, **PASSAGES})
    mean = normalized(tuple(x + y for x, y in zip(A, B, strict=True)))
    assert scores == pytest.approx([cosine(mean, p) for p in PASSAGES.values()], abs=1e-12)
    assert scores != pytest.approx([cosine(A, p) for p in PASSAGES.values()], abs=1e-3)  # not the first chunk's
    assert calls == 2  # a's call also gives cos(a, b), the norm of a + b


def test_twin_seed_chunks_are_one() -> None:
    scores, _ = cosine_to_mean(["a", "b"], {"a": B, "b": B, **PASSAGES})
    assert scores == pytest.approx([cosine(B, p) for p in PASSAGES.values()], abs=1e-12)


def test_one_seed_chunk_is_its_own_cosine() -> None:
    scores, calls = cosine_to_mean(["a"], {"a": A, **PASSAGES})
    assert scores == pytest.approx([cosine(A, p) for p in PASSAGES.values()], abs=1e-12) and calls == 1
