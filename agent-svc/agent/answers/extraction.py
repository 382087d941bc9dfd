"""/v2/extract's reading: pages → one JSON value and the URLs each of its fields came from.

The pages are packed in order into batches of at most RICH_CONTEXT_CHARS (a longer page is cut to it); each
batch is asked once through the structured-output path (structured.py: JSON mode, the schema in the prompt,
the schema applied in a worker, one repair). The batches' values are merged: objects key by key, arrays
concatenated without duplicates, a scalar from the first batch (in the pages' order) that has one. A merged
value the schema rejects (two batches' arrays past `maxItems`, say) gives way to the first batch's value, with a
warning.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from wisp_text.chunking import Chunk

from agent.answers.schemas import schema_problem
from agent.answers.structured import structured
from agent.core.context import CpuPool
from agent.core.passage import Passage
from agent.upstream.llm import LLMClient

AT_ONCE = 2  # batches sent to the LLM server together: a CPU server answers one at a time anyway
ANY_OBJECT: dict[str, Any] = {"type": "object"}  # a prompt without a schema still asks for a JSON object
SCHEMA_ONLY_PROMPT = "Extract the data that the JSON Schema describes."
NO_PROMPT = "Extract the main facts of these pages as a JSON object."  # urls alone, as Firecrawl accepts


@dataclass(frozen=True)
class PageText:
    url: str
    title: str
    text: str


@dataclass(frozen=True)
class ExtractedData:
    """The merged value and its sources, or `error` when no batch gave a valid value."""

    value: Any = None
    sources: dict[str, list[str]] | None = None
    warnings: tuple[str, ...] = ()
    error: str | None = None


def batches(pages: Sequence[PageText], budget_chars: int) -> list[list[PageText]]:
    """The pages in order, grouped so that each group's text fits `budget_chars`; a longer page is cut to it."""
    groups: list[list[PageText]] = []
    used = 0
    for page in pages:
        page = PageText(page.url, page.title, page.text[:budget_chars])
        if not groups or used + len(page.text) > budget_chars:
            groups.append([])
            used = 0
        groups[-1].append(page)
        used += len(page.text)
    return groups


async def extract_data(prompt: str | None, schema: dict[str, Any] | None, system_prompt: str | None,
                       pages: Sequence[PageText], budget_chars: int, llm: LLMClient,
                       remaining_s: Callable[[], float], pool: CpuPool) -> ExtractedData:
    """What the LLM read in `pages`, as one value valid against `schema` (any JSON object without one)."""
    question = prompt or (SCHEMA_ONLY_PROMPT if schema else NO_PROMPT)
    schema = schema or ANY_OBJECT
    groups = batches(pages, budget_chars)
    at_once = asyncio.Semaphore(AT_ONCE)

    async def ask(group: list[PageText]) -> tuple[Any, str | None]:
        async with at_once:
            passages = [Passage(p.url, p.title, Chunk(0, p.text, p.title)) for p in group]
            return await structured(question, passages, schema, system_prompt, llm, remaining_s, pool)

    answers = await asyncio.gather(*(ask(group) for group in groups))
    values = [(tuple(p.url for p in group), value) for group, (value, problem) in zip(groups, answers, strict=True)
              if problem is None]
    failures = [f"pages {', '.join(p.url for p in group)}: {problem}"
                for group, (_, problem) in zip(groups, answers, strict=True) if problem is not None]
    if not values:
        return ExtractedData(error=f"no valid JSON came out of the pages: {'; '.join(failures[:3])}")
    warnings = [f"{len(failures)} of {len(groups)} batches of pages gave no valid JSON: {'; '.join(failures[:3])}"] \
        if failures else []
    value = merged([v for _, v in values])
    if problem := await schema_problem(value, schema, pool):
        warnings.append(f"the batches' values merged do not validate ({problem}): the first batch's value is "
                        "returned")
        value, values = values[0][1], values[:1]
    return ExtractedData(value, sources_of(value, values), tuple(warnings))


def merged(values: Sequence[Any]) -> Any:
    """The values folded in order: objects key by key, arrays concatenated without duplicates, a scalar from
    the first value that has one (null, "", [] and {} have none)."""
    result: Any = None
    for value in values:
        result = value if result is None else _merge(result, value)
    return result


def _merge(first: Any, then: Any) -> Any:
    if isinstance(first, dict) and isinstance(then, dict):
        both = dict(first)
        for key, value in then.items():
            both[key] = _merge(first[key], value) if key in first else value
        return both
    if isinstance(first, list) and isinstance(then, list):
        return _unique(first + then)
    return then if _empty(first) else first


def sources_of(value: Any, values: Sequence[tuple[tuple[str, ...], Any]]) -> dict[str, list[str]]:
    """Firecrawl's `sources`: for each top-level field the URLs of the batches that gave what it holds, and
    for each item of an array `field[i]` those of the batches that held that item."""
    if isinstance(value, list):
        return _item_sources("", value, [(urls, v) for urls, v in values])
    if not isinstance(value, dict):
        return {}
    sources: dict[str, list[str]] = {}
    for key, kept in value.items():
        parts = [(urls, v.get(key)) for urls, v in values if isinstance(v, dict) and not _empty(v.get(key))]
        if _empty(kept) or not parts:
            continue
        same = parts if isinstance(kept, (list, dict)) else [(urls, part) for urls, part in parts if part == kept]
        sources[key] = _urls(urls for urls, _ in same)
        if isinstance(kept, list):
            sources.update(_item_sources(key, kept, parts))
    return sources


def _item_sources(key: str, items: list[Any], parts: list[tuple[tuple[str, ...], Any]]) -> dict[str, list[str]]:
    return {f"{key}[{i}]": _urls(urls for urls, part in parts if isinstance(part, list) and item in part)
            for i, item in enumerate(items)}


def _urls(groups: Any) -> list[str]:
    return list(dict.fromkeys(url for urls in groups for url in urls))


def _unique(items: list[Any]) -> list[Any]:
    seen: set[str] = set()
    kept = []
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}
