"""The base of every stage's settings: a section read from the environment (and `.env`) under the variable names
users already set. Each stage declares its own section next to its code; `agent.config.Settings` only gathers
them, so that a stage is handed its section and nothing else."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict


class Section(BaseSettings):
    """A stage's settings. A field's name is its environment variable's, lower-cased, so that every setting is
    found by one name in the code, the docs and a compose file."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", frozen=True)
