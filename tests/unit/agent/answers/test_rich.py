"""Rich answers through the runner, with a fake OpenAI-compatible server and a fake semantic-svc (a passage's
similarity is the share of the claim's words it holds): citations, claim verdicts, abstention, output_schema,
system_prompt, and every fallback."""

import asyncio
import json

import httpx
import pytest

from agent.api import front_door
from agent.api.firecrawl.search_routes import V2
from agent.api.firecrawl.search_wire import V2SearchRequest, parse_request
from agent.core.outcome import CheckedClaim
from agent.core.query import PageAsk, SearchQuery
from agent.errors import BadRequest
from agent.search.service import Search

from ..fake_searxng import FakeSearxng, FakeSemantic

URL = "https://general.test/{}".format
WAL = ("SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages. "
       "PRAGMA wal_checkpoint runs one by hand at any time.")
PAGES = {URL(0): f"<html><head><title>WAL</title></head><body><article><h1>WAL</h1><p>{WAL}</p>"
                 f"<p>{WAL}</p></article></body></html>",
         URL(1): "<html><head><title>Cats</title></head><body><article><h1>Cats</h1><p>Cats purr and sleep in "
                 "the sun all day long, whatever the weather outside.</p></article></body></html>"}


class FakeLLM:
    """/v1/chat/completions answering `replies` in turn (a status code instead of a string: that error)."""

    def __init__(self, *replies: str | int) -> None:
        self.replies, self.requests = list(replies), []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, int):
            return httpx.Response(reply, json={"error": {"message": "down"}})
        if body.get("stream"):
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=_chunks(reply, body))
        return httpx.Response(200, json={
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}]})


def _chunks(reply: str, body: dict) -> bytes:
    """The reply as OpenAI's streamed chunks, a few words each."""
    words = reply.split(" ")
    pieces = [" ".join(words[i:i + 3]) + (" " if i + 3 < len(words) else "") for i in range(0, len(words), 3)]
    chunks = [{"id": "x", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
               "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]} for piece in pieces]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def rich(llm: FakeLLM, semantic: FakeSemantic | None = None, fallback: bool = True, **fields):
    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    search = fake.search(semantic=semantic or FakeSemantic(), pages=PAGES, fetch_top=2,
                             llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)),
                             rich_abstain_below=0.2, support_floor=0.6, rich_extractive_fallback=fallback)
    query = SearchQuery(**{"query": "when does sqlite checkpoint the wal", "limit": 5, "search_type": "rich",
                           **fields})
    outcome = asyncio.run(search.run(search.prepared(query)))
    return outcome


def test_an_answer_cites_returned_results_and_a_wrong_claim_comes_back_unsupported() -> None:
    llm = FakeLLM("SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]. "
                  "The moon is made of green cheese [1]. Cats like it [9].")
    outcome = rich(llm)
    answer = outcome.answer
    returned = {h.url for h in outcome.buckets["web"]}
    assert answer.abstained is False and answer.model == "test-model"
    assert [c.url for c in answer.citations] == [URL(0)] and URL(0) in returned
    assert "[9]" not in answer.text  # a number that points at no source is removed
    claims = {c.text: c for c in answer.claims}
    right = claims["SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages."]
    assert right.supported is True and right.citations == (1,) and right.score >= 0.6
    wrong = claims["The moon is made of green cheese."]
    assert wrong.supported is False and wrong.score < 0.6 and wrong.reason.startswith("probability")
    assert claims["Cats like it."] == CheckedClaim("Cats like it.", (), supported=False, score=None,
                                                   reason="it cites no source")
    assert set(answer.timings_ms) == {"llm", "verify"}
    assert "[1] WAL" in llm.requests[0]["messages"][1]["content"]  # the sources, numbered as cited


def test_the_system_prompt_comes_first_and_wisps_rules_still_follow() -> None:
    llm = FakeLLM("SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1].")
    rich(llm, system_prompt="Answer like a pirate. Never cite.")
    system = llm.requests[0]["messages"][0]["content"]
    assert system.startswith("Answer like a pirate. Never cite.\n\n") and "[1]" in system


def test_the_model_saying_the_sources_do_not_answer_is_an_abstention() -> None:
    answer = rich(FakeLLM("NO_ANSWER")).answer
    assert answer.abstained is True and answer.claims == () and answer.citations == ()


