"""SEARCH_SOURCES as configuration: off unless set, read from one JSON variable, its URLs held to the rules of
configuration (not the SSRF guard of requests), a key never sent in the clear over the internet, nor shown."""

import pytest
from pydantic import ValidationError

from agent.upstream.settings import SourcesSettings


def settings(*tiers: dict, kind: str = "exa", name: str = "exa") -> SourcesSettings:
    return SourcesSettings(search_sources=[{"name": name, "kind": kind, "tiers": list(tiers)}])


def test_off_unless_configured() -> None:
    assert SourcesSettings().search_sources == []


def test_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARCH_SOURCES", '[{"name": "wisp2", "kind": "tavily", "tiers": [{"name": "lan", "url": '
                                         '"http://wisp2:8088/", "key": "k"}], "max_results": 5}]')
    source = SourcesSettings().search_sources[0]
    assert (source.name, source.kind, source.max_results, source.tiers[0].url) == ("wisp2", "tavily", 5,
                                                                                   "http://wisp2:8088")
    assert source.tiers[0].key.get_secret_value() == "k" and "'k'" not in repr(source)


@pytest.mark.parametrize("url", ["http://10.0.0.5:8088", "http://127.0.0.1:9", "http://searxng:8080",
                                 "https://api.exa.ai", "http://[::1]:8080"])
def test_private_addresses_are_the_operators_choice(url: str) -> None:
    assert settings({"name": "t", "url": url, "key": "k"}).search_sources[0].tiers[0].url == url


@pytest.mark.parametrize(("tier", "said"), [
    ({"name": "t", "url": "http://api.exa.ai", "key": "k"}, "over https"),
    ({"name": "t", "url": "ftp://api.exa.ai"}, "http(s)"),
    ({"name": "t", "url": "https://user:pw@api.exa.ai"}, "no credentials"),
    ({"name": "t", "url": "https://api.exa.ai/?apiKey=k"}, "no credentials"),
    ({"name": "t", "url": "https://api.exa.ai", "cost": 1}, "Extra inputs"),
    ({"name": "T!", "url": "https://api.exa.ai"}, "pattern"),
    ({"name": "t", "url": "https://api.exa.ai", "reset_day": 31}, "less than or equal to 28"),
])
def test_bad_tiers_are_refused_at_start(tier: dict, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        settings(tier)


def test_bad_sources_are_refused_at_start() -> None:
    tier = {"name": "t", "url": "https://api.test"}
    with pytest.raises(ValidationError, match="not one of"):
        settings(tier, kind="bing")
    with pytest.raises(ValidationError, match="distinct names"):
        settings(tier, name="searxng")
    with pytest.raises(ValidationError, match="distinct names"):
        settings(tier, tier)
