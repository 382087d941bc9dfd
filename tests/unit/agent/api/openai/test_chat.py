"""The OpenAI-compatible answer models through the real `openai` SDK (sync, async, streaming, a response_format
with a schema), on a fake SearXNG, web, semantic-svc and LLM: Sonar's fields, Wisp's claims, OpenAI's errors."""

import asyncio
import json

import httpx
import openai
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from agent.api.envelopes import answer_errors
from agent.api.openai import routes as openai_routes
from agent.api.openai.wire import ChatRequest
from agent.app import create_app
from agent.config import Settings
from agent.state.limits import Limits

from ...answers.test_rich import PAGES, URL, FakeLLM
from ...fake_searxng import FakeSearxng, FakeSemantic, serving
from ...research.corpus import FALCON, ZEPHYR, CorpusSearxng, ScriptedLLM
from ...research.corpus import PAGES as CORPUS_PAGES
from ...research.corpus import QUESTION as RESEARCH_QUESTION

ANSWER = "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]."
QUESTION = "when does sqlite checkpoint the wal"


def app_on(llm: FakeLLM, **settings: object) -> FastAPI:
    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    app = FastAPI()
    app.include_router(openai_routes.router)
    answer_errors(app)  # the app's: the routes raise, the handlers answer in OpenAI's envelope
    serving(app, fake.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=2,
                             llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)),
                             rich_abstain_below=0.2, support_floor=0.6, **settings))
    app.state.limits = Limits()
    return app


def sync_client(app: FastAPI) -> openai.OpenAI:
    return openai.OpenAI(base_url="http://wisp.test/v1", api_key="k", max_retries=0,
                         http_client=TestClient(app, base_url="http://wisp.test"))


def test_models_are_wisps_retrieval_setups() -> None:
    models = sync_client(app_on(FakeLLM(ANSWER))).models.list()
    assert [m.id for m in models.data] == ["wisp", "wisp-fast", "wisp-vector", "wisp-research"]


def test_a_sync_answer_has_markers_citations_search_results_and_claims() -> None:
    reply = sync_client(app_on(FakeLLM(ANSWER))).chat.completions.create(
        model="wisp", messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}])
    assert reply.object == "chat.completion" and reply.model == "wisp"
    assert reply.choices[0].message.content == ANSWER and reply.choices[0].finish_reason == "stop"
    extra = reply.model_extra
    assert extra["citations"][0] == URL(0)
    assert extra["search_results"][0]["url"] == URL(0) and extra["search_results"][0]["snippet"]
    claim = extra["claims"][0]
    assert claim["text"] == ANSWER.replace(" [1]", "") and claim["citations"] == [1] and claim["supported"] is True
    assert reply.usage.total_tokens > 0


def test_the_system_message_is_the_callers_system_prompt() -> None:
    llm = FakeLLM(ANSWER)
    sync_client(app_on(llm, llm_base_url="http://llm.test/v1")).chat.completions.create(
        model="wisp", messages=[{"role": "system", "content": "Answer like a pirate."},
                                     {"role": "user", "content": QUESTION}])
    assert llm.requests[0]["messages"][0]["content"].startswith("Answer like a pirate.\n\n")


def test_an_async_client_gets_the_same_answer() -> None:
    async def ask() -> object:
        transport = httpx.ASGITransport(app_on(FakeLLM(ANSWER)))
        async with httpx.AsyncClient(transport=transport, base_url="http://wisp.test") as http:
            client = openai.AsyncOpenAI(base_url="http://wisp.test/v1", api_key="k", http_client=http)
            return await client.chat.completions.create(model="wisp",
                                                        messages=[{"role": "user", "content": QUESTION}])

    reply = asyncio.run(ask())
    assert reply.choices[0].message.content == ANSWER and reply.model_extra["citations"]


def test_a_stream_parses_with_the_sdk_and_ends_with_sonars_fields() -> None:
    stream = sync_client(app_on(FakeLLM(ANSWER))).chat.completions.create(
        model="wisp", messages=[{"role": "user", "content": QUESTION}], stream=True)
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ANSWER
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop" and last.model_extra["citations"][0] == URL(0)
    assert last.model_extra["claims"][0]["supported"] is True and last.usage.completion_tokens > 0


def test_the_sdks_stream_helper_accumulates_the_answer() -> None:
    client = sync_client(app_on(FakeLLM(ANSWER)))
    with client.chat.completions.stream(model="wisp", messages=[{"role": "user", "content": QUESTION}]) as s:
        final = s.get_final_completion()
    assert final.choices[0].message.content == ANSWER


TWO_SOURCES = "SQLite checkpoints the WAL at 1000 pages [2, 1]. It does so automatically [1]."