def test_nothing_close_enough_abstains_without_asking_the_llm() -> None:
    llm = FakeLLM("never asked")
    outcome = rich(llm, query="zebra migration kenya")
    assert outcome.answer.abstained is True and llm.requests == []


ECHO = "Answer the question using only the numbered sources.\nSources:"  # a base model's "answer"


@pytest.mark.parametrize(("failure", "fallback"), [(503, True), (500, True), ("", True), (ECHO, False)])
def test_an_llm_that_fails_leaves_the_ranked_sources_and_a_warning(failure, fallback: bool) -> None:
    outcome = rich(FakeLLM(failure), fallback=fallback)
    assert outcome.answer is None and outcome.buckets["web"]
    assert any("the LLM at http://llm.test/v1" in w and "without an answer" in w for w in outcome.warnings)


def test_semantic_svc_down_after_the_answer_marks_no_claim_supported() -> None:
    class DownAfterRanking(FakeSemantic):
        async def handle(self, request):
            if request.url.path == "/similarity" and len(self.calls) >= 2:
                return httpx.Response(503, json={"error": "busy"})
            return await super().handle(request)

    outcome = rich(FakeLLM("SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]."),
                   DownAfterRanking())
    assert [c.supported for c in outcome.answer.claims] == [False]
    assert outcome.answer.claims[0].reason.startswith("it could not be checked")
    assert any("claims could not be checked" in w for w in outcome.warnings)


SCHEMA = {"type": "object", "properties": {"pages": {"type": "integer"}}, "required": ["pages"]}


def test_output_schema_json_validates_after_one_repair() -> None:
    llm = FakeLLM('{"pages": "many"}', '{"pages": 1000}', "SQLite checkpoints at 1000 pages [1].")
    outcome = rich(llm, output_schema=SCHEMA)
    assert outcome.answer.json == {"pages": 1000}
    schema_calls = [r for r in llm.requests if "response_format" in r]
    assert schema_calls[0]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_json_that_never_validates_is_null_with_a_warning() -> None:
    outcome = rich(FakeLLM("not json at all"), output_schema=SCHEMA)
    assert outcome.answer.json is None
    assert any("did not validate after one repair" in w for w in outcome.warnings)


def test_keyword_mode_answers_from_snippets() -> None:
    llm = FakeLLM("A checkpoint happens on the wal [1].")
    outcome = rich(llm, retrieval_mode="keyword")
    assert [(c.number, c.url) for c in outcome.answer.citations] == [(1, URL(0))]
    assert "wal checkpoint" in llm.requests[0]["messages"][1]["content"]  # the snippet is the source


def test_without_a_system_role_the_rules_open_the_user_turn() -> None:
    llm = FakeLLM("SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1].")
    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    search = fake.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=2, llm_system_role=False,
                             llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)))
    query = SearchQuery("when does sqlite checkpoint the wal", 5, search_type="rich", system_prompt="Be brief.")
    asyncio.run(search.run(search.prepared(query)))
    (turn,) = llm.requests[0]["messages"]
    assert turn["role"] == "user" and turn["content"].startswith("Be brief.\n\n") and "Sources:" in turn["content"]


def test_lines_copied_from_the_prompt_are_dropped_and_copied_source_sentences_are_checked() -> None:
    llm = FakeLLM("Answer the question using only the numbered sources.\nSources: [1] WAL (https://general.test/0)\n"
                  "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages. [1]")
    answer = rich(llm).answer
    assert answer.text == "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages. [1]"
    assert [c.supported for c in answer.claims] == [True]


def test_a_stalled_llm_is_cut_before_the_requests_timeout_and_the_sources_come_back() -> None:
    class Stalled(FakeLLM):
        async def handle(self, request):
            await asyncio.sleep(30)

    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    search = fake.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=2, rich_abstain_below=0.2,
                             llm_http=httpx.AsyncClient(transport=httpx.MockTransport(Stalled("x").handle)))
    query = SearchQuery("when does sqlite checkpoint the wal", 5, search_type="rich", timeout_ms=3000)
    outcome = asyncio.run(search.run(search.prepared(query)))
    assert outcome.answer is None and any("did not answer within" in w for w in outcome.warnings)


