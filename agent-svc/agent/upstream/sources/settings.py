"""An extra candidate source and its tiers, as SEARCH_SOURCES describes them (upstream/settings.py). Off unless
configured.

A source's URL is the operator's, not a request's, so it is held to the rules of configuration (as SEARXNG_URL
is), not to the SSRF guard of fetched pages: http or https, a host, no credentials, query or fragment in it; it
may be a private address (a second Wisp in the same network). A key travels over https, or over plain http only to
a loopback or private address, or to a host name without a dot (a compose service): never in the clear over the
internet. Keys are secrets: no repr, log or error message shows them.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, StringConstraints, field_validator, model_validator

from agent.upstream.sources.kinds import KINDS

Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")]
RESERVED = frozenset({"searxng", "index"})  # what results already say they were found by


class TierConfig(BaseModel):
    """One way of asking a source (a keyed account, a free endpoint), tried in the order given."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Name
    url: str = Field(max_length=2000)
    key: SecretStr = SecretStr("")
    daily_cap: int = Field(0, ge=0, description="calls a UTC day at most (0: no cap)")
    reset_day: int = Field(1, ge=1, le=28, description="day of the month its credit comes back after a 402")

    @field_validator("url")
    @classmethod
    def _configured_url(cls, url: str) -> str:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"a source's url is http(s)://host[:port][/path], not {url!r}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValueError("a source's url carries no credentials, query or fragment (its key goes in `key`)")
        return url.strip().rstrip("/")

    @model_validator(mode="after")
    def _key_not_in_the_clear(self) -> TierConfig:
        parts = urlsplit(self.url)
        if self.key.get_secret_value() and parts.scheme == "http" and not _local(parts.hostname or ""):
            raise ValueError(f"tier {self.name}: a key is sent over https, or over http only to a local address "
                             f"({parts.hostname} is neither)")
        return self


def distinct_sources(sources: list[SourceConfig]) -> list[SourceConfig]:
    names = [s.name for s in sources]
    if len(set(names)) < len(names) or RESERVED & set(names):
        raise ValueError(f"sources have distinct names, none of {sorted(RESERVED)}")
    return sources


class SourceConfig(BaseModel):
    """One extra source: its kind of API, its tiers in order, how many results it gives a search."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Name
    kind: str
    tiers: list[TierConfig] = Field(min_length=1, max_length=4)
    max_results: int = Field(10, ge=1, le=50)
    text: bool = True  # ask for each result's page text where the API offers it

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r} is not one of {sorted(KINDS)}")
        return kind

    @field_validator("tiers")
    @classmethod
    def _distinct_tiers(cls, tiers: list[TierConfig]) -> list[TierConfig]:
        if len({t.name for t in tiers}) < len(tiers):
            raise ValueError("a source's tiers have distinct names")
        return tiers


def _local(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return host == "localhost" or "." not in host
    return address.is_loopback or address.is_private
