"""The JSON Schemas callers send (`output_schema`, `response_format`, extract's and a json format's `schema`):
checked once when the request is read, then applied to what the LLM wrote without fetching anything.

jsonschema left to itself fetches a remote `$ref` (urlopen, no timeout, on the event loop), reads a `file:` one,
and repeats what it read in its errors. So a schema may refer only within itself (`#/...` pointers, `#anchor`s):
a `$ref` that leaves the document, or an `$id` (a base the references would resolve against), is a 400 naming
the field, and so is a reference that does not resolve, a loop of references that never reads into the value
(it recurses for ever), or references that multiply past MAX_EXPANSION subschemas for one value. Whatever
applies a schema does so with a registry that retrieves nothing, in a worker process that is killed past
APPLY_TIMEOUT_S (a `pattern` can backtrack for ever; the GIL would hold the event loop in a thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import jsonschema
from referencing import Registry, Resource, Specification
from referencing.exceptions import NoSuchAnchor, Unresolvable
from referencing.jsonschema import DRAFT202012, UnknownDialect, specification_with

from agent.core.context import CpuPool
from agent.errors import BadRequest, Degraded

if TYPE_CHECKING:  # referencing exports the type only from its private module (as its own typing.py reads it)
    from referencing._core import Resolver

MAX_SCHEMA_CHARS = 20_000
MAX_SCHEMA_DEPTH = 16
MAX_EXPANSION = 500  # subschemas one value may meet through references and allOf/anyOf/oneOf/not/if
APPLY_TIMEOUT_S = 2.0  # an honest schema applies to a long reply in milliseconds
REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
# keywords whose subschemas apply to the same value (in place): a loop through these alone never ends
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")
_NOTHING_TO_FETCH = Registry()  # its retrieve fails: an unknown URI is an error, never a request


def checked_schema(schema: Any, field: str = "output_schema") -> dict[str, Any]:
    """The schema if it is a usable, self-contained JSON Schema; a 400 naming `field` and the problem otherwise."""
    if not isinstance(schema, dict):
        raise BadRequest(f"{field} must be a JSON Schema object")
    if len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        raise BadRequest(f"{field} is larger than {MAX_SCHEMA_CHARS} characters")
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise BadRequest(f"{field} nests deeper than {MAX_SCHEMA_DEPTH} levels")
    root = Resource(schema, _dialect(schema, field))
    resolver = _NOTHING_TO_FETCH.with_resource("", root).crawl().resolver("")
    _check_self_contained(root, resolver, field)
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        raise BadRequest(f"{field} is not a valid JSON Schema: {e.message[:300]}") from None
    except Exception as e:  # jsonschema on a hostile schema (`"$schema": []`): a bad schema all the same
        raise BadRequest(f"{field} is not a valid JSON Schema ({type(e).__name__})") from None
    _check_expansion(root, resolver, field)
    return schema


async def schema_problem(value: Any, schema: dict[str, Any], pool: CpuPool, timeout_s: float = APPLY_TIMEOUT_S
                         ) -> str | None:
    """Why `value` does not validate against a `checked_schema`; None when it does. Applied in `pool`, given
    up (and the work stopped) after `timeout_s`."""
    try:
        async with asyncio.timeout(timeout_s):
            return await pool.run(problem_of, value, schema)
    except TimeoutError:
        return f"the schema took longer than {timeout_s:g} s to apply"
    except Degraded as e:  # the worker died on it
        return f"the schema could not be applied ({e})"


def problem_of(value: Any, schema: dict[str, Any]) -> str | None:
    """`schema_problem`'s work, run in a worker: where the value fails and which constraint of the caller's
    schema it fails (never the value itself, which a page may have written)."""
    validator = jsonschema.validators.validator_for(schema)(schema, registry=_NOTHING_TO_FETCH)
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except (Unresolvable, RecursionError) as e:  # a checked schema has neither; defence in depth
        return f"the schema cannot be applied ({type(e).__name__})"
    if error is None:
        return None
    return f"at {error.json_path}, the value fails `{error.validator}`: {json.dumps(error.schema)[:300]}"


def warm_up() -> None:
    """Run once by each worker as it starts, so that a first schema applied does not pay for the imports."""
    problem_of(None, {"type": "null"})


def _dialect(schema: dict[str, Any], field: str) -> Specification[Any]:
    """The draft `$schema` names (2020-12 when it names none); a 400 for one this service does not know, which
    jsonschema would apply as the latest draft with only a warning in the log."""
    if "$schema" not in schema:
        return DRAFT202012
    with contextlib.suppress(UnknownDialect):
        if isinstance(schema["$schema"], str):
            return specification_with(schema["$schema"])
    shown = json.dumps(schema["$schema"])[:200]
    raise BadRequest(f"{field}: `$schema` {shown} names no JSON Schema draft this service knows")


def _check_self_contained(root: Resource[Any], resolver: Resolver[Any], field: str) -> None:
    """Every reference points inside the schema and resolves there; no subschema sets a base URI."""
    for resource in _resources(root):
        if resource.id() is not None:
            raise BadRequest(f"{field}: `$id` {json.dumps(resource.id())[:200]} sets a base URI for references, "
                             "which this service does not accept: remove it")
        contents = resource.contents
        for keyword in REFERENCES:
            if not isinstance(contents, dict) or not isinstance(ref := contents.get(keyword), str):
                continue
            shown = json.dumps(ref)[:200]
            if not ref.startswith("#"):
                raise BadRequest(f"{field}: `{keyword}` {shown} is a remote or file reference; only references "
                                 "within the schema (#/$defs/...) are accepted")
            try:
                resolver.lookup(ref)
            except (Unresolvable, NoSuchAnchor):
                raise BadRequest(f"{field}: `{keyword}` {shown} does not resolve within the schema") from None


def _check_expansion(root: Resource[Any], resolver: Resolver[Any], field: str) -> None:
    """A 400 when references loop without reading into the value, or when one value would meet more than
    MAX_EXPANSION subschemas: each subschema's count is itself plus those of what it applies in place."""
    counts: dict[int, int] = {}
    on_path: set[int] = set()
    stack = [(r.contents, False) for r in _resources(root) if isinstance(r.contents, dict)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            counts[key] = 1 + sum(counts[id(c)] for c in _in_place(node, resolver))
            if counts[key] > MAX_EXPANSION:
                raise BadRequest(f"{field}: its references and allOf/anyOf/oneOf apply more than {MAX_EXPANSION} "
                                 "subschemas to one value")
            continue
        if key in counts:
            continue
        if key in on_path:  # an ancestor on the path being walked: a loop
            raise BadRequest(f"{field}: its references loop without reading into the value (a schema that refers "
                             "to itself in place would recurse for ever)")
        on_path.add(key)
        stack.append((node, True))
        stack += [(child, False) for child in _in_place(node, resolver) if id(child) not in counts]


def _in_place(schema: dict[str, Any], resolver: Resolver[Any]) -> list[dict[str, Any]]:
    """The subschemas `schema` applies to the same value as itself."""
    children: list[Any] = [schema[k] for k in _IN_PLACE_ONE if k in schema]
    children += [s for k in _IN_PLACE_LISTS if isinstance(schema.get(k), list) for s in schema[k]]
    children += [s for k in _IN_PLACE_MAPS if isinstance(schema.get(k), dict) for s in schema[k].values()]
    children += [resolver.lookup(schema[k]).contents for k in REFERENCES if isinstance(schema.get(k), str)]
    return [c for c in children if isinstance(c, dict)]


def _resources(root: Resource[Any]) -> Iterator[Resource[Any]]:
    pending = [root]
    while pending:
        resource = pending.pop()
        yield resource
        pending.extend(resource.subresources())


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_SCHEMA_DEPTH:
        return level
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return max((_depth(v, level + 1) for v in children), default=level)
