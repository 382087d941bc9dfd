"""A request's JSON as hostile input: huge numbers, deep nesting, strings left open. Each is a 4xx, reached without
a stall (the body is read on the event loop)."""

import json

import pytest

from agent.api.firecrawl.search_wire import V2SearchRequest, parse_request
from agent.api.gate.body_limits import RequestLimits, parsed_json
from agent.errors import BadRequest, InvalidJson, InvalidRequestBody

LIMITS = RequestLimits()
BODY_BYTES = 1_900_000  # under MAX_BODY_BYTES' default: what reaches the parser


def test_a_number_of_a_million_digits_is_malformed_json_not_a_conversion() -> None:
    # Python's int-string conversion limit (4300 digits) refuses it before any quadratic conversion
    with pytest.raises(InvalidJson) as refused:
        parsed_json(b'{"query": "q", "limit": ' + b"1" * 1_000_000 + b"}", LIMITS)
    assert refused.value.status == 400


@pytest.mark.parametrize("number", [b"1" * 4000, b"1e999999", b"-1e999999", b"1." + b"1" * 1_000_000, b"2e-999999"])
def test_numbers_json_reads_are_refused_by_the_request_model(number: bytes) -> None:
    with pytest.raises(InvalidRequestBody) as refused:
        parse_request(b'{"query": "q", "limit": ' + number + b"}", V2SearchRequest)
    assert refused.value.status == 400


def test_nesting_past_the_limit_is_refused_before_json_loads_recurses() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(BadRequest, match=f"deeper than {LIMITS.max_depth} levels"):
        parsed_json(b'{"query": ' + deep + b"}", LIMITS)
    # brackets inside strings, escaped quotes included, are not nesting
    flat = json.dumps({"query": '\\"[[[' * 1000 + "{" * 1000}).encode()
    assert parsed_json(flat, LIMITS)["query"].startswith('\\"[[[')


def test_a_string_left_open_on_escaped_quotes_is_malformed_json_at_once() -> None:
    # before: from every quote on, the depth check rescanned the rest of the body for a closing one (16 KB took
    # 0.8 s, 2 MB hours); brackets in a closed string first, so that the check cannot skip the scan
    raw = b'{"query": "' + b"[" * 100 + b'", "x": "' + b'\\"' * ((BODY_BYTES - 130) // 2)
    with pytest.raises(InvalidJson):
        parsed_json(raw, LIMITS)
