"""Callers' JSON Schemas: only self-contained ones are accepted (every other kind a 400 naming the field), and
applying one fetches nothing, reads no file, echoes nothing the caller did not send, and is stopped when it
would run for ever."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent.answers.schemas import MAX_EXPANSION, checked_schema, problem_of, schema_problem, warm_up
from agent.errors import BadRequest
from agent.pages.workers import WorkerPool

from ..fake_searxng import InlinePool

TREE = {"type": "object", "properties": {"name": {"type": "string"},
                                         "children": {"type": "array", "items": {"$ref": "#"}}}}


def refused(schema: object, field: str = "output_schema") -> str:
    with pytest.raises(BadRequest) as refusal:
        checked_schema(schema, field)
    assert refusal.value.message.startswith(field), refusal.value.message
    return refusal.value.message


def outside_references(url: str, marker_file: Path) -> dict[str, dict]:
    """Each way a schema can name something outside itself."""
    return {
        "http": {"$ref": f"{url}/schema.json"},
        "https": {"$ref": url.replace("http:", "https:") + "/schema.json"},
        "file": {"$ref": marker_file.as_uri()},
        "$id-relative": {"$id": f"{url}/", "$ref": "schema.json"},
        "nested": {"type": "object", "properties": {"a": {"$ref": f"{url}/schema.json"}}},
        "$dynamicRef": {"$dynamicRef": f"{url}/schema.json#meta"},
        "draft-04 id": {"$schema": "http://json-schema.org/draft-04/schema#", "id": f"{url}/", "$ref": "#"},
        "$schema": {"$schema": f"{url}/meta.json"},
    }


def test_no_reference_outside_the_schema_is_accepted_and_none_is_fetched(loopback_listener, tmp_path) -> None:
    marker_file = tmp_path / "secret.json"
    marker_file.write_text('{"enum": ["LOCAL-FILE-MARKER"]}')
    for name, schema in outside_references(loopback_listener.url, marker_file).items():
        message = refused(schema, "response_format.json_schema.schema")
        assert "LOCAL-FILE-MARKER" not in message, name
    assert loopback_listener.connections == 0


@pytest.mark.parametrize(("schema", "problem"), [
    ({"$ref": "#/$defs/missing"}, "does not resolve within the schema"),
    ({"properties": {"a": {"$ref": "#nowhere"}}}, "does not resolve within the schema"),
    ({"$ref": "#"}, "loop without reading into the value"),
    ({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"not": {"$ref": "#/$defs/a"}}]}},
      "$ref": "#/$defs/a"}, "loop without reading into the value"),
    ({"$defs": {**{f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(12)},
                "d12": {"type": "string"}}, "$ref": "#/$defs/d0"}, f"more than {MAX_EXPANSION} subschemas"),
    ({"$schema": []}, "names no JSON Schema draft"),
    ({"type": "objekt"}, "not a valid JSON Schema"),
    ([1, 2], "must be a JSON Schema object"),
    ({"properties": {"a" * 10: {"description": "x" * 30_000}}}, "larger than"),
    (json.loads('{"items": ' * 20 + "{}" + "}" * 20), "nests deeper than 16"),
])
def test_a_schema_that_cannot_be_applied_safely_is_a_400_naming_the_problem(schema, problem) -> None:
    assert problem in refused(schema)


@pytest.mark.parametrize("schema", [
    TREE,  # recursion through a property reads deeper into the value each time
    {"$defs": {"name": {"$anchor": "name", "type": "string"}}, "properties": {"first": {"$ref": "#name"},
                                                                             "last": {"$ref": "#/$defs/name"}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
     "items": {"$ref": "#/definitions/n"}},
    {"properties": {"$ref": {"type": "string"}, "id": {"type": "string"}}},  # properties named like keywords
    {"enum": [{"$ref": "http://127.0.0.1:9/"}]},  # a value, not a reference
    {"$defs": {**{f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(6)},
               "d6": {"type": "string"}}, "$ref": "#/$defs/d0"},  # 254 subschemas for a value: within the bound
])
def test_a_self_contained_schema_is_accepted_as_it_is(schema) -> None:
    assert checked_schema(schema) is schema


def test_a_problem_names_the_place_and_the_callers_constraint_never_the_value() -> None:
    problem = problem_of({"children": [{"name": "PAGE-WRITTEN-MARKER", "children": [{"name": 7}]}]}, TREE)
    assert problem == 'at $.children[0].children[0].name, the value fails `type`: {"type": "string"}'
    problem = problem_of({"colour": "PAGE-WRITTEN-MARKER"}, {"properties": {"colour": {"enum": ["red"]}}})
    assert "PAGE-WRITTEN-MARKER" not in problem and '{"enum": ["red"]}' in problem
    assert problem_of({"name": "a", "children": []}, TREE) is None


def test_a_schema_whose_pattern_backtracks_for_ever_is_stopped_and_its_worker_replaced() -> None:
    async def apply() -> tuple[str | None, str | None, str | None]:
        pool = WorkerPool(1, warm=warm_up)
        await pool.start()
        try:
            redos = {"type": "string", "pattern": "^(a+)+$"}
            stopped = await schema_problem("a" * 64 + "!", redos, pool, timeout_s=1.0)
            # a new worker takes the killed one's place: the pool goes on (a generous bound: its start is timed)
            after = await schema_problem("aaa", redos, pool, timeout_s=120.0)
            fails = await schema_problem("b", redos, pool, timeout_s=120.0)
            return stopped, after, fails
        finally:
            await pool.close()

    stopped, after, fails = asyncio.run(apply())
    assert stopped == "the schema took longer than 1 s to apply"
    assert after is None
    assert fails is not None and "`pattern`" in fails


def test_applying_in_the_pool_gives_the_same_answer_as_in_process() -> None:
    problem = asyncio.run(schema_problem({"name": 1}, TREE, InlinePool()))
    assert problem == problem_of({"name": 1}, TREE) == 'at $.name, the value fails `type`: {"type": "string"}'
