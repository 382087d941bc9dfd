"""/v2/extract's reading: pages in batches within the budget, each batch through the structured-output path (a
fake OpenAI-compatible server), the batches' values merged with their sources, and every way it fails."""

import asyncio
import json

import httpx
import pytest

from agent.answers.extraction import ANY_OBJECT, PageText, batches, extract_data, merged, sources_of
from agent.upstream.llm import LLMClient

from ..fake_searxng import InlinePool
from .test_rich import FakeLLM

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items":
          {"type": "string"}, "maxItems": 3}}, "required": ["name"]}


class PageLLM(FakeLLM):
    """Answers each batch by the first page it reads (`replies[i]` for https://site.test/i), whatever the order
    the concurrent batches arrive in; a repair gets the same reply again."""

    async def handle(self, request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][1]["content"]
        first = min(i for i in range(len(self.all)) if f"https://site.test/{i}" in prompt)
        self.replies = [self.all[first]]
        return await super().handle(request)

    def __init__(self, *replies: str) -> None:
        super().__init__(*replies)
        self.all = list(replies)


def pages(*texts: str) -> list[PageText]:
    return [PageText(f"https://site.test/{i}", f"Page {i}", text) for i, text in enumerate(texts)]


def run(llm: FakeLLM, texts: list[PageText], schema: dict | None = SCHEMA, prompt: str | None = "Get the name.",
        budget: int = 100):
    client = LLMClient("http://llm.test/v1", "", "test-model", 200,
                       http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)))
    return asyncio.run(extract_data(prompt, schema, None, texts, budget, client, lambda: 30.0, InlinePool()))


def test_pages_are_batched_in_order_within_the_budget_and_a_long_page_is_cut() -> None:
    groups = batches(pages("a" * 40, "b" * 50, "c" * 20, "d" * 250), 100)
    assert [[len(p.text) for p in group] for group in groups] == [[40, 50], [20], [100]]
    assert [p.url for group in groups for p in group] == [f"https://site.test/{i}" for i in range(4)]


def test_an_empty_first_page_opens_the_first_batch() -> None:
    groups = batches(pages("", "a" * 60, "b" * 60), 100)
    assert [[len(p.text) for p in group] for group in groups] == [[0, 60], [60]]


def test_merging_concatenates_arrays_without_duplicates_and_keeps_the_first_scalar() -> None:
    values = [{"name": "", "tags": ["a", "b"], "about": {"year": None, "place": "Oslo"}},
              {"name": "Ada", "tags": ["b", "c"], "about": {"year": 1843, "place": "Rome"}, "extra": 1},
              {"name": "Bob", "tags": [{"x": 1}]}]
    assert merged(values) == {"name": "Ada", "tags": ["a", "b", "c", {"x": 1}],
                              "about": {"year": 1843, "place": "Oslo"}, "extra": 1}
    assert merged([[1, 2], [2, 3]]) == [1, 2, 3] and merged([None, "x", "y"]) == "x"


def test_sources_name_the_pages_each_field_and_item_came_from() -> None:
    values = [(("u1",), {"name": "Ada", "tags": ["a"]}), (("u2", "u3"), {"name": "Bob", "tags": ["a", "b"]}),
              (("u4",), {"name": None, "tags": []})]
    value = merged([v for _, v in values])
    assert sources_of(value, values) == {"name": ["u1"], "tags": ["u1", "u2", "u3"], "tags[0]": ["u1", "u2", "u3"],
                                         "tags[1]": ["u2", "u3"]}
    assert sources_of(["x"], [(("u1",), ["x"])]) == {"[0]": ["u1"]}


def test_each_batch_is_asked_with_the_schema_and_the_answers_merged() -> None:
    llm = PageLLM('{"name": "Ada", "tags": ["a"]}', '{"name": "Bob", "tags": ["a", "b"]}')
    result = run(llm, pages("x" * 80, "y" * 80))
    assert result.error is None and result.warnings == ()
    assert result.value == {"name": "Ada", "tags": ["a", "b"]}
    assert result.sources["name"] == ["https://site.test/0"]
    assert [r["response_format"] for r in llm.requests] == [{"type": "json_object", "schema": SCHEMA}] * 2
    prompts = [r["messages"][-1]["content"] for r in llm.requests]
    assert all("Get the name." in p and json.dumps(SCHEMA) in p for p in prompts)
    assert sorted("https://site.test/1" in p for p in prompts) == [False, True]  # one page per batch


def test_a_prompt_alone_asks_for_any_json_object() -> None:
    llm = FakeLLM('{"founded": 1991}')
    result = run(llm, pages("x"), schema=None)
    assert result.value == {"founded": 1991}
    assert llm.requests[0]["response_format"] == {"type": "json_object", "schema": ANY_OBJECT}


@pytest.mark.parametrize(("schema", "asked"), [(SCHEMA, "the JSON Schema describes"), (None, "as a JSON object")])
def test_without_a_prompt_the_question_says_what_to_extract(schema: dict | None, asked: str) -> None:
    llm = FakeLLM('{"name": "Ada"}')
    run(llm, pages("x"), schema=schema, prompt=None)
    assert "Question: Extract the" in llm.requests[0]["messages"][-1]["content"]
    assert asked in llm.requests[0]["messages"][-1]["content"]


def test_invalid_json_is_repaired_once() -> None:
    llm = FakeLLM('{"tags": []}', '{"name": "Ada"}')
    assert run(llm, pages("x")).value == {"name": "Ada"}
    assert "That reply is invalid" in llm.requests[1]["messages"][-1]["content"]


def test_a_failed_batch_is_a_warning_when_another_gave_json() -> None:
    llm = PageLLM('{"name": "Ada"}', "garbage")
    result = run(llm, pages("x" * 80, "y" * 80))
    assert result.value == {"name": "Ada"} and result.error is None
    assert "1 of 2 batches" in result.warnings[0] and "https://site.test/1" in result.warnings[0]


def test_garbage_from_every_batch_is_an_error_naming_the_cause() -> None:
    result = run(FakeLLM("I cannot do that."), pages("x"))
    assert result.value is None and result.error.startswith("no valid JSON came out of the pages")
    assert "did not validate after one repair (not JSON" in result.error


def test_the_llm_down_is_an_error_naming_the_server() -> None:
    result = run(FakeLLM(503), pages("x"))
    assert result.error and "http://llm.test/v1 answered HTTP 503" in result.error


def test_a_merged_value_the_schema_rejects_gives_way_to_the_first_batch() -> None:
    llm = PageLLM('{"name": "Ada", "tags": ["a", "b"]}', '{"name": "Ada", "tags": ["c", "d"]}')
    result = run(llm, pages("x" * 80, "y" * 80))
    assert result.value == {"name": "Ada", "tags": ["a", "b"]} and result.sources["tags"] == ["https://site.test/0"]
    assert "merged do not validate" in result.warnings[0]


@pytest.mark.parametrize("budget", [10, 1000])
def test_every_page_is_read_whatever_the_budget(budget: int) -> None:
    llm = FakeLLM('{"name": "Ada"}')
    run(llm, pages("x" * 30, "y" * 30), budget=budget)
    read = "".join(r["messages"][-1]["content"] for r in llm.requests)
    assert "https://site.test/0" in read and "https://site.test/1" in read
