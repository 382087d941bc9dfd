"""semantic-svc's Settings: what the similarity embedder reads, and the settings refused at start."""

import pytest

from semantic.config import OFFLINE_EMBED_MODEL, Settings


def test_an_empty_similarity_model_leaves_similarity_to_the_embedder() -> None:
    assert Settings().similarity_embedder() is None


def test_the_similarity_embedder_reads_its_own_model_backend_and_prefixes_and_shares_the_rest() -> None:
    settings = Settings(embed_query_prefix="Represent: ", embed_onnx_file="onnx/model.onnx", model_device="auto",
                        batch_size=8, similarity_model="intfloat/multilingual-e5-small", similarity_backend="onnx",
                        similarity_query_prefix="query: ", similarity_passage_prefix="passage: ")
    similarity = settings.similarity_embedder()
    assert similarity is not None
    assert (similarity.embed_model, similarity.embed_backend) == ("intfloat/multilingual-e5-small", "onnx")
    assert (similarity.embed_query_prefix, similarity.embed_passage_prefix) == ("query: ", "passage: ")
    assert similarity.embed_onnx_file == ""  # the embedder's file lies in another model's folder
    assert (similarity.model_device, similarity.batch_size) == ("auto", 8)
    assert (settings.embed_model, settings.embed_query_prefix) == (OFFLINE_EMBED_MODEL, "Represent: ")


def test_the_other_similarity_settings_wait_for_a_similarity_model() -> None:
    # a compose override blanks SIMILARITY_MODEL alone: the prefixes meant for it must not stop the service
    assert Settings(similarity_backend="onnx", similarity_query_prefix="query: ").similarity_embedder() is None


def test_unknown_devices_are_refused() -> None:
    # unknown backends are refused where the registries are, when the app is created (test_runtime)
    with pytest.raises(ValueError, match="model_device"):
        Settings(model_device="tpu")
    assert Settings().model_device == "cpu"
