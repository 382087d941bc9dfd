"""The lexical half of the claim check: the exact terms a claim rests on must appear in what it cites.

Embedding similarity scores an on-topic sentence with one wrong version, number, flag or name as close as the
right one, and those are the errors that hurt most in answers about software. So the numbers, versions,
identifiers (code spans, CLI flags, `snake_case`, `CamelCase`, dotted names, paths) and capitalised names of a
claim are looked up in its cited passages, after the same normalisation of both sides (`1,000` = `1000`,
`v3.11` = `3.11`, case ignored). A negation the claim adds and no cited passage states is missing too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CODE_SPAN = re.compile(r"`([^`]+)`")
_NUMBER = re.compile(r"(?<![\w.])v?\d+(?:[.,:]\d+)*(?:%|[a-z]{1,2}\b)?", re.IGNORECASE)
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_IDENTIFIER = re.compile(
    r"(?<![\w/.:])(?:"
    r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+(?:\(\))?"  # C++ and Rust paths: std::swap, MaybeUninit::uninit()
    r"|[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+(?:\(\))?"  # dotted names: os.path.join, pg_hba.conf (not e.g)
    r"|[A-Za-z_]\w*\(\)"  # calls: end()
    r"|[A-Za-z_]\w*_\w+"  # snake_case
    r"|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z]{2,}\w*"  # camelCase, CamelCase, ACRONYMS
    r"|[A-Za-z]+\d\w*"  # letters and digits: wasm32, sqlite3
    r"|~?/?[\w.-]+(?:/[\w.-]+)+/?"  # paths
    r")")
_NAME = re.compile(r"(?<![\w.-])[A-Z](?:[a-z]|-\w)[\w-]*")  # Django, B-trees
_NEGATION = re.compile(r"\b(?:not|never|no|cannot|none|neither|nor|without)\b|n't\b", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_VERSION_PREFIX = re.compile(r"(?<![\w.])v(?=\d)", re.IGNORECASE)
_TRAILING_STOP = re.compile(r"[.,:;]+$")


def missing_terms(claim: str, evidence: Iterable[str]) -> tuple[str, ...]:
    """The claim's key terms, as the claim writes them, that no cited passage contains (in the claim's order),
    and a negation it adds where no cited passage has one. (A negation it drops is not looked for: on the
    judged claim set, eval/data/claims, that flagged as many right paraphrases as wrong claims.)"""
    haystack = normalised(" ".join(evidence))
    missing = [term for term in key_terms(claim) if not _contains(haystack, normalised(term))]
    if (negation := _NEGATION.search(claim)) and not _NEGATION.search(haystack):
        missing.append(negation[0])
    return tuple(missing)


def key_terms(claim: str) -> tuple[str, ...]:
    """The numbers, versions, identifiers and capitalised names of a claim, each once.

    The claim's first word is a name only when something else marks it (a capital sentence start says nothing)."""
    spans = [m[1] for m in _CODE_SPAN.finditer(claim)]
    prose = _CODE_SPAN.sub(" ", claim)
    terms = [*spans, *_FLAG.findall(prose), *_IDENTIFIER.findall(prose), *_NUMBER.findall(prose)]
    first_word = re.match(r"\W*(\w+)", prose)
    terms += [n for n in _NAME.findall(prose) if not (first_word and n == first_word[1])]
    return _without_parts(dict.fromkeys(_TRAILING_STOP.sub("", t) for t in terms if t.strip()))


def normalised(text: str) -> str:
    """Lower case, no thousands separators, no `v` before a version, no code-span backticks."""
    return _VERSION_PREFIX.sub("", _THOUSANDS.sub("", text.replace("`", " "))).lower()


def _contains(haystack: str, term: str) -> bool:
    # a number must not match inside a longer one (3.11 is not in 3.110, 13.11 nor 3.11.2), a flag inside a
    # longer flag (--force is not in --force-with-lease, -f not in --f); 7 is in 7-bit, 10 in 2009-10-14 and 4 in
    # Listing 12-4 (a copied date or range is split into its numbers), os.path in os.path.join
    flag = term.startswith("-")
    before, after = (r"(?<![\w.-])", r"(?!\w|-\w|\.\d)") if flag else (r"(?<![\w.])", r"(?!\w|\.\d)")
    return re.search(rf"{before}{re.escape(term)}{after}", haystack) is not None


def _without_parts(terms: Iterable[str]) -> tuple[str, ...]:
    """The terms, less those inside a longer one (`path` inside `os.path.join`): the longer one is checked."""
    kept = [t for t in terms if t]
    return tuple(t for t in kept if not any(t != other and _part_of(t, other) for other in kept))


def _part_of(term: str, other: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", other) is not None
