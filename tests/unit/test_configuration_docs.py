"""docs/configuration.md documents every setting of both services: every section of agent-svc's, and semantic-svc's
Settings."""

import re
from pathlib import Path

from agent.config import Settings as AgentSettings
from semantic.config import Settings as SemanticSettings

DOC = Path(__file__).parents[2] / "docs" / "configuration.md"


def documented() -> set[str]:
    """Every variable a table row names, `A` / `B` rows included."""
    rows = re.findall(r"^\| (`[A-Z0-9_]+`(?: / `[A-Z0-9_]+`)*) \|", DOC.read_text(), re.M)
    return {name for row in rows for name in re.findall(r"`([A-Z0-9_]+)`", row)}


def test_every_setting_of_both_services_is_documented() -> None:
    sections = [*AgentSettings.sections(), SemanticSettings]
    names = {name.upper() for settings in sections for name in settings.model_fields}
    assert names - documented() == set()
