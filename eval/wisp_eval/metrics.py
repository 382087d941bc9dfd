"""The measures of one ranked answer, and the statistics over many (seed 001's definitions)."""

from __future__ import annotations

import math
import re
from ipaddress import ip_address
from urllib.parse import unquote, urlsplit

_LOCAL_HOSTS = {"localhost"}


def page_key(url: str) -> str:
    """A result URL as the qrels name pages: host/path, no scheme, no fragment.

    The offline web serves http://127.0.0.1:PORT/<host>/<path>; its loopback origin is dropped too.
    """
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    path = unquote(parts.path)
    query = f"?{parts.query}" if parts.query else ""
    first_segment = path.lstrip("/").split("/", 1)[0]
    if _is_local(host) and "." in first_segment:
        return path.lstrip("/") + query
    return host + path + query


def dcg(grades: list[int]) -> float:
    return sum((2**g - 1) / math.log2(rank + 1) for rank, g in enumerate(grades, 1))


def ndcg_at_k(ranked_pages: list[str], judged: dict[str, int], k: int = 5) -> float | None:
    """Page-level nDCG@k; None when the query has no relevant judgment (it is then left out of means)."""
    ideal = dcg(sorted(judged.values(), reverse=True)[:k])
    if ideal <= 0:
        return None
    return dcg(_gains(ranked_pages[:k], judged)) / ideal


def success_at_k(ranked_pages: list[str], judged: dict[str, int], k: int = 5, min_grade: int = 2) -> bool:
    return any(g >= min_grade for g in _gains(ranked_pages[:k], judged))


def contains_answer(text: str, answer_keys: tuple[str, ...]) -> bool:
    """Whether any answer key occurs in `text`, ignoring case and whitespace differences."""
    haystack = _squash(text)
    return any(_squash(key) in haystack for key in answer_keys)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value; ties are left out before calling."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def percentile(values: list[float], q: float) -> float | None:
    """The q-quantile (0..1) by linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _gains(pages: list[str], judged: dict[str, int]) -> list[int]:
    """Each rank's grade; a page seen at a better rank (another chunk or fragment of it) gains nothing again."""
    seen: set[str] = set()
    gains = []
    for page in pages:
        gains.append(0 if page in seen else judged.get(page, 0))
        seen.add(page)
    return gains


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _is_local(host: str) -> bool:
    if host in _LOCAL_HOSTS:
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
