"""Open WebUI against Wisp, driven through Open WebUI's own HTTP API the way its web page drives it: the README's
Open WebUI guide, proven end to end. Run by hand, not in CI: Open WebUI is a 3 GB install.

1. Open WebUI (`open-webui==VERSION`) in a venv of its own, kept in ~/.cache/wisp-bench/open-webui-VERSION/venv
   and built when missing: torch's CPU wheel first, since the torch that open-webui pulls unpinned is the CUDA
   build, several GB more.
2. Wisp offline on loopback (the offline web, a real searx, semantic-svc, the small LLM server, agent-svc), then
   Open WebUI with the guide's settings (`env()` below): Wisp's /v1 as its OpenAI connection, Wisp as its Firecrawl
   web search and web loader, TAVILY_API_BASE_URL on Wisp.
3. An admin signs up, the models are listed, a chat with `wisp` starts streamed and goes on not streamed, a
   second chat is streamed (the page's own request: the server creates the chat, then stores each answer), a
   web search runs through the Firecrawl engine and loader, then (switched in the admin's settings) through
   Tavily's. The chats are read back and what Open WebUI stored is printed: each answer and its sources, as a
   reload of the page shows them; beside each, the same messages asked of Wisp directly: the [n] markers its
   model wrote and the annotations Wisp sent.

Open WebUI stores a message's sources from the `delta.annotations` (`url_citation`) of a streamed completion;
a non-streamed completion's annotations, and Sonar's top-level `citations`, it does not read.

    .venv/bin/python bench/openwebui.py [--sites tests/fixtures/sites-mini.tsv] [--out bench/results/openwebui.json]
        [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from offline_web.processes import Service, free_port
from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent
VERSION = "0.12.4"
TORCH = "torch==2.13.0"  # the CPU wheel pip finds on this disk; unpinned, open-webui pulls the CUDA build
MODELS = ("wisp", "wisp-fast", "wisp-vector")
# (question, streamed, in a new chat): the page streams unless a model's "Stream Chat Response" is off
TURNS = (("when does sqlite checkpoint the wal", True, True), ("and how do I run a checkpoint by hand", False, False),
         ("git squash last few commits into one", True, True))
SEARCH = "sqlite wal checkpoint"
# a 135M model on one thread of a loaded 2-core machine: as in tests/integration/test_rich.py
AGENT_ENV = {"LLM_MAX_TOKENS": "120", "RICH_CONTEXT_CHARS": "2500", "RICH_DEADLINE_S": "150"}
ANSWER_TIMEOUT_S = 240
MARKER = re.compile(r"\[\d+\]")  # the answer's citation markers, which Wisp's annotations span
KEY = "wisp-bench"  # any non-empty key: Wisp runs without API_KEYS here


def env(agent: str, data_dir: Path) -> dict[str, str]:
    """The guide's settings, each read by open_webui/config.py or env.py in VERSION."""
    return {
        "DATA_DIR": str(data_dir), "WEBUI_SECRET_KEY": secrets.token_hex(32),
        # no model downloads, no update check (HF_HUB_OFFLINE); Open WebUI's Chroma client has telemetry off
        "OFFLINE_MODE": "true",
        "ENABLE_OLLAMA_API": "false",
        "OPENAI_API_BASE_URL": f"{agent}/v1", "OPENAI_API_KEY": KEY,
        "ENABLE_WEB_SEARCH": "true",
        "WEB_SEARCH_ENGINE": "firecrawl", "WEB_LOADER_ENGINE": "firecrawl",
        "FIRECRAWL_API_BASE_URL": agent, "FIRECRAWL_API_KEY": KEY,  # Open WebUI adds /v2 itself
        "TAVILY_API_BASE_URL": agent, "TAVILY_API_KEY": KEY,  # the base URL is environment only (env.py)
        "ENABLE_LOCAL_WEB_FETCH": "true",  # pages on loopback and intranet hosts; otherwise refused
        # Wisp has no embeddings endpoint: pages go to the model whole, no embedding model is loaded or fetched
        "BYPASS_EMBEDDING_AND_RETRIEVAL": "true", "BYPASS_WEB_SEARCH_EMBEDDING_AND_RETRIEVAL": "true",
        "RAG_EMBEDDING_MODEL": "",
        # each of these would be one more Wisp search (its task model is Wisp's model)
        "ENABLE_TITLE_GENERATION": "false", "ENABLE_TAGS_GENERATION": "false",
        "ENABLE_FOLLOW_UP_GENERATION": "false", "ENABLE_SEARCH_QUERY_GENERATION": "false",
        "ENABLE_RETRIEVAL_QUERY_GENERATION": "false", "ENABLE_AUTOCOMPLETE_GENERATION": "false",
    }


