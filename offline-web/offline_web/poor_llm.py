"""An OpenAI-compatible LLM that plans poorly, scripted, for evaluating research jobs against the worst a small
local model does: asked for search queries it repeats the question and a vague fragment of it; asked for a value
of a schema it gives an empty object; asked anything else it copies the first sentences of the prompt's first
source, cited [1]. Instant, deterministic, and it counts what it was asked (GET /stats).

    python -m offline_web.poor_llm --port N
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from wisp_text.sentences import split_sentences

MODEL = "poor-planner"
_SOURCE = re.compile(r"\[1\][^\n]*\n(.+?)(?:\n\n\[\d+\]|\n\nQuestion:|\Z)", re.S)


def reply_to(body: dict[str, Any]) -> str:
    """What the poor planner answers to one chat completion request."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [] if isinstance(m, dict))
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema") \
        or (body.get("response_format") or {}).get("schema") or {}
    if "queries" in (schema.get("properties") or {}):
        question = _question(prompt)
        return json.dumps({"queries": [question, " ".join(question.split()[:3])]})
    if schema:
        return "{}"
    source = _SOURCE.search(prompt)
    sentences = split_sentences(source.group(1)) if source else []
    return (" ".join(sentences[:2]) + " [1]") if sentences else "I could not find an answer."


def _question(prompt: str) -> str:
    lines = [line.strip() for line in prompt.splitlines() if line.strip().endswith("?")]
    return (lines[0] if lines else prompt.strip().splitlines()[0] if prompt.strip() else "help")[:200]


class _Handler(BaseHTTPRequestHandler):
    server: _PoorServer

    def do_GET(self) -> None:
        if self.path.startswith("/v1/models"):
            self._json({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "wisp"}]})
        elif self.path.startswith("/stats"):
            self._json({"requests": self.server.requests})
        else:
            self._json({"error": "not found"}, 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._json({"error": {"message": "the body is not JSON"}}, 400)
            return
        with self.server.lock:
            self.server.requests += 1
        text = reply_to(body)
        if body.get("stream"):
            self._stream(text)
            return
        self._json({"id": "poor", "object": "chat.completion", "created": 0, "model": MODEL,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})

    def _stream(self, text: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for piece, finish in ((text, None), ("", "stop")):
            chunk = {"id": "poor", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
                     "choices": [{"index": 0, "delta": {"content": piece} if piece else {}, "finish_reason": finish}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _json(self, value: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        """Quiet: the evaluation reads /stats, not a log line per request."""


class _PoorServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.lock, self.requests = threading.Lock(), 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m offline_web.poor_llm", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    _PoorServer(parser.parse_args().port).serve_forever()


if __name__ == "__main__":
    main()
