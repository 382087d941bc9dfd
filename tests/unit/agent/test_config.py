"""agent-svc's Settings: combinations that cannot work are refused when the settings are read, at start-up."""

import pytest
from pydantic import ValidationError

from agent.config import Settings


def test_a_redis_page_cache_without_redis_url_is_refused() -> None:
    with pytest.raises(ValidationError, match="PAGE_CACHE=redis keeps pages in the Redis of REDIS_URL"):
        Settings.of(page_cache="redis", redis_url="")
    assert Settings.of(page_cache="redis", redis_url="redis://127.0.0.1:6379/0").page_cache.page_cache == "redis"


def test_a_retired_variable_set_is_named_with_what_replaced_it() -> None:
    from agent.config import retired_variables

    assert retired_variables({"PATH": "/bin"}) == []
    [warning] = retired_variables({"HYBRID_MARGIN": "2.2"})
    assert warning.startswith("HYBRID_MARGIN is no longer read: it is replaced by RELEVANCE_MARGIN")