def ensure_openwebui(version: str) -> Path:
    """The bin folder of a venv holding open-webui==`version`, built on first use (minutes)."""
    home = Path.home() / ".cache" / "wisp-bench" / f"open-webui-{version}"
    venv, done = home / "venv", home / "venv" / ".installed"
    if not done.exists():
        log = home / "install.log"
        print(f"installing open-webui {version} into {venv} (minutes, about 3 GB; log: {log})", flush=True)
        home.mkdir(parents=True, exist_ok=True)
        pip = [str(venv / "bin" / "pip"), "install"]
        with log.open("w") as out:
            for command in ([sys.executable, "-m", "venv", "--clear", str(venv)], [*pip, TORCH],
                            [*pip, f"open-webui=={version}"]):
                subprocess.run(command, check=True, stdout=out, stderr=subprocess.STDOUT)
        done.write_text(version)
    return venv / "bin"


@contextmanager
def openwebui(bin_dir: Path, agent: str, workdir: Path) -> Iterator[Service]:
    port = free_port()
    service = Service("open-webui", [str(bin_dir / "open-webui"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                      f"http://127.0.0.1:{port}", workdir / "open-webui.log",
                      env=env(agent, workdir / "open-webui"), cwd=workdir, health_path="/health")
    with service.started(timeout_s=300):
        yield service


def sign_up(client: httpx.Client) -> None:
    """The first account is the admin; its token authorizes the client from then on."""
    reply = client.post("/api/v1/auths/signup", json={"name": "Bench", "email": "bench@example.com",
                                                      "password": secrets.token_hex(12)})
    reply.raise_for_status()
    client.headers["Authorization"] = f"Bearer {reply.json()['token']}"


def send(client: httpx.Client, model: dict, history: list[dict], text: str, stream: bool,
         chat_id: str | None, parent_id: str | None) -> tuple[str, str]:
    """One turn as the page sends it to POST /api/chat/completions (session_id: its socket; none listens here):
    for a new chat (`parent_id` None) the server creates it. Returns (chat id, the assistant message's id)."""
    user_id, assistant_id = str(uuid.uuid4()), str(uuid.uuid4())
    user_message = {"id": user_id, "parentId": parent_id, "childrenIds": [], "role": "user", "content": text,
                    "timestamp": int(time.time()), "models": [model["id"]]}
    body = {"stream": stream, "model": model["id"], "messages": [*history, {"role": "user", "content": text}],
            "params": {}, "features": {}, "variables": {}, "model_item": model, "session_id": uuid.uuid4().hex,
            "id": assistant_id, "parent_id": parent_id, "user_message": user_message,
            "background_tasks": {"title_generation": False, "tags_generation": False, "follow_up_generation": False},
            **({"chat_id": chat_id} if chat_id else {})}
    reply = client.post("/api/chat/completions", json=body)
    reply.raise_for_status()
    return reply.json()["chat_id"], assistant_id


def wait_done(client: httpx.Client, chat_id: str, message_id: str) -> dict:
    """The assistant message as stored, once Open WebUI marks it done."""
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while time.monotonic() < deadline:
        message = client.get(f"/api/v1/chats/{chat_id}").json()["chat"]["history"]["messages"].get(message_id, {})
        if message.get("done"):
            return message
        time.sleep(1)
    raise TimeoutError(f"message {message_id} not done within {ANSWER_TIMEOUT_S} s")


def web_search(client: httpx.Client, engine: str) -> dict:
    """Search with `engine` as both web search and web loader (the admin's Web Search settings), as a chat with
    web search on does: POST /api/v1/retrieval/process/web/search."""
    client.post("/api/v1/retrieval/config/update",
                json={"web": {"WEB_SEARCH_ENGINE": engine, "WEB_LOADER_ENGINE": engine}}).raise_for_status()
    started = time.perf_counter()
    reply = client.post("/api/v1/retrieval/process/web/search", json={"queries": [SEARCH]})
    seconds = round(time.perf_counter() - started, 1)
    if reply.status_code != 200:
        return {"engine": engine, "status": reply.status_code, "error": reply.text[:300], "seconds": seconds}
    body = reply.json()
    return {"engine": engine, "status": 200, "results": len(body["items"]), "loaded_pages": body["loaded_count"],
            "loaded_chars": sum(len(d["content"]) for d in body["docs"]), "urls": body["filenames"], "seconds": seconds}


def stored(chat: dict, message_id: str) -> dict:
    """One assistant message as the chat keeps it: model, content, its [n] markers and its sources' urls."""
    message = chat["history"]["messages"][message_id]
    content = message.get("content", "")
    urls = [s.get("source", {}).get("url") or (s.get("metadata") or [{}])[0].get("source")
            for s in message.get("sources") or []]
    return {"model": message.get("model"), "content": content, "markers": len(MARKER.findall(content)),
            "error": message.get("error"), "sources": urls}


def from_wisp(agent: str, messages: list[dict], stream: bool) -> dict:
    """The same messages asked of Wisp directly, as Open WebUI asks: the [n] markers of its answer and the
    `url_citation` annotations it sends (a 135M model at temperature 0 mostly writes the same answer again)."""
    body, url = {"model": "wisp", "messages": messages, "stream": stream}, f"{agent}/v1/chat/completions"
    if not stream:
        message = httpx.post(url, json=body, timeout=ANSWER_TIMEOUT_S).json()["choices"][0]["message"]
        content, annotations = message["content"], message.get("annotations") or []
    else:
        pieces, annotations = [], []
        with httpx.stream("POST", url, json=body, timeout=ANSWER_TIMEOUT_S) as reply:
            for line in reply.iter_lines():
                if line.startswith("data: {"):
                    delta = (json.loads(line.removeprefix("data: ")).get("choices") or [{}])[0].get("delta", {})
                    pieces.append(delta.get("content") or "")
                    annotations += delta.get("annotations") or []
        content = "".join(pieces)
    return {"markers": len(MARKER.findall(content)), "annotations": len(annotations)}


def timed(timings: dict[str, float], step: str, started: float) -> None:
    timings[step] = round(time.perf_counter() - started, 1)
    print(f"{step}: {timings[step]} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "tests" / "fixtures" / "sites-mini.tsv")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "openwebui.json")
    parser.add_argument("--workdir", type=Path, help="keep the services' logs and data here (default: a temporary "
                                                     "folder, removed)")
    args = parser.parse_args()
    timings: dict[str, float] = {}
    started = time.perf_counter()
    bin_dir = ensure_openwebui(VERSION)
    timed(timings, "install", started)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        with wisp_stack(args.sites, workdir, with_semantic=True, with_llm=True, agent_env=AGENT_ENV) as stack:
            timed(timings, "wisp_start", started)
            started = time.perf_counter()
            with openwebui(bin_dir, stack.agent.url, workdir) as webui, \
                    httpx.Client(base_url=webui.url, timeout=ANSWER_TIMEOUT_S) as client:
                timed(timings, "openwebui_start", started)
                result = drive(client, stack.agent.url, timings)
    result["timings_s"] = timings
    print_report(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"results: {args.out}")


def drive(client: httpx.Client, agent: str, timings: dict[str, float]) -> dict:
    """Everything a user does in the page, through its API; what Open WebUI answered and stored."""
    started = time.perf_counter()
    sign_up(client)
    models = {m["id"]: m for m in client.get("/api/models").json()["data"]}
    timed(timings, "signup_and_models", started)
    turns = converse(client, models["wisp"], timings)
    searches = []
    for engine in ("firecrawl", "tavily"):
        started = time.perf_counter()
        searches.append(web_search(client, engine))
        timed(timings, f"web_search_{engine}", started)
    chats = client.get("/api/v1/chats/").json()
    messages = []
    for turn in turns:
        chat = client.get(f"/api/v1/chats/{turn['chat_id']}").json()["chat"]
        messages.append({**stored(chat, turn["id"]), "streamed": turn["stream"],
                         "wisp_direct": from_wisp(agent, turn["messages"], turn["stream"])})
    return {"openwebui": VERSION, "models": sorted(models), "chats_stored": len(chats), "messages": messages,
            "web_search": searches}


def converse(client: httpx.Client, wisp: dict, timings: dict[str, float]) -> list[dict]:
    """TURNS sent as the page sends them, each waited for until stored; per turn the chat, the assistant
    message's id, whether it streamed and the messages sent."""
    turns: list[dict] = []
    chat_id, parent_id, history = None, None, []
    for n, (text, stream, new_chat) in enumerate(TURNS, 1):
        if new_chat:
            chat_id, parent_id, history = None, None, []
        started = time.perf_counter()
        chat_id, message_id = send(client, wisp, history, text, stream, chat_id, parent_id)
        answer = wait_done(client, chat_id, message_id)
        timed(timings, f"answer_{n}_{'streamed' if stream else 'not_streamed'}", started)
        messages = [*history, {"role": "user", "content": text}]
        turns.append({"chat_id": chat_id, "id": message_id, "stream": stream, "messages": messages})
        history, parent_id = [*messages, {"role": "assistant", "content": answer["content"]}], message_id
    return turns


def print_report(result: dict) -> None:
    for n, message in enumerate(result["messages"], 1):
        error = f", error: {message['error']}" if message["error"] else ""
        print(f"\n--- answer {n} of {message['model']} ({_kind(message)}{error}), as Open WebUI stored it")
        print(message["content"])
        print(f"[n] markers: {message['markers']}; sources ({len(message['sources'])}): {message['sources']}")
    with_sources = sum(bool(m["sources"]) for m in result["messages"])
    print(f"\nOpen WebUI {result['openwebui']} against Wisp\n")
    print("| what | figure |")
    print("|---|---|")
    missing = [m for m in MODELS if m not in result["models"]]
    print(f"| models listed | {len(result['models'])}: {', '.join(result['models'])}"
          f"{'; missing: ' + ', '.join(missing) if missing else ''} |")
    print(f"| chats stored | {result['chats_stored']} |")
    print(f"| answers stored with sources | {with_sources} of {len(result['messages'])} |")
    for n, message in enumerate(result["messages"], 1):
        direct = message["wisp_direct"]
        print(f"| answer {n} ({_kind(message)}): sources stored | {len(message['sources'])}, its text with "
              f"{message['markers']} [n] markers (asked again, Wisp wrote {direct['markers']} markers and sent "
              f"{direct['annotations']} annotations) |")
    for search in result["web_search"]:
        figures = (f"{search['results']} results, {search['loaded_pages']} pages loaded "
                   f"({search['loaded_chars']} characters)" if search["status"] == 200
                   else f"HTTP {search['status']}: {search['error']}")
        print(f"| web search and loader: {search['engine']} | {figures} |")
    for step, seconds in result["timings_s"].items():
        print(f"| {step} | {seconds} s |")


def _kind(message: dict) -> str:
    return "streamed" if message["streamed"] else "not streamed"


if __name__ == "__main__":
    main()