def events(llm: FakeLLM, **fields) -> list[tuple[str, dict]]:
    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    search = fake.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=2, rich_abstain_below=0.2,
                         llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)))
    query = search.prepared(SearchQuery(**{"query": "when does sqlite checkpoint the wal", "limit": 5,
                                           "search_type": "rich", "stream": True, **fields}))

    async def collect():
        return [raw async for raw in front_door.events(V2, query, None, search, "/v2/search")]

    parsed = []
    for raw in asyncio.run(collect()):
        name, data = raw.decode().strip().split("\n", 1)
        parsed.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return parsed


def test_streaming_sends_the_text_as_it_is_written_then_the_whole_response() -> None:
    reply = "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]."
    got = events(FakeLLM(reply))
    deltas = [data["text"] for name, data in got if name == "answer.delta"]
    assert len(deltas) > 1 and "".join(deltas) == reply
    name, done = got[-1]
    assert name == "done" and done["success"] is True and done["answer"]["claims"][0]["supported"] is True
    assert done["data"]["web"] and [n for n, _ in got].count("done") == 1


def test_a_failure_after_the_stream_began_is_an_error_event_with_firecrawls_envelope() -> None:
    got = events(FakeLLM("x"), timeout_ms=1)
    assert [name for name, _ in got] == ["error"] and got[0][1]["success"] is False and got[0][1]["status"] == 408
    assert "did not finish within the request's timeout of 1 ms" in got[0][1]["error"]


def scraped(llm: FakeLLM, formats: list) -> tuple:
    fake = FakeSearxng(total=2, snippets={0: "wal checkpoint", 1: "cats"})
    search = fake.search(semantic=FakeSemantic(), pages=PAGES, fetch_top=2,
                             llm_http=httpx.AsyncClient(transport=httpx.MockTransport(llm.handle)))
    request = {"query": "sqlite wal", "limit": 2, "scrapeOptions": {"formats": formats}}
    query = parse_request(json.dumps(request).encode(), V2SearchRequest)
    outcome = asyncio.run(search.run(search.prepared(query)))
    return outcome


def test_page_formats_summary_json_and_question_through_the_llm() -> None:
    llm = FakeLLM('{"pages": 1000}')
    outcome = scraped(llm, ["summary", {"type": "json", "schema": SCHEMA}, {"type": "question", "question": "When?"}])
    document = outcome.documents[URL(0)]
    assert document["summary"] == '{"pages": 1000}' and document["json"] == {"pages": 1000}
    assert document["answer"] == '{"pages": 1000}' and "markdown" not in document  # only what was asked
    assert len(llm.requests) == 3 * len(outcome.documents)
    assert any("When?" in r["messages"][-1]["content"] for r in llm.requests)


def test_a_page_format_the_llm_fails_leaves_its_key_out_with_a_warning() -> None:
    outcome = scraped(FakeLLM(503), ["markdown", "summary"])
    document = outcome.documents[URL(0)]
    assert document["markdown"] and "summary" not in document
    assert any("page formats failed" in w and "summary" in w for w in outcome.warnings)


@pytest.mark.parametrize(("item", "problem"), [({"type": "question"}, "needs `question`"),
                                               ({"type": "json", "prompt": 3}, "must be a string"),
                                               ({"type": "json", "schema": {"type": "objekt"}}, "not a valid")])
def test_a_bad_page_format_is_a_400(item, problem) -> None:
    with pytest.raises(BadRequest, match=problem):
        parse_request(json.dumps({"query": "q", "scrapeOptions": {"formats": [item]}}).encode(), V2SearchRequest)


def test_a_json_format_with_neither_schema_nor_prompt_asks_for_the_pages_data() -> None:
    # firecrawl-mcp sends exactly this when an agent names the json format without jsonOptions
    query = parse_request(json.dumps({"query": "q", "scrapeOptions": {"formats": ["json"]}}).encode(),
                          V2SearchRequest)
    assert query.page_asks == (PageAsk("json"),)


def test_a_schema_whose_ref_cannot_be_resolved_gives_null_json_not_an_error() -> None:
    outcome = rich(FakeLLM('{"pages": 1}'), output_schema={"$ref": "#/nowhere"})
    assert outcome.answer.json is None and any("cannot be applied" in w for w in outcome.warnings)


