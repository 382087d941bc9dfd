"""The runtime's scoring through the lane and the cache, with small fake models that count their calls."""

import asyncio
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np
import pytest

from semantic import indexing
from semantic.config import Settings
from semantic.models.embedders import EMBEDDERS, Encoded, Kind
from semantic.models.rerankers import RERANKERS, BiEncoderHybridReranker, _PairReranker
from semantic.runtime import Ranked, Runtime, check_backends

from .lane.test_batching import Blocker, queued
from .relevance.test_calibrated import pair_file

QUERIES = ["when does sqlite checkpoint the wal", "squash commits with git rebase", "where do cats sleep"]
PASSAGES = ["sqlite checkpoints the wal at 1000 pages", "git rebase squashes several commits", "cats sleep all day",
            "the cat sat on the mat and looked at the rain"]


class CountingEmbedder:
    name, backend, dimension, max_tokens, has_sparse = "fake", "fake", 8, 7, False

    def __init__(self) -> None:
        self.calls: list[tuple[Kind, list[str]]] = []

    def encode(self, texts: list[str], kind: Kind) -> Encoded:
        self.calls.append((kind, texts))
        vectors = np.array([np.random.default_rng(zlib.crc32(t.encode())).normal(size=8) for t in texts],
                           dtype=np.float32)
        return Encoded(vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                       truncated=[i for i, t in enumerate(texts) if len(t.split()) > self.max_tokens])


class CountingCrossEncoder(_PairReranker):
    def __init__(self) -> None:
        super().__init__("fake-ce", "cross-encoder", lambda texts, **_: {"input_ids": [t.split() for t in texts]}, 32)
        self.calls: list[list[tuple[str, str]]] = []

    def _predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.calls.append(pairs)
        return [float(len(set(q.split()) & set(p.split()))) for q, p in pairs]


def make_runtime(tmp_path: Path, **settings) -> Runtime:
    runtime = Runtime(Settings(qdrant_path=str(tmp_path / "qdrant"), **settings))
    runtime.embedder = CountingEmbedder()
    runtime.reranker = BiEncoderHybridReranker(runtime.embedder)
    return runtime


def run(runtime: Runtime, main: Callable[[], Awaitable]):
    async def and_close():
        try:
            return await main()
        finally:
            await runtime.lane.close()
            runtime.store.close()
    return asyncio.run(and_close())


async def behind_a_held_lane(runtime: Runtime, calls: list[Callable[[], Awaitable]], jobs: int) -> list:
    """Start `calls` while the model thread is held, so that their `jobs` model jobs queue together."""
    blocker = Blocker()
    held = await blocker.occupy(runtime.lane)
    tasks = [asyncio.create_task(call()) for call in calls]
    await queued(runtime.lane, jobs)
    blocker.release.set()
    await held
    return await asyncio.gather(*tasks)


def test_concurrent_hybrid_reranks_share_one_query_and_one_passage_call(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, embed_cache_size=0)
    embedder = runtime.embedder

    async def main() -> tuple[list[Ranked], list[Ranked]]:
        sequential = [await runtime.rerank(q, PASSAGES) for q in QUERIES]
        embedder.calls.clear()
        concurrent = await behind_a_held_lane(runtime, [lambda q=q: runtime.rerank(q, PASSAGES) for q in QUERIES],
                                              jobs=2 * len(QUERIES))
        return sequential, concurrent

    sequential, concurrent = run(runtime, main)
    assert embedder.calls == [("query", QUERIES), ("passage", PASSAGES)]  # the same passages: read once
    assert np.allclose([r.scores for r in concurrent], [r.scores for r in sequential], atol=1e-6)
    assert [r.order for r in concurrent] == [r.order for r in sequential]
    assert concurrent[0].truncated == [3]


