"""What a job keeps of what it read: notes, each a passage cut to RESEARCH_NOTE_CHARS with the URL it came from,
at most RESEARCH_MAX_NOTES. Pages are dropped once noted, so that a job's memory and the report's context stay
bounded whatever it reads (Tavily's distilled reflections, in passages rather than an LLM's words)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from wisp_text.chunking import Chunk
from wisp_text.terms import content_terms

from agent.core.outcome import SearchOutcome
from agent.core.passage import Passage, snippet_chunk
from agent.core.sources import source

_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][\w.+-]+")  # a capitalised word after a lower-case one
PER_SEARCH = 5  # notes a search gives at most: its best passage of each of its best pages


@dataclass(frozen=True)
class Note:
    passage: Passage
    query: str  # the search that found it
    rank: int  # its place among that search's notes, from 0: the report reads every search's best first
    round: int


@dataclass(frozen=True)
class Notebook:
    notes: tuple[Note, ...] = ()
    max_notes: int = 24
    note_chars: int = 600

    def noted(self, passages: Iterable[Passage], query: str, round_: int) -> tuple[Notebook, int]:
        """The notebook with `passages` noted (one per page, PER_SEARCH at most, none it holds); how many are
        new."""
        held = {(n.passage.url, n.passage.text[:self.note_chars]) for n in self.notes}
        added: list[Note] = []
        urls: set[str] = set()
        for passage in passages:
            cut = _cut(passage, self.note_chars)
            if passage.url in urls or (cut.url, cut.text) in held:
                continue
            if len(self.notes) + len(added) >= self.max_notes or len(added) >= PER_SEARCH:
                break
            urls.add(passage.url)
            added.append(Note(cut, query, len(added), round_))
        return replace(self, notes=self.notes + tuple(added)), len(added)

    def for_report(self) -> list[Passage]:
        """The notes in the order the report reads them: every search's best, then every search's second…"""
        return [n.passage for n in sorted(self.notes, key=lambda n: (n.rank, n.round))]

    def text(self) -> str:
        return "\n".join(n.passage.scored_text for n in self.notes)

    def found_by(self, queries: Collection[str]) -> list[Passage]:
        return [n.passage for n in self.notes if n.query in queries]

    def covers(self, part: str, share: float = 0.75) -> bool:
        """Whether one note holds `share` of the content words of `part` (a part of the question) in its page's
        URL, title or text: the part was found, not merely its words spread over several pages."""
        wanted = set(content_terms(part))
        return not wanted or any(len(wanted & set(content_terms(f"{n.passage.url} {n.passage.scored_text}")))
                                 >= share * len(wanted) for n in self.notes)


def found_passages(outcome: SearchOutcome) -> list[Passage]:
    """What a search found, best first: its packed passages (a ranked mode read the pages), else its results'
    snippets."""
    if outcome.packed:
        return list(outcome.packed)
    hits = (h for name, bucket in outcome.buckets.items() if source(name).ranked for h in bucket)
    return [Passage(h.url, h.title, chunk) for h in hits if (chunk := snippet_chunk(h.title, h.content))]


def _cut(passage: Passage, chars: int) -> Passage:
    if len(passage.text) <= chars:
        return passage
    chunk = passage.chunk
    return replace(passage, chunk=Chunk(chunk.index, chunk.text[:chars].rsplit(" ", 1)[0] + " …", chunk.heading))


def salient_terms(passages: Sequence[Passage], known: Iterable[str], count: int,
                  background: Sequence[Passage] = ()) -> list[str]:
    """The words of `passages` that `known` (the question's) does not hold, most telling first: what the pages
    found that a follow-up should ask about (pseudo-relevance feedback). A word scores for each passage that holds
    it, for its uses, and for being a name (capitalised inside a sentence): the thing a bridge question's second
    hop is about; and it scores less the more of the `background` passages (everything the job noted) hold it, as
    a word every page uses ("data", "function") tells nothing."""
    skip = set(known)
    score: dict[str, float] = {}
    for passage in passages:
        terms = content_terms(passage.scored_text)
        names = {w.lower() for w in _NAME.findall(passage.text)}
        for term in terms:
            score[term] = score.get(term, 0.0) + 1.0
        for term in set(terms):
            score[term] += 2.0 + (2.0 if term in names else 0.0)
    spread = Counter(t for p in background for t in set(content_terms(p.scored_text)))
    rarity = {t: math.log((1 + len(background)) / (1 + spread[t])) + 1.0 for t in score}
    ranked = sorted((t for t in score if t not in skip), key=lambda t: -score[t] * rarity[t])
    return ranked[:count]
