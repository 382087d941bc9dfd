import numpy as np

from semantic.lane.embed_cache import EmbeddingCache
from semantic.models.embedders import EncodedText


def row(value: float) -> EncodedText:
    return EncodedText(np.full(2, value, dtype=np.float32), None, False)


def test_the_least_recently_used_entry_goes_first() -> None:
    cache = EmbeddingCache(2)
    cache.put("m", "passage", "a", row(1))
    cache.put("m", "passage", "b", row(2))
    assert cache.get("m", "passage", "a") is not None  # now b is the least recently used
    cache.put("m", "passage", "c", row(3))
    assert cache.get("m", "passage", "b") is None
    assert cache.get("m", "passage", "a").dense[0] == 1 and cache.get("m", "passage", "c").dense[0] == 3
    assert cache.stats().entries == 2


def test_model_and_kind_are_part_of_the_key() -> None:
    cache = EmbeddingCache(10)
    cache.put("m", "passage", "a", row(1))
    assert cache.get("m", "query", "a") is None and cache.get("other", "passage", "a") is None
    assert (cache.stats().hits, cache.stats().misses) == (0, 2)


def test_size_zero_keeps_nothing() -> None:
    cache = EmbeddingCache(0)
    cache.put("m", "passage", "a", row(1))
    assert cache.get("m", "passage", "a") is None and cache.stats().entries == 0
