"""URL normalization and de-duplication: one result per page, whichever engine or page of SearXNG found it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

T = TypeVar("T")

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TRACKING_PARAMS = frozenset({"fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "igshid", "ref_src"})


def normalize_url(url: str) -> str:
    """A key under which equivalent URLs collide.

    http and https, host case, a default port, a trailing slash, the fragment, tracking parameters and
    the order of query parameters do not make a different page.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    host = (parts.hostname or "").lower()
    if port and port != _DEFAULT_PORTS.get(parts.scheme.lower()):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/") or "/"
    query = urlencode(sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in _TRACKING_PARAMS
    )) if parts.query else ""  # most result URLs have none: skip parsing and encoding nothing
    return urlunsplit(("", host, path, query, "")).lstrip("/")


def dedupe(items: Iterable[T], url_of: Callable[[T], str]) -> list[T]:
    """Keep the first item of each normalized URL, in the given order."""
    seen: set[str] = set()
    unique = []
    for item in items:
        key = normalize_url(url_of(item))
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique
