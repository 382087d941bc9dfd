"""The tests' and the demo's LLM server: SmolLM2 from its package, OpenAI's chat API with the system role, and
no process left after SIGTERM (llama.cpp's server threads included)."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from offline_web.llm import smollm2
from offline_web.processes import family, wait_gone
from offline_web.stack import llm_service


def test_the_model_file_comes_from_its_package_without_importing_it() -> None:
    assert smollm2().is_file() and smollm2().stat().st_size > 50_000_000


def test_it_serves_chat_with_the_system_role_and_ends_with_sigterm(tmp_path: Path) -> None:
    llm = llm_service(tmp_path).start(timeout_s=120)
    try:
        messages = [{"role": "system", "content": "Answer in one word, in French."},
                    {"role": "user", "content": "Name a colour."}]
        reply = httpx.post(f"{llm.url}/v1/chat/completions", timeout=120, json={
            "model": "default", "messages": messages, "max_tokens": 8, "temperature": 0}).json()
        assert reply["choices"][0]["message"]["content"]
        # the chat template keeps the system message, so Wisp's rules reach the model (Gemma's dropped it)
        prompt = httpx.post(f"{llm.url}/apply-template", json={"messages": messages}, timeout=10).json()["prompt"]
        assert "system\nAnswer in one word, in French." in prompt
        assert llm.process is not None
        members = family(llm.process.pid)
        llm.process.send_signal(signal.SIGTERM)
        assert llm.process.wait(5) == -signal.SIGTERM
        assert not wait_gone(members, timeout_s=5)
    finally:
        llm.stop()