def url_citations(content: str, annotations: list) -> list[tuple[str, str]]:
    """(the url, the span of the content) of each annotation, read through the SDK's types or its dicts."""
    dicts = [a if isinstance(a, dict) else a.model_dump() for a in annotations]
    assert {a["type"] for a in dicts} == {"url_citation"}
    return [(a["url_citation"]["url"], content[a["url_citation"]["start_index"]:a["url_citation"]["end_index"]])
            for a in dicts]


def test_a_plain_answer_has_a_url_citation_per_source_in_number_order_spanning_its_first_marker() -> None:
    reply = sync_client(app_on(FakeLLM(TWO_SOURCES))).chat.completions.create(
        model="wisp", messages=[{"role": "user", "content": QUESTION}])
    message = reply.choices[0].message
    assert message.content == "SQLite checkpoints the WAL at 1000 pages [2][1]. It does so automatically [1]."
    # source n is the n-th (Open WebUI numbers sources as they come), whatever order the markers cite them in
    assert url_citations(message.content, message.annotations) == [(URL(0), "[1]"), (URL(1), "[2]")]
    assert message.content.index("[1]") == message.annotations[0].url_citation.start_index  # its first marker
    assert message.annotations[0].url_citation.title  # the SDK's own type: a client reads the title there
    assert reply.model_extra["citations"] == [URL(0), URL(1)]  # Sonar's fields stay


def test_a_source_no_marker_cites_is_still_listed_with_an_empty_span_at_the_end() -> None:
    # its one claim cites the wrong page: without the fallback, the sentences of the sources would answer
    llm = FakeLLM("SQLite checkpoints the WAL at 1000 pages [2].")
    reply = sync_client(app_on(llm, rich_extractive_fallback=False)).chat.completions.create(
        model="wisp", messages=[{"role": "user", "content": QUESTION}])
    message = reply.choices[0].message
    assert url_citations(message.content, message.annotations) == [(URL(0), ""), (URL(1), "[2]")]
    assert message.annotations[0].url_citation.start_index == len(message.content)


def test_a_streamed_answer_carries_them_in_its_last_delta_and_the_sdk_accumulates_them() -> None:
    client = sync_client(app_on(FakeLLM(TWO_SOURCES)))
    chunks = list(client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUESTION}],
                                                 stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    annotations = chunks[-1].choices[0].delta.model_extra["annotations"]
    # spans of the model's own words, as streamed
    assert url_citations(content, annotations) == [(URL(0), "[2, 1]"), (URL(1), "[2, 1]")]
    with client.chat.completions.stream(model="wisp", messages=[{"role": "user", "content": QUESTION}]) as s:
        final = s.get_final_completion().choices[0].message
    assert [url for url, _ in url_citations(final.content, final.annotations)] == [URL(0), URL(1)]


def test_uncited_prose_streamed_is_followed_by_the_sources_sentences_that_replaced_it() -> None:
    prose = "A checkpoint moves the log back. It happens on its own."
    client = sync_client(app_on(FakeLLM(prose)))
    whole = client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUESTION}])
    quoted = whole.choices[0].message.content
    assert quoted.startswith("SQLite runs a checkpoint automatically") and quoted.endswith("[1]")
    chunks = list(client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUESTION}],
                                                 stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert content == f"{prose}\n\n{quoted}"  # what streamed cannot be taken back: the cited sentences follow
    annotations = chunks[-1].choices[0].delta.model_extra["annotations"]
    assert url_citations(content, annotations)[0] == (URL(0), "[1]")
    assert content.index("[1]") > len(prose)


def test_markers_read_alike_streamed_and_whole() -> None:
    answer = "SQLite checkpoints the WAL at 1000 pages [1][2]."
    client = sync_client(app_on(FakeLLM(answer)))
    whole = client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUESTION}])
    streamed = client.chat.completions.create(model="wisp", messages=[{"role": "user", "content": QUESTION}],
                                              stream=True)
    assert whole.choices[0].message.content == answer
    assert "".join(c.choices[0].delta.content or "" for c in streamed) == answer


def test_a_json_reply_has_no_annotations() -> None:
    reply = sync_client(app_on(FakeLLM(ANSWER, '{"pages": 1000}'))).chat.completions.create(
        model="wisp", messages=[{"role": "user", "content": QUESTION}], response_format={"type": "json_object"})
    assert reply.choices[0].message.annotations == []


SCHEMA = {"type": "object", "properties": {"pages": {"type": "integer"}}, "required": ["pages"],
          "additionalProperties": False}


def test_response_format_json_schema_is_the_output_schema() -> None:
    llm = FakeLLM(ANSWER, '{"pages": 1000}')
    reply = sync_client(app_on(llm)).chat.completions.create(
        model="wisp", messages=[{"role": "user", "content": QUESTION}],
        response_format={"type": "json_schema", "json_schema": {"name": "wal", "schema": SCHEMA, "strict": True}})
    assert json.loads(reply.choices[0].message.content) == {"pages": 1000}
    assert reply.model_extra["citations"]


