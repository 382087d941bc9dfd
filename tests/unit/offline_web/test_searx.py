"""searx's settings for `make run`: its own default internet engines, served on loopback only."""

from __future__ import annotations

from pathlib import Path

import pytest

from offline_web.searx import internet_settings


def test_internet_settings_keep_searxs_engines_and_serve_on_loopback() -> None:
    settings = internet_settings(18888)
    assert settings["server"]["bind_address"] == "127.0.0.1" and settings["server"]["port"] == 18888
    assert settings["server"]["secret_key"] not in ("ultrasecretkey", "")  # searx exits on the example's
    enabled = {e["name"] for e in settings["engines"] if not e.get("disabled")}
    assert {"google", "bing", "wikipedia"} <= enabled
    assert internet_settings(18888)["server"]["secret_key"] != settings["server"]["secret_key"]


def test_without_debians_example_settings_the_error_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="SEARXNG_URL"):
        internet_settings(18888, example=tmp_path / "settings.yml")
