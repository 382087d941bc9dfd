"""/v2/parse's `options` JSON as the SDKs send it, into a ParseJob: scrape's formats, Firecrawl's refusals of
what needs a page to load, and warnings for what is ignored."""

import json
from typing import Any

import pytest
from firecrawl.v2.types import ParseFormat

from agent.api.bodies import parsed
from agent.api.firecrawl.parse_wire import ParseOptions, formats_body
from agent.api.firecrawl.scrape_wire import MAX_FORMATS, MAX_TIMEOUT_MS
from agent.core.query import PageAsk
from agent.errors import InvalidRequest, UnsupportedParseOption
from agent.pages.uploads import FILE_TYPES
from agent.search.parse import ParseJob

# what firecrawl-py 4.55.0 sends as `options` for parse(file, options=ScrapeOptions(formats=[...]))
PY_SDK_OPTIONS = {"onlyMainContent": True, "removeBase64Images": True, "fastMode": False, "blockAds": True,
                  "mobile": False, "origin": "python-sdk@4.55.0"}


def job(options: dict[str, Any]) -> ParseJob:
    return parsed(json.dumps(options).encode(), ParseOptions).to_job(30.0)


def test_defaults_and_what_the_sdks_send() -> None:
    assert job({}) == ParseJob(("markdown",), (), True, 30_000)
    assert job({"origin": "js-sdk@4.42.0"}) == job({"origin": "python-sdk@4.55.0"}) == job({})
    sent = job({**PY_SDK_OPTIONS, "formats": ["markdown", {"type": "html"}, "rawHtml", "links"], "timeout": 9000})
    assert sent == ParseJob(("markdown", "html", "rawHtml", "links"), (), True, 9000)
    assert job({"onlyMainContent": False, "parsers": [{"type": "pdf", "mode": "fast"}]}).main_only is False


def test_llm_formats_become_asks_and_unsupported_ones_a_warning() -> None:
    parsed_job = job({"formats": ["summary", {"type": "json", "prompt": "the title"}, "images", "markdown"],
                      "includeTags": ["article"], "headers": {"x-a": "b"}, "timeout": MAX_TIMEOUT_MS + 1})
    assert parsed_job.asks == (PageAsk("summary"), PageAsk("json", None, "the title"))
    assert parsed_job.formats == ("markdown",) and parsed_job.timeout_ms == MAX_TIMEOUT_MS
    assert parsed_job.warnings == (
        f"timeout {MAX_TIMEOUT_MS + 1} ms is above Wisp's limit: the parse had {MAX_TIMEOUT_MS} ms",
        "formats ['images'] are not supported and were skipped",
        "includeTags, headers are not supported and were ignored")


@pytest.mark.parametrize(("options", "message"), [
    ({"actions": [{"type": "wait", "milliseconds": 100}]}, "Parse uploads do not support actions."),
    ({"waitFor": 1000}, "Parse uploads do not support waitFor."),
    ({"location": {"country": "de"}}, "Parse uploads do not support location overrides."),
    ({"mobile": True}, "Parse uploads do not support mobile rendering."),
    ({"proxy": "stealth"}, "Parse uploads only support proxy values of auto or basic."),
    ({"formats": ["markdown", "screenshot"]}, "Parse uploads do not support screenshot output."),
    ({"formats": [{"type": "changeTracking"}]}, "Parse uploads do not support change tracking."),
    ({"formats": ["branding"]}, "Parse uploads do not support branding output."),
    ({"formats": ["video"]}, "Parse uploads do not support video output."),
])
def test_what_needs_a_page_to_load_is_refused_as_firecrawl_refuses_it(options: dict, message: str) -> None:
    with pytest.raises(UnsupportedParseOption) as refused:
        job(options)
    assert (refused.value.status, refused.value.code, refused.value.message) == (400, "PARSE_UNSUPPORTED_OPTIONS",
                                                                                  message)


def test_what_a_parse_can_do_without_a_page_is_accepted() -> None:
    assert job({"actions": [], "waitFor": 0, "mobile": False, "proxy": "auto", "maxAge": 0}).warnings == ()


@pytest.mark.parametrize(("options", "field"), [
    ({"formats": ["markdown"] * (MAX_FORMATS + 1)}, "formats"),
    ({"formats": ["pdf"]}, "formats"),  # not a format Firecrawl names
    ({"formats": [{"type": "question"}]}, "formats"),  # a question format without its question
    ({"formats": ["summary", "summary"]}, "formats"),
    ({"formats": [3]}, "formats"),
    ({"onlyMainContent": "yes"}, "onlyMainContent"),
    ({"timeout": 0}, "timeout"),
    ({"includeTags": ["a"] * 101}, "includeTags"),
])
def test_bad_options_are_a_400_naming_the_field(options: dict, field: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        job(options)
    assert refused.value.details[0]["path"][0] == field and refused.value.code == "BAD_REQUEST"


def test_the_formats_list_is_every_file_type_as_firecrawl_py_reads_it() -> None:
    listed = [ParseFormat.model_validate(item) for item in formats_body()["data"]["formats"]]
    assert [f.format for f in listed] == [kind.name for kind in FILE_TYPES] == ["pdf", "docx", "html", "markdown",
                                                                                 "text"]
    assert all(f.available and f.kind == "document" and f.extensions and f.mime_types for f in listed)
