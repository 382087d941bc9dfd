"""A crawl's options from a prompt ("only the blog posts, at most 50 pages"), as Firecrawl's `prompt` on
/v2/crawl and POST /v2/crawl/params-preview derive them: the site is mapped first (its sitemap, its links, within a
few seconds), then the LLM picks `includePaths`, `excludePaths`, `maxDiscoveryDepth` and `limit` from the prompt
and the site's own folders. Its reply is validated (patterns that compile, within the crawl's bounds); without an
LLM, or when its reply is not valid, the prompt's words pick the folders whose names they hold (after "except",
"not", "skip", "without": to exclude), and "50 pages" or "2 levels deep" set the bounds."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import re2
from wisp_text.terms import content_terms

from agent.index.map.site_map import MapJob, MapTools, map_site
from agent.upstream.llm import LLMClient, LLMUnavailable

MAP_TIMEOUT_S = 8.0
MAP_LIMIT = 500
LLM_BUDGET_S = 20.0
FOLDERS_SHOWN = 40
MAX_PATTERNS = 10
MAX_DEPTH = 20
OPTIONS_SCHEMA = {"type": "object", "properties": {
    "includePaths": {"type": "array", "items": {"type": "string"}},
    "excludePaths": {"type": "array", "items": {"type": "string"}},
    "maxDiscoveryDepth": {"type": "integer"}, "limit": {"type": "integer"}}}
_NEGATION = re.compile(r"\b(?:except|excluding|exclude|not|no|skip|skipping|without|ignore|ignoring)\b", re.I)
_LIMIT = re.compile(r"\b(\d{1,6})\s+(?:pages?|urls?|documents?|results?)\b", re.I)
_DEPTH = re.compile(r"\b(\d{1,2})\s+levels?\b|\bdepth\s+(?:of\s+)?(\d{1,2})\b", re.I)
_PATH = re.compile(r"(?<![\w.])/[\w.-]+(?:/[\w.-]+)*/?")


@dataclass(frozen=True)
class PromptedOptions:
    """The options a prompt gave, in Firecrawl's wire names, and how they were derived."""

    options: dict[str, Any]
    warnings: tuple[str, ...]


async def crawl_options_from(url: str, prompt: str, llm: LLMClient, tools: MapTools, max_pages: int
                             ) -> PromptedOptions:
    """The crawl options `prompt` asks for on the site of `url`."""
    site = await map_site(MapJob(url, MAP_LIMIT, MAP_TIMEOUT_S, sitemap="include", subdomains=False), tools)
    base = _folder_of(url)
    folders = _folders(base, [link.url for link in site.links])
    warnings = list(site.warnings)
    if llm.base_url:
        chosen, problem = await _asked(llm, prompt, base, folders, max_pages)
        if chosen is not None:
            return PromptedOptions(chosen, tuple(warnings))
        warnings.append(f"the LLM's crawl options were not used ({problem}): they were read from the prompt's words")
    return PromptedOptions(from_words(prompt, base, folders, max_pages), tuple(warnings))


def from_words(prompt: str, base: str, folders: list[str], max_pages: int) -> dict[str, Any]:
    """The options the prompt's own words give: the site's folders it names (to exclude after a negation), the
    paths it writes out, a number of pages, a depth."""
    include, exclude = [], []
    for clause in re.split(r"[,;.]|\bbut\b|\band\b", prompt):
        negated = _NEGATION.search(clause)
        wanted = {_singular(t) for t in content_terms(clause[negated.end():] if negated else clause)}
        named = _named_folders(wanted, folders) + [p.strip("/") for p in _PATH.findall(clause)]
        (exclude if negated else include).extend(named)
    options: dict[str, Any] = {}
    if include := [_pattern(base, f) for f in dict.fromkeys(include) if f not in exclude][:MAX_PATTERNS]:
        options["includePaths"] = include
    if exclude := [_pattern(base, f) for f in dict.fromkeys(exclude)][:MAX_PATTERNS]:
        options["excludePaths"] = exclude
    if limit := _LIMIT.search(prompt):
        options["limit"] = min(max(int(limit.group(1)), 1), max_pages)
    if depth := _DEPTH.search(prompt):
        options["maxDiscoveryDepth"] = min(int(depth.group(1) or depth.group(2)), MAX_DEPTH)
    return options


