"""The start-up calibration with fake models on a fake clock: what it times, estimates and warns of."""

import pytest

from semantic.models.calibration import QUERY, calibrate, shortlist
from semantic.models.embedders import Encoded, Kind
from semantic.models.rerankers import Scored


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowEmbedder:
    """Takes `ms_per_kchar` of the fake clock per 1,000 characters it encodes."""

    name, backend, dimension, max_tokens, has_sparse = "slow-embedder", "fake", 2, 256, False

    def __init__(self, clock: Clock, ms_per_kchar: float) -> None:
        self.clock, self.ms_per_kchar = clock, ms_per_kchar

    def encode(self, texts: list[str], kind: Kind) -> Encoded:
        self.clock.now += sum(map(len, texts)) * self.ms_per_kchar / 1e6
        return Encoded(None)  # type: ignore[arg-type]


class SlowReranker:
    name, backend, is_cross_encoder = "slow-reranker", "cross-encoder", True

    def __init__(self, clock: Clock, ms_per_kchar: float) -> None:
        self.clock, self.ms_per_kchar = clock, ms_per_kchar

    def score(self, query: str, passages: list[str]) -> Scored:
        self.clock.now += sum(len(query) + len(p) for p in passages) * self.ms_per_kchar / 1e6
        return Scored([0.0] * len(passages))


def calibrated(rerank_ms_per_kchar: float, embed_ms_per_kchar: float, deadline_s: float = 8.0):
    clock = Clock()
    return calibrate(SlowEmbedder(clock, embed_ms_per_kchar), SlowReranker(clock, rerank_ms_per_kchar),
                     chunk_chars=1000, deadline_s=deadline_s, share=0.5, clock=clock)


def test_the_shortlist_is_shaped_like_hybrids() -> None:
    texts = shortlist()
    assert all(1150 <= len(t) <= 1200 for t in texts[:16]) and all(220 <= len(t) <= 250 for t in texts[16:])
    assert len(texts) == len(set(texts)) == 28


def test_the_calibration_times_each_model_and_estimates_agent_svcs_stages() -> None:
    calibration = calibrated(rerank_ms_per_kchar=40, embed_ms_per_kchar=20)
    chars = sum(map(len, shortlist()))
    pair_chars = chars + 28 * len(QUERY)
    assert (calibration.rerank.model, calibration.rerank.texts, calibration.rerank.chars) == (
        "slow-reranker", 28, pair_chars)
    assert calibration.rerank.ms == pytest.approx(pair_chars * 40 / 1000, abs=0.1)
    assert calibration.embed.ms == pytest.approx(chars * 20 / 1000, abs=0.1)
    estimates = calibration.estimates
    assert estimates.hybrid_rerank_ms == calibration.rerank.ms and estimates.semantic_pass2_ms == calibration.embed.ms
    assert estimates.query_embedding_ms == pytest.approx(len(QUERY) * 20 / 1000, abs=0.1)
    assert estimates.indexing_chunks_per_s == pytest.approx(50, abs=0.1)  # 20 ms per 1,000-character chunk
    assert (calibration.deadline_s, calibration.budget_s) == (8.0, 4.0)
    assert calibration.warnings() == []


def test_a_stage_over_its_share_of_the_deadline_is_a_warning_naming_the_model_estimate_and_deadline() -> None:
    calibration = calibrated(rerank_ms_per_kchar=1200, embed_ms_per_kchar=20)  # a 568M cross-encoder on 2 cores
    [warning] = calibration.warnings()
    seconds = calibration.estimates.hybrid_rerank_ms / 1000
    assert warning.startswith(f"the reranker slow-reranker takes about {seconds:.1f} s for hybrid's rerank")
    assert "the 4.0 s it may use of agent-svc's 8.0 s deadline" in warning
    both = calibrated(rerank_ms_per_kchar=1200, embed_ms_per_kchar=1200).warnings()
    assert [w.split(" takes")[0] for w in both] == ["the reranker slow-reranker", "the embedder slow-embedder"]
    assert calibrated(rerank_ms_per_kchar=1200, embed_ms_per_kchar=20, deadline_s=80).warnings() == []


def test_pass_2_is_timed_with_the_similarity_model_and_indexing_with_the_embedder() -> None:
    clock = Clock()
    similarity = SlowEmbedder(clock, ms_per_kchar=20)
    similarity.name = "small-embedder"
    calibration = calibrate(SlowEmbedder(clock, 1200), SlowReranker(clock, 40), chunk_chars=1000, deadline_s=8.0,
                            share=0.5, clock=clock, similarity=similarity)
    chars = sum(map(len, shortlist()))
    assert (calibration.similarity.model, calibration.embed.model) == ("small-embedder", "slow-embedder")
    assert calibration.estimates.semantic_pass2_ms == calibration.similarity.ms == pytest.approx(chars * 20 / 1000,
                                                                                                 abs=0.1)
    assert calibration.estimates.indexing_chunks_per_s == pytest.approx(1000 / 1200, abs=0.1)
    assert calibration.estimates.query_embedding_ms == pytest.approx(len(QUERY) * 1200 / 1000, abs=0.1)
    assert calibration.warnings() == []  # the embedder is slow, but pass 2 is not its work
    similarity.ms_per_kchar = 1200
    slow = calibrate(SlowEmbedder(clock, 20), SlowReranker(clock, 40), chunk_chars=1000, deadline_s=8.0, share=0.5,
                     clock=clock, similarity=similarity).warnings()
    assert [w.split(" takes")[0] for w in slow] == ["the embedder small-embedder"]


def test_one_embedder_for_everything_is_timed_once() -> None:
    calibration = calibrated(rerank_ms_per_kchar=40, embed_ms_per_kchar=20)
    assert calibration.similarity is calibration.embed