def test_concurrent_cross_encoder_reranks_share_one_predict_call(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    runtime.reranker = cross_encoder = CountingCrossEncoder()

    async def main() -> list[Ranked]:
        return await behind_a_held_lane(runtime, [lambda q=q: runtime.rerank(q, PASSAGES) for q in QUERIES],
                                        jobs=len(QUERIES))

    ranked = run(runtime, main)
    assert cross_encoder.calls == [[(q, p) for q in QUERIES for p in PASSAGES]]
    assert ranked[0].order[0] == 0 and ranked[1].order[0] == 1 and ranked[2].order[0] == 2
    assert ranked[0].scores == cross_encoder.score(QUERIES[0], PASSAGES).scores  # as one request alone


def test_texts_seen_before_come_from_the_cache(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    embedder = runtime.embedder

    async def main() -> tuple[Ranked, Ranked, Encoded]:
        first = await runtime.rerank(QUERIES[0], PASSAGES[:2])
        again = await runtime.rerank(QUERIES[0], PASSAGES)
        as_queries = await runtime.embed(PASSAGES[:1], "query")  # another kind: another vector
        return first, again, as_queries

    first, again, _ = run(runtime, main)
    assert embedder.calls == [("query", QUERIES[:1]), ("passage", PASSAGES[:2]), ("passage", PASSAGES[2:]),
                              ("query", PASSAGES[:1])]
    assert again.scores[:2] != first.scores  # z-scores of four passages, not two: blended afresh per request
    stats = runtime.cache.stats()
    assert (stats.entries, stats.hits, stats.misses) == (6, 3, 6)


def test_a_cached_result_is_the_computed_one(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)

    async def main() -> tuple[Encoded, Encoded]:
        return await runtime.embed(PASSAGES, "passage"), await runtime.embed(PASSAGES, "passage")

    computed, cached = run(runtime, main)
    assert np.array_equal(computed.dense, cached.dense) and computed.truncated == cached.truncated == [3]
    assert len(runtime.embedder.calls) == 1


def test_a_text_twice_in_one_request_is_encoded_once_and_a_disabled_cache_keeps_nothing(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, embed_cache_size=0)

    async def main() -> None:
        await runtime.embed(["a", "b", "a"], "passage")
        await runtime.embed(["a"], "passage")

    run(runtime, main)
    assert runtime.embedder.calls == [("passage", ["a", "b"]), ("passage", ["a"])]
    assert runtime.cache.stats().entries == 0


def test_a_reranks_model_calls_are_timed_as_reranking_and_a_similaritys_as_embedding(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)

    async def main() -> None:
        await runtime.rerank(QUERIES[0], PASSAGES)  # the offline reranker: its embeddings are its model work
        assert (runtime.speed.speed("rerank").calls, runtime.speed.speed("embed").calls) == (2, 0)
        await runtime.similarity(QUERIES[1], [PASSAGES[0], "a passage not seen before"])
        assert (runtime.speed.speed("rerank").calls, runtime.speed.speed("embed").calls) == (2, 2)

    run(runtime, main)


def test_indexing_waits_behind_searches_as_background_work(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    embedder = runtime.embedder

    async def main() -> None:
        blocker = Blocker()
        held = await blocker.occupy(runtime.lane)
        page = asyncio.create_task(indexing.upsert(runtime, "c", [indexing.Document("https://a.org", "", "A page.")]))
        await queued(runtime.lane, 1, "background")
        search = asyncio.create_task(runtime.similarity(QUERIES[0], PASSAGES[:1]))
        await queued(runtime.lane, 2, "interactive")
        blocker.release.set()
        await asyncio.gather(held, page, search)

    run(runtime, main)
    assert embedder.calls == [("query", QUERIES[:1]), ("passage", PASSAGES[:1]), ("passage", ["A page."])]


def test_calibration_seeds_the_speed_and_its_warnings_join_the_rerankers(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path)
    runtime.rerank_warning = "no cross-encoder is configured"
    runtime.calibration = runtime._calibrate(runtime.embedder, runtime.reranker)
    run(runtime, lambda: asyncio.sleep(0))
    speeds = runtime.speed.speeds()
    assert {kind: (speed.source, speed.calls) for kind, speed in speeds.items()} == {
        "rerank": ("calibration", 0), "embed": ("calibration", 0)}
    assert runtime.calibration.rerank.texts == 28 and runtime.calibration.budget_s == 4.0
    assert runtime.warnings[:-1] == ["no cross-encoder is configured", *runtime.calibration.warnings()]
    assert runtime.warnings[-1].startswith("no model has a relevance calibration (RELEVANCE_CALIBRATION is off)")


def calibrated_runtime(tmp_path: Path, reranker=None) -> Runtime:
    """A runtime whose models were calibrated on a small pair set, as they are when they load."""
    runtime = make_runtime(tmp_path, relevance_pairs=str(pair_file(tmp_path / "pairs.tsv")),
                           relevance_cache=str(tmp_path / "relevance"))
    runtime.reranker = reranker or runtime.reranker
    runtime.relevance = runtime._relevance(runtime.embedder, runtime.reranker, None)
    return runtime


def test_the_blends_probability_is_its_embedders_calibration_of_the_cosine(tmp_path: Path) -> None:
    runtime = calibrated_runtime(tmp_path)
    assert set(runtime.relevance) == {"embedder", "similarity", "reranker"}
    assert runtime.relevance["reranker"].map == runtime.relevance["embedder"].map
    assert runtime.relevance["similarity"] is runtime.relevance["embedder"]
    query, passages = QUERIES[0], PASSAGES[:3]

    async def both():
        return await runtime.rerank(query, passages), await runtime.similarity(query, passages)

    ranked, cosines = run(runtime, both)
    # the blend is z-scored within the call; its probabilities are those of the absolute cosines
    assert ranked.probabilities == runtime.probabilities("similarity", cosines)
    assert runtime.relevance_error is None and not any("relevance" in w for w in runtime.warnings)


def test_a_cross_encoder_is_calibrated_on_its_own_raw_scores(tmp_path: Path) -> None:
    runtime = calibrated_runtime(tmp_path, CountingCrossEncoder())
    calibration = runtime.relevance["reranker"]
    assert calibration.model == "fake-ce" and calibration.map != runtime.relevance["embedder"].map
    ranked = run(runtime, lambda: runtime.rerank("squash commits in git", ["git squash commits", "cats sleep"]))
    assert ranked.probabilities == calibration.probabilities(ranked.scores)
    assert ranked.probabilities[0] > ranked.probabilities[1]


def test_a_calibration_that_cannot_be_fitted_leaves_probabilities_null_and_says_why(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, relevance_pairs=str(tmp_path / "missing.tsv"))
    runtime.relevance = runtime._relevance(runtime.embedder, runtime.reranker, None)
    assert runtime.relevance == {} and runtime.probabilities("reranker", [1.0]) is None
    ranked = run(runtime, lambda: runtime.rerank(QUERIES[0], PASSAGES[:2]))
    assert ranked.probabilities is None
    assert any("the relevance calibration failed (FileNotFoundError" in w for w in runtime.warnings)


def with_similarity_model(tmp_path: Path) -> Runtime:
    """A runtime whose /similarity has an embedder of its own: another fake, of the same model name."""
    runtime = make_runtime(tmp_path)
    runtime.similarity_embedder = CountingEmbedder()
    return runtime


def test_similarity_goes_to_its_own_embedder_and_embed_and_the_index_to_the_embedder(tmp_path: Path) -> None:
    runtime = with_similarity_model(tmp_path)
    embedder, similarity = runtime.embedder, runtime.similarity_embedder

    async def main() -> None:
        await runtime.similarity(QUERIES[0], PASSAGES[:2])
        await runtime.embed(PASSAGES[:2], "passage")  # the same texts: the other model's vectors are not these
        await indexing.upsert(runtime, "c", [indexing.Document("https://a.org", "", "A page.")])
        await indexing.search(runtime, "c", QUERIES[1], 3, None, None)
        await runtime.similarity(QUERIES[0], PASSAGES[:2])  # cached

    run(runtime, main)
    assert similarity.calls == [("query", QUERIES[:1]), ("passage", PASSAGES[:2])]
    assert embedder.calls == [("passage", PASSAGES[:2]), ("passage", ["A page."]), ("query", QUERIES[1:2])]
    assert runtime.ready_similarity_embedder() is similarity


def test_concurrent_similarity_and_embed_calls_never_share_a_model_call(tmp_path: Path) -> None:
    runtime = with_similarity_model(tmp_path)

    async def main() -> None:
        await behind_a_held_lane(runtime, [lambda: runtime.similarity(QUERIES[0], PASSAGES),
                                           lambda: runtime.embed(PASSAGES, "passage")], jobs=3)

    run(runtime, main)
    assert runtime.similarity_embedder.calls == [("query", QUERIES[:1]), ("passage", PASSAGES)]
    assert runtime.embedder.calls == [("passage", PASSAGES)]


def test_the_embed_speed_is_the_similarity_models_when_it_has_one(tmp_path: Path) -> None:
    runtime = with_similarity_model(tmp_path)

    async def main() -> None:
        await runtime.embed(PASSAGES, "passage")
        await indexing.upsert(runtime, "c", [indexing.Document("https://a.org", "", "A page.")])
        assert runtime.speed.speed("embed").calls == 0  # what agent-svc plans pass 2 with: not this model's time
        await runtime.similarity(QUERIES[0], PASSAGES)
        assert runtime.speed.speed("embed").calls == 2

    run(runtime, main)


def test_the_calibration_times_pass_2_with_the_similarity_model(tmp_path: Path) -> None:
    runtime = with_similarity_model(tmp_path)
    runtime.calibration = runtime._calibrate(runtime.embedder, runtime.reranker, runtime.similarity_embedder)
    run(runtime, lambda: asyncio.sleep(0))
    assert [(kind, len(texts)) for kind, texts in runtime.similarity_embedder.calls] == [("query", 1), ("passage", 28)]
    assert runtime.speed.speed("embed").source == "calibration"


def test_unknown_backends_are_refused_naming_the_registered_ones() -> None:
    check_backends(Settings(embed_backend="onnx", rerank_backend="bi-encoder-hybrid"))
    with pytest.raises(ValueError, match="EMBED_BACKEND='tensorflow' is not a backend; use auto or one of "
                                         "sentence-transformers, onnx, onnx-int8, flagembedding"):
        check_backends(Settings(embed_backend="tensorflow"))
    with pytest.raises(ValueError, match="SIMILARITY_BACKEND='tensorflow' is not a backend"):
        check_backends(Settings(similarity_model="intfloat/multilingual-e5-small", similarity_backend="tensorflow"))
    with pytest.raises(ValueError, match="one of cross-encoder, flag-reranker, bi-encoder-hybrid"):
        check_backends(Settings(rerank_backend="colbert"))


def test_the_settings_name_every_registered_backend() -> None:
    fields = Settings.model_fields
    for field, registry in (("embed_backend", EMBEDDERS), ("rerank_backend", RERANKERS)):
        assert all(name in str(fields[field].description) for name in registry), field
