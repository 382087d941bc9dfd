"""The LLM, any OpenAI-compatible server (llama.cpp's server by default; vLLM, Ollama or a hosted API the same
way), through the `openai` package. Every failure is one `LLMUnavailable` naming the server and the cause, so
a rich search degrades to its ranked sources instead of failing."""

from __future__ import annotations

import json
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
    def __init__(self, base_url: str, api_key: str, model: str, max_tokens: int,
                 http: httpx.AsyncClient | None = None) -> None:
        self.base_url, self.model, self._max_tokens = base_url, model, max_tokens
        self._client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "none", max_retries=0,
                                          http_client=http)

    async def complete(self, messages: list[dict[str, str]], budget_s: float, schema: dict[str, Any] | None = None,
                       model: str | None = None) -> Reply:
        """The model's reply within `budget_s` seconds. With `schema`, JSON mode constrained to it (the form
        both llama.cpp servers honour: `json_object` with a `schema`)."""
        if budget_s <= 0:
            raise LLMUnavailable(f"no time left for the LLM at {self.base_url}")
        extra: dict[str, Any] = {}
        if schema is not None:
            extra["response_format"] = {"type": "json_object", "schema": schema}
        try:
            response = await self._client.chat.completions.create(
                model=model or self.model, messages=messages, max_tokens=self._max_tokens, temperature=0.0,
                timeout=budget_s, **extra)
        except openai.APITimeoutError:
            raise LLMUnavailable(f"the LLM at {self.base_url} did not answer within {budget_s:.1f} s") from None
        except openai.APIStatusError as e:
            raise LLMUnavailable(f"the LLM at {self.base_url} answered HTTP {e.status_code}") from None
        except (openai.APIError, httpx.HTTPError, json.JSONDecodeError, ValueError) as e:
            raise LLMUnavailable(f"the LLM at {self.base_url} failed ({type(e).__name__})") from None
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "").strip() if choices and choices[0].message else ""
        if not text:
            raise LLMUnavailable(f"the LLM at {self.base_url} returned no text")
        return Reply(text, getattr(response, "model", None) or model or self.model)