def test_earlier_turns_are_condensed_by_the_llm_into_the_searched_question() -> None:
    llm = FakeLLM(QUESTION, ANSWER)
    reply = sync_client(app_on(llm)).chat.completions.create(model="wisp", messages=[
        {"role": "user", "content": "tell me about sqlite's wal"}, {"role": "assistant", "content": "It logs."},
        {"role": "user", "content": "when is it checkpointed?"}])
    assert "when is it checkpointed?" in llm.requests[0]["messages"][1]["content"]
    assert reply.choices[0].message.content == ANSWER


def test_without_an_llm_to_condense_the_last_message_alone_is_searched_and_a_warning_says_so() -> None:
    reply = sync_client(app_on(FakeLLM(ANSWER), llm_base_url="")).chat.completions.create(model="wisp", messages=[
        {"role": "user", "content": "tell me about sqlite"}, {"role": "user", "content": QUESTION}])
    assert any("last message alone" in w for w in reply.model_extra["warnings"])


@pytest.mark.parametrize(("body", "status", "error"), [
    ({"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]}, 404, openai.NotFoundError),
    ({"model": "wisp", "messages": []}, 400, openai.BadRequestError),
    ({"model": "wisp", "messages": [{"role": "assistant", "content": "x"}]}, 400, openai.BadRequestError),
    ({"model": "wisp", "messages": [{"role": "user", "content": "x" * 1_000_000}]}, 400, openai.BadRequestError),
    ({"model": "wisp", "messages": [{"role": "user", "content": "x"}], "response_format": {
        "type": "json_schema", "json_schema": {"name": "s", "schema": {"$ref": "http://127.0.0.1:9/s.json"}}}},
     400, openai.BadRequestError),
])
def test_errors_have_openais_shape(body: dict, status: int, error: type) -> None:
    client = sync_client(app_on(FakeLLM(ANSWER)))
    with pytest.raises(error) as raised:
        client.chat.completions.create(**body)
    assert raised.value.status_code == status
    assert set(raised.value.body) >= {"message", "type", "code"}


def test_sonars_search_fields_shape_the_query() -> None:
    query = ChatRequest.model_validate({
        "model": "wisp", "messages": [{"role": "user", "content": "q"}], "search_domain_filter": ["-Example.com"],
        "search_recency_filter": "week", "search_mode": "academic",
        "web_search_options": {"search_context_size": "high"}}).to_query()
    assert (query.exclude_domains, query.tbs, query.categories, query.limit) == (["example.com"], "qdr:w",
                                                                                  ["research"], 10)
    assert (query.retrieval_mode, query.search_type) == ("hybrid", "rich")


def test_the_service_serves_both_routes_beside_firecrawls_v1() -> None:
    paths = create_app(Settings()).openapi()["paths"]
    assert set(paths["/v1/chat/completions"]) == {"post"} and set(paths["/v1/models"]) == {"get"}


def research_app(llm: ScriptedLLM) -> FastAPI:
    app = FastAPI()
    app.include_router(openai_routes.router)
    answer_errors(app)
    serving(app, CorpusSearxng().search(semantic=FakeSemantic(), pages=CORPUS_PAGES, fetch_top=3,
                                        llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle))))
    app.state.limits = Limits()
    return app


RESEARCHED = "Ada Quill wrote Falcon [2], which creates the wal directory [1]."


def test_the_research_model_runs_a_job_and_answers_with_sonars_citations_and_search_results() -> None:
    reply = sync_client(research_app(ScriptedLLM(plan="not json", answer=RESEARCHED))).chat.completions.create(
        model="wisp-research", messages=[{"role": "user", "content": RESEARCH_QUESTION}])
    content = reply.choices[0].message.content
    assert reply.model == "wisp-research" and content.startswith(f"{RESEARCHED}\n\nKey evidence:")
    extra = reply.model_extra
    assert extra["citations"] == [ZEPHYR, FALCON]
    assert [r["url"] for r in extra["search_results"]] == [ZEPHYR, FALCON] and "Ada Quill" in \
        extra["search_results"][1]["snippet"]
    assert extra["claims"] and {a.url_citation.url for a in reply.choices[0].message.annotations} == {ZEPHYR, FALCON}


def test_the_research_model_streams_its_report_and_ends_with_the_citations() -> None:
    stream = sync_client(research_app(ScriptedLLM(plan="not json", answer=RESEARCHED))).chat.completions.create(
        model="wisp-research", messages=[{"role": "user", "content": RESEARCH_QUESTION}], stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == RESEARCHED
    assert chunks[-1].model_extra["citations"] == [ZEPHYR, FALCON] and chunks[-1].choices[0].finish_reason == "stop"
