"""The LLM, any OpenAI-compatible server (llama.cpp's server by default; vLLM, Ollama or a hosted API the same
way), through the `openai` package. Every failure is one `LLMUnavailable` naming the server and the cause, so
a rich search degrades to its ranked sources instead of failing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import openai

from agent.errors import Degraded


class LLMUnavailable(Degraded):
    pass


@dataclass(frozen=True)
class Reply:
    text: str
    model: str


class LLMClient:
    def __init__(self, base_url: str, api_key: str, model: str, max_tokens: int, system_role: bool = True,
                 http: httpx.AsyncClient | None = None) -> None:
        self.base_url, self.model, self._max_tokens, self._system_role = base_url, model, max_tokens, system_role
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "none", max_retries=0,
                                          http_client=http)

    async def complete(self, messages: list[dict[str, str]], budget_s: float, schema: dict[str, Any] | None = None,
                       model: str | None = None) -> Reply:
        """The model's reply within `budget_s` seconds. With `schema`, JSON mode constrained to it (the form
        both llama.cpp servers honour: `json_object` with a `schema`)."""
        extra: dict[str, Any] = {}
        if schema is not None:
            extra["response_format"] = {"type": "json_object", "schema": schema}
        async with self._bounded(budget_s):
            response = await self._create(messages, budget_s, model, **extra)
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "") if choices and choices[0].message else ""
        return self._reply(text, getattr(response, "model", None) or model)

    async def stream(self, messages: list[dict[str, str]], budget_s: float, on_text: Callable[[str], None],
                     model: str | None = None) -> Reply:
        """As `complete`, handing each piece of text to `on_text` as the model writes it."""
        pieces: list[str] = []
        async with self._bounded(budget_s):
            async for chunk in await self._create(messages, budget_s, model, stream=True):
                delta = chunk.choices[0].delta.content if chunk.choices and chunk.choices[0].delta else None
                if delta:
                    pieces.append(delta)
                    on_text(delta)
        return self._reply("".join(pieces), model)

    async def _create(self, messages: list[dict[str, str]], budget_s: float, model: str | None, **extra: Any) -> Any:
        if not self._system_role:
            messages = in_user_turn(messages)
        return await self._client.chat.completions.create(
            model=model or self.model, messages=messages, max_tokens=self._max_tokens, temperature=0.0,
            timeout=budget_s, **extra)

    @asynccontextmanager
    async def _bounded(self, budget_s: float) -> AsyncIterator[None]:
        """The whole call within `budget_s` (httpx's timeouts bound each read, not the sum), every failure as
        one LLMUnavailable."""
        if budget_s <= 0:
            raise LLMUnavailable(f"no time left for the LLM at {self.base_url}")
        try:
            async with asyncio.timeout(budget_s):
                yield
        except (openai.APITimeoutError, TimeoutError):
            raise LLMUnavailable(f"the LLM at {self.base_url} did not answer within {budget_s:.1f} s") from None
        except openai.APIStatusError as e:
            raise LLMUnavailable(f"the LLM at {self.base_url} answered HTTP {e.status_code}") from None
        except (openai.OpenAIError, httpx.HTTPError, json.JSONDecodeError, ValueError, AttributeError, TypeError) as e:
            # the last two: a server whose replies do not have the shape of OpenAI's
            raise LLMUnavailable(f"the LLM at {self.base_url} failed ({type(e).__name__})") from None

    def _reply(self, text: str, model: str | None) -> Reply:
        if not text.strip():
            raise LLMUnavailable(f"the LLM at {self.base_url} returned no text")
        return Reply(text.strip(), model or self.model)


def in_user_turn(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The system message moved to the top of the first user turn, for chat templates that drop system messages
    (Gemma's in llama-cpp-python), so that Wisp's rules and the caller's system prompt still reach the model."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return rest