def _named_folders(wanted: set[str], folders: list[str]) -> list[str]:
    """The folders whose name the words name best: the share of its words (or of its one word, a word of the
    prompt inside it: "release" in "releaselog") that the prompt holds, the best share when it is half or more."""
    def share(folder: str) -> float:
        words = {_singular(t) for t in content_terms(folder.replace("-", " ").replace("_", " "))}
        held = {w for w in words if any(t == w or (len(t) > 3 and t in w) for t in wanted)}
        return len(held) / len(words) if words else 0.0

    scores = {folder: share(folder) for folder in folders}
    best = max(scores.values(), default=0.0)
    return [folder for folder, score in scores.items() if score == best] if best >= 0.5 else []


async def _asked(llm: LLMClient, prompt: str, base: str, folders: list[str], max_pages: int
                 ) -> tuple[dict[str, Any] | None, str]:
    shown = ", ".join(folders[:FOLDERS_SHOWN]) or "(none found)"
    ask = (f"A crawl starts at the folder {base} of a web site. Its sub-folders: {shown}.\n"
           f"The user wants: {prompt}\n\nAnswer with JSON: includePaths and excludePaths (regular expressions on "
           f"the URL path, e.g. \"^{base}blog/\"), maxDiscoveryDepth and limit (pages) only if the user asks.")
    try:
        reply = await llm.complete([{"role": "user", "content": ask}], LLM_BUDGET_S, schema=OPTIONS_SCHEMA)
    except LLMUnavailable as e:
        return None, f"the LLM failed: {e}"
    return validated(reply.text, max_pages)


def validated(reply: str, max_pages: int) -> tuple[dict[str, Any] | None, str]:
    """The LLM's options when they are valid crawl options, else None and why not."""
    try:
        value = json.loads(reply)
    except ValueError:
        return None, "not JSON"
    if not isinstance(value, dict):
        return None, "not an object"
    options: dict[str, Any] = {}
    for name in ("includePaths", "excludePaths"):
        patterns = value.get(name) or []
        if not isinstance(patterns, list) or len(patterns) > MAX_PATTERNS or not all(
                isinstance(p, str) and 0 < len(p) <= 200 and _compiles(p) for p in patterns):
            return None, f"{name} is not a short list of regular expressions"
        if patterns:
            options[name] = patterns
    for name, bound in (("maxDiscoveryDepth", MAX_DEPTH), ("limit", max_pages)):
        number = value.get(name)
        if number is None:
            continue
        if not isinstance(number, int) or isinstance(number, bool) or not 0 <= number <= bound:
            return None, f"{name} is not a whole number from 0 to {bound}"
        options[name] = number
    return (options, "") if options else (None, "it set no option")


def _compiles(pattern: str) -> bool:
    try:
        re2.compile(pattern)
    except re2.error:
        return False
    return True


def _folder_of(url: str) -> str:
    path = urlsplit(url).path or "/"
    return path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"


def _folders(base: str, urls: list[str]) -> list[str]:
    """The site's folders right below `base`, most pages first."""
    counts = Counter(path[len(base):].split("/", 1)[0] for url in urls
                     if (path := urlsplit(url).path).startswith(base) and "/" in path[len(base):])
    return [folder for folder, _ in counts.most_common() if folder]


def _pattern(base: str, folder: str) -> str:
    folder = folder.strip("/")
    path = folder if folder.startswith(base.strip("/")) and base != "/" else f"{base.strip('/')}/{folder}".strip("/")
    return f"^/{re.escape(path)}(?:/|$)"


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
