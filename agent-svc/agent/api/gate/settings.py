"""The gate's settings: API keys and the bounds of a request's body."""

from __future__ import annotations

from pydantic import Field, SecretStr

from agent.core.section import Section


class GateSettings(Section):
    """The gate: API keys and the bounds of a request's body."""

    api_keys: SecretStr = Field(SecretStr(""), description="Comma-separated API keys; when any is set, every route "
                                "but /healthz and /readyz needs `Authorization: Bearer <key>`")
    api_keys_file: str = Field("", description="File of API keys, one a line (`#` comments), added to API_KEYS")
    # past these a request is a 413 (body) or a 400 naming the bound
    max_body_bytes: int = Field(2_000_000, ge=10_000, description="Largest request body, in bytes (a "
                                "/v2/parse upload's file included)")
    max_json_depth: int = Field(32, ge=4, le=512, description="Deepest nesting of a request's JSON")
    max_list_items: int = Field(10_000, ge=10, description="Longest list anywhere in a request's JSON")
