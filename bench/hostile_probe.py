"""Issue 31's probe from outside: does any JSON Schema endpoint reach a listener or a file, does the event loop
stall, does an over-long query fail with a 5xx, and do OpenAI's SDK and a 1 MB body see what they should?

Brings up the offline web, Debian searx, semantic-svc, the small LLM and agent-svc on loopback (fetching open to
127.0.0.1 only), and a listener on 127.0.0.2 that no allow-list permits (it answers `{"enum": ["SECRET"]}` after
holding each connection 25 s, as a slow schema server would). Then:
- every schema-taking endpoint × every way a schema names the outside (http, https, `$id`-relative, nested, file)
  while a poller times /healthz;
- a 1 MB query to Tavily's /search and a 1 MB chat message, and the same on /v2/search;
- plain and streamed chat completions through the openai SDK, counting their url_citation annotations.
Prints a table and writes JSON.

    .venv/bin/python bench/hostile_probe.py [--out bench-results/hostile_probe.json] [--questions 3]
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import openai

from offline_web.stack import wisp_stack

ROOT = Path(__file__).parent.parent
SITES = ROOT / "tests" / "fixtures" / "sites-mini.tsv"
MARKER = "SECRET-FROM-A-FILE-31"
QUESTIONS = ["how does sqlite checkpoint the write-ahead log", "what does git rebase do",
             "what is an atomic commit in sqlite", "how do I stash changes in git"]
sys.path.insert(0, str(ROOT))
from tests.integration.test_schema_references import endpoints  # noqa: E402 - one list of the endpoints


class SlowListener:
    """Counts connections; holds each `hold_s` before answering a schema that would leak."""

    def __init__(self, host: str = "127.0.0.2", hold_s: float = 25.0) -> None:
        self.socket = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.socket.getsockname()[1]}"
        self.connections, self.hold_s = 0, hold_s
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        time.sleep(self.hold_s)
        body = b'{"enum": ["SECRET"]}'
        connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                           % (len(body), body))
        connection.close()


def forms(url: str, secret: Path) -> dict[str, dict]:
    return {"http": {"$ref": f"{url}/s.json"}, "https": {"$ref": url.replace("http:", "https:") + "/s.json"},
            "$id-relative": {"$id": f"{url}/", "$ref": "s.json"},
            "nested": {"type": "object", "properties": {"a": {"$ref": f"{url}/s.json"}}},
            "file": {"$ref": secret.as_uri()}}


def probe_schemas(agent: str, page: str, listener: SlowListener, secret: Path, rounds: int) -> dict:
    statuses: Counter[int] = Counter()
    leaks = 0
    health: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=agent, timeout=120) as client:
            while not stop.is_set():
                started = time.perf_counter()
                client.get("/healthz")
                health.append(time.perf_counter() - started)
                stop.wait(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    requests = [(path, body(schema)) for path, body in endpoints(page).values()
                for schema in forms(listener.url, secret).values()] * rounds

    def send(share: list[tuple[str, dict]]) -> None:  # four clients at once
        nonlocal leaks
        with httpx.Client(base_url=agent, timeout=120) as client:
            for path, body in share:
                response = client.post(path, json=body)
                statuses[response.status_code] += 1
                leaks += MARKER in response.text or "SECRET" in response.text

    clients = [threading.Thread(target=send, args=(requests[i::4],)) for i in range(4)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    stop.set()
    poller.join()
    return {"requests": sum(statuses.values()), "statuses": dict(statuses), "connections": listener.connections,
            "responses_with_a_secret": leaks, "healthz_polls": len(health),
            "healthz_max_s": round(max(health), 3), "healthz_median_s": round(statistics.median(health), 4)}


def probe_sizes(agent: str) -> dict:
    huge = "x" * 1_000_000
    bodies = {"tavily /search": ("/search", {"query": huge}),
              "chat message": ("/v1/chat/completions", {"model": "wisp", "messages": [{"role": "user",
                                                                                        "content": huge}]}),
              "/v2/search": ("/v2/search", {"query": huge}),
              "/v2/map search": ("/v2/map", {"url": "https://www.sqlite.org/", "search": huge})}
    with httpx.Client(base_url=agent, timeout=60) as client:
        return {name: client.post(path, json=body).status_code for name, (path, body) in bodies.items()}


def probe_citations(agent: str, questions: list[str]) -> list[dict]:
    client = openai.OpenAI(base_url=f"{agent}/v1", api_key="probe", timeout=300, max_retries=0)
    rows = []
    for question in questions:
        messages = [{"role": "user", "content": question}]
        plain = client.chat.completions.create(model="wisp", messages=messages).choices[0].message
        with client.chat.completions.stream(model="wisp", messages=messages) as stream:
            streamed = stream.get_final_completion().choices[0].message
        rows.append({"question": question, "plain_markers": len(re.findall(r"\[\d", plain.content)),
                     "plain_url_citations": len(plain.annotations or []),
                     "plain_spanning_a_marker": sum(_spans_a_marker(plain.content, a) for a in plain.annotations or []),
                     "streamed_markers": len(re.findall(r"\[\d", streamed.content)),
                     "streamed_url_citations": len(streamed.annotations or [])})
    return rows


def _spans_a_marker(content: str, annotation: object) -> bool:
    found = annotation.url_citation  # type: ignore[attr-defined]
    return content[found.start_index:found.end_index].startswith("[")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "hostile_probe.json")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10, help="times each endpoint × form is sent")
    args = parser.parse_args()
    listener = SlowListener()
    with tempfile.TemporaryDirectory() as tmp, \
            wisp_stack(SITES, Path(tmp), with_semantic=True, with_llm=True) as stack:
        secret = Path(tmp) / "secret.json"
        secret.write_text(json.dumps({"enum": [MARKER]}))
        agent, page = stack.agent.url, f"{stack.offline.web.url}/www.sqlite.org/wal.html"
        result = {"schemas": probe_schemas(agent, page, listener, secret, args.rounds), "one_mb": probe_sizes(agent),
                  "citations": probe_citations(agent, QUESTIONS[:args.questions])}
    schemas = result["schemas"]
    print(f"schema endpoints × forms: {schemas['requests']} requests, statuses {schemas['statuses']}, "
          f"listener connections {schemas['connections']}, responses holding a secret "
          f"{schemas['responses_with_a_secret']}")
    print(f"/healthz meanwhile: {schemas['healthz_polls']} polls, median {schemas['healthz_median_s']} s, "
          f"max {schemas['healthz_max_s']} s")
    print("1 MB fields:", ", ".join(f"{name} → {status}" for name, status in result["one_mb"].items()))
    print(f"{'question (plain, then streamed)':<48} {'markers':>8} {'url_citation':>13} {'at a marker':>12} "
          f"{'markers':>8} {'url_citation':>13}")
    for row in result["citations"]:
        print(f"{row['question']:<48} {row['plain_markers']:>8} {row['plain_url_citations']:>13} "
              f"{row['plain_spanning_a_marker']:>12} {row['streamed_markers']:>8} {row['streamed_url_citations']:>13}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