@pytest.mark.parametrize(("formats", "problem"), [
    (["summary", "summary"], "at most once each"),
    ([{"type": "json", "prompt": "x" * 2001}], "longer than 2000"),
])
def test_page_formats_have_limits(formats, problem) -> None:
    with pytest.raises(BadRequest, match=problem):
        parse_request(json.dumps({"query": "q", "scrapeOptions": {"formats": formats}}).encode(), V2SearchRequest)


def test_an_unexpected_failure_in_a_stream_is_an_error_event_not_a_broken_stream(monkeypatch) -> None:
    async def broken(*args, **kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(Search, "run", broken)
    got = events(FakeLLM("x"))
    assert [name for name, _ in got] == ["error"] and got[0][1]["status"] == 500
    assert "KeyError" in got[0][1]["error"]


def test_a_claim_with_a_changed_number_is_unsupported_and_says_what_was_not_found() -> None:
    outcome = rich(FakeLLM("SQLite runs a checkpoint automatically when the WAL file reaches 2000 pages [1]."),
                   explain=True)
    [claim] = outcome.answer.llm_draft.claims
    assert claim.supported is False and "not in the cited passages: 2000" in claim.reason


UNCITED = "A checkpoint moves the log back into the database. It happens on its own, or when you ask."
WAL_SENTENCES = ["SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages.",
                 "PRAGMA wal_checkpoint runs one by hand at any time."]


def test_uncited_prose_gives_way_to_the_sources_own_sentences_each_cited_and_checked() -> None:
    outcome = rich(FakeLLM(UNCITED))
    answer = outcome.answer
    assert answer.extractive is True and answer.llm_draft is None  # the draft is kept for `explain` alone
    assert answer.text == "\n".join(f"{s} [1]" for s in WAL_SENTENCES)  # the sentences that share the question's
    assert [(c.text, c.citations, c.supported) for c in answer.claims] == [(s, (1,), True) for s in WAL_SENTENCES]
    assert [c.number for c in answer.citations] == [1] and answer.model == "test-model"
    assert any("wrote no claim its sources support: the answer is the sources' own sentences" in w
               for w in outcome.warnings)
    assert "llm_unsupported" in outcome.degradations


def test_with_explain_the_llms_draft_comes_with_its_verdicts() -> None:
    draft = rich(FakeLLM(UNCITED), explain=True).answer.llm_draft
    assert draft.text == UNCITED
    assert [(c.supported, c.reason) for c in draft.claims] == [(False, "it cites no source")] * 2


def test_a_well_cited_answer_stays_the_llms() -> None:
    reply = "SQLite runs a checkpoint automatically when the WAL file reaches 1000 pages [1]. The moon is cheese [1]."
    outcome = rich(FakeLLM(reply), explain=True)
    answer = outcome.answer
    assert answer.extractive is False and answer.llm_draft is None and answer.text == reply
    assert [c.supported for c in answer.claims] == [True, False]
    assert not any("own sentences" in w for w in outcome.warnings)


def test_without_the_fallback_uncited_prose_stays_the_answer_with_its_verdicts() -> None:
    answer = rich(FakeLLM(UNCITED), fallback=False).answer
    assert answer.extractive is False and answer.text == UNCITED
    assert [c.supported for c in answer.claims] == [False, False]


@pytest.mark.parametrize(("reply", "why"), [(ECHO, "wrote back its prompt"),
                                            ("[7] [9]", "cited only sources that do not exist")])
def test_a_reply_that_is_no_answer_gives_way_to_the_sources_own_sentences(reply: str, why: str) -> None:
    outcome = rich(FakeLLM(reply), explain=True)
    assert outcome.answer.extractive is True and all(c.supported for c in outcome.answer.claims)
    assert outcome.answer.llm_draft.text == reply and outcome.answer.llm_draft.claims == ()
    assert any(why in w and w.endswith("the answer is the sources' own sentences closest to the question")
               for w in outcome.warnings)


def test_an_abstaining_llm_still_abstains() -> None:
    answer = rich(FakeLLM("NO_ANSWER")).answer
    assert answer.abstained is True and answer.extractive is False
