"""Stage 5, synthesize (seed 000's stage 4): the packed sources → the LLM's answer with inline [n] citations,
split into claims (one per sentence) with the numbers each cites.

Numbers follow the packed context (`pack.context_text`: each page numbered once, in packing order), so the
citations of an answer point at results returned in `data`. A number that points at no source is removed from
the text; the model says NO_ANSWER when the sources do not answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from wisp_text.sentences import split_sentences

from agent.core.passage import Passage
from agent.ranking.pack import context_text, headers

NO_ANSWER = "NO_ANSWER"
RULES = f"""Answer the question using only the numbered sources.
Put the number of the source after every sentence, like [1] or [1][2].
If the sources do not answer the question, reply with {NO_ANSWER} and nothing else.
Answer in at most five sentences."""

# [1], and the forms models write for several sources: [1, 2], [1-3] (each read as its numbers, [1][2][3])
_NUMBERS = r"\d{1,3}(?:\s*[-–,]\s*\d{1,3})*"
_MARKER = re.compile(rf"\s*\[({_NUMBERS})\]")
_MARKERS = re.compile(rf"(?:\s*\[{_NUMBERS}\])+")  # a run of them: `[1][2]`, `[1] [2]`
# lone punctuation with the markers after it, and whatever punctuation and markers follow: `this: [1][2].`,
# `done. [3]`, `x; [1]`, `this:\n. [1]` (the model's stop on a line of its own)
_PUNCTUATION_AND_MARKERS = re.compile(rf"[ \t]*[.!?:;,](?:\s*(?:[.!?:;,]|\[{_NUMBERS}\]))*")
_STOPS = re.compile(r"[.!?]")
_WORD = re.compile(r"\w")
_ABBREVIATION_END = re.compile(r"\b(?:e\.g|i\.e)\.$", re.IGNORECASE)
_RANGE = re.compile(r"(\d+)\s*[-–]\s*(\d+)")


@dataclass(frozen=True)
class Source:
    number: int
    url: str
    title: str
    texts: tuple[str, ...]  # its packed passages


@dataclass(frozen=True)
class Claim:
    text: str  # the sentence, without its markers
    citations: tuple[int, ...]


@dataclass(frozen=True)
class Draft:
    text: str  # with the markers that point at sources
    claims: tuple[Claim, ...]
    abstained: bool


def sources_of(packed: Sequence[Passage]) -> tuple[Source, ...]:
    """The packed passages grouped by page, numbered as `context_text` numbers them."""
    by_url: dict[str, list[Passage]] = {}
    for passage in packed:
        by_url.setdefault(passage.url, []).append(passage)
    return tuple(Source(n, url, passages[0].title, tuple(p.text for p in passages))
                 for n, (url, passages) in enumerate(by_url.items(), 1))


def messages(question: str, packed: Sequence[Passage], system_prompt: str | None, rules: str = RULES,
             after: str = "") -> list[dict[str, str]]:
    """The chat: the caller's system prompt verbatim, then Wisp's `rules` (which it cannot switch off), then
    the numbered sources and the question (and `after` it)."""
    system = f"{system_prompt}\n\n{rules}" if system_prompt else rules
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Sources:\n\n{context_text(list(packed))}\n\nQuestion: {question}{after}"}]


def without_prompt(reply: str, question: str, packed: Sequence[Passage]) -> str:
    """The reply without the lines it copied from its instructions: Wisp's rules, the `Sources:` label, the
    sources' header lines and the question (a small base model writes its prompt back). Sentences it copied
    from the sources stay: they cite them, and the claim check judges them like any other."""
    copied = {line.strip() for line in RULES.splitlines()} | set(headers(list(packed))) | {f"Question: {question}"}
    lines = (re.sub(r"^\s*Sources:\s*", "", line) for line in reply.splitlines())
    return "\n".join(line for line in lines if line.strip() and line.strip() not in copied).strip()


def draft(reply: str, sources: Sequence[Source]) -> Draft:
    """The reply as an answer: numbers that point at no source dropped, one claim per sentence."""
    known = {s.number for s in sources}
    if reply.strip().upper().startswith(NO_ANSWER) or not reply.strip():
        return Draft("", (), abstained=True)
    text = _MARKERS.sub(lambda m: _marker([n for n in _numbers_in(m[0]) if n in known]),
                        reply.replace(NO_ANSWER, "")).strip()
    claims = tuple(_claim(sentence) for sentence in _sentences(text))
    return Draft(text, tuple(c for c in claims if _WORD.search(c.text)), abstained=False)


def _marker(numbers: Sequence[int]) -> str:
    """One citation as the answer writes it: ` [1][2]`, the form the rules ask for and models stream, so that a
    streamed answer and the same answer whole read alike."""
    return " " + "".join(f"[{n}]" for n in numbers) if numbers else ""


def sentences(text: str) -> list[str]:
    """The text's sentences, and each line a sentence of its own (a list item or a heading has no stop)."""
    return split_sentences(text, at_line_breaks=True)


def _sentences(text: str) -> list[str]:
    """Sentences, each with its markers: markers after lone punctuation (`… value. [2]`, `… is this: [1][2].`)
    belong to the sentence before them, and `e.g.`/`i.e.` end none (`Use a flag, e.g. --force [1].` is one
    claim, citing [1])."""
    merged: list[str] = []
    for sentence in sentences(_PUNCTUATION_AND_MARKERS.sub(_markers_first, text)):
        if merged and _ABBREVIATION_END.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {sentence}"
        else:
            merged.append(sentence)
    return merged


def _markers_first(match: re.Match[str]) -> str:
    """Punctuation with markers among it as the markers, then one mark: the last stop (`.`, `!`, `?`) if there is
    one, else the first mark (`x; [1]` → `x [1];`), and the line break it held, so the sentence ends there."""
    run = match[0]
    markers = "".join(f"[{m[1]}]" for m in _MARKER.finditer(run))
    if not markers:
        return run
    stops = _STOPS.findall(run)
    mark = stops[-1] if stops else run.strip()[0]
    return f" {markers}{mark}" + ("\n" if "\n" in run else "")


def cited_numbers(marker: str) -> list[int]:
    """The numbers inside one marker's brackets: `1, 2` → [1, 2]; `1-3` → [1, 2, 3] (a backward range: its ends)."""
    numbers: list[int] = []
    for part in marker.split(","):
        if bounds := _RANGE.fullmatch(part.strip()):
            low, high = int(bounds[1]), int(bounds[2])
            numbers += range(low, high + 1) if low <= high else [low, high]
        else:
            numbers.append(int(part))
    return numbers


def marker_spans(text: str) -> list[tuple[int, int, int]]:
    """(number, start, end) of each number a marker in `text` cites, `text[start:end]` being its marker (`[2]`,
    or `[1, 2]` for each of 1 and 2): for the model's words as they streamed as for a `draft`'s text."""
    return [(n, m.start(1) - 1, m.end()) for m in _MARKER.finditer(text) for n in cited_numbers(m[1])]


def _numbers_in(text: str) -> tuple[int, ...]:
    """The numbers the markers in `text` cite, each once, in order."""
    return tuple(dict.fromkeys(n for marker in _MARKER.findall(text) for n in cited_numbers(marker)))


def _claim(sentence: str) -> Claim:
    numbers = _numbers_in(sentence)
    # `pages .` where a marker stood, but not `a .js file` as a page writes it
    return Claim(re.sub(r"\s+([.!?,;:])(?!\S)", r"\1", _MARKER.sub("", sentence)).strip(), numbers)
