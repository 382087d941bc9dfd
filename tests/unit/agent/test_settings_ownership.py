"""Each stage owns its settings: a section is imported only inside the package that declares it, and by the
composition root (agent.app) and the root of sections (agent.config); the clients and services that every stage
is handed carry no settings. Read from the source, so that a new module is checked the day it is added."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pkgutil
import typing
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

import agent
from agent.config import Settings
from agent.core.section import Section
from agent.services import Services
from agent.upstream.clients import Upstreams

ROOTS = {"agent.app", "agent.config"}
MAX_FIELDS = 40


def _modules() -> dict[str, Path]:
    found = {"agent": Path(agent.__file__)}
    for info in pkgutil.walk_packages(agent.__path__, "agent."):
        spec = importlib.util.find_spec(info.name)
        assert spec is not None and spec.origin is not None
        found[info.name] = Path(spec.origin)
    return found


MODULES = _modules()


def _sections() -> dict[str, str]:
    """Every section class by name → the package that declares it."""
    owners = {}
    for name in MODULES:
        if name.endswith(".__main__"):  # a command line, run when imported
            continue
        for cls_name, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            if issubclass(cls, Section) and cls is not Section and cls.__module__ == name:
                owners[cls_name] = name.rsplit(".", 1)[0]
    return owners


SECTIONS = _sections()


def _imports(module: str) -> set[tuple[str, str]]:
    """(module imported from, name) for every `from X import Y` of `module`, relative imports resolved."""
    tree = ast.parse(MODULES[module].read_text())
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            found |= {(base, alias.name) for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {(alias.name, "") for alias in node.names}
    return found


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_sections_are_found() -> None:
    assert {"SearxngSettings", "RankingSettings", "HybridSettings", "RichSettings", "CrawlSettings"} <= set(SECTIONS)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_section_is_imported_only_by_its_own_package(module: str) -> None:
    if module in ROOTS:
        return
    strays = {name for _, name in _imports(module) if name in SECTIONS and not _inside(module, SECTIONS[name])}
    assert strays == set(), f"{module} reads another stage's settings: {sorted(strays)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_composition_root_imports_the_root_settings(module: str) -> None:
    if module in ROOTS:
        return
    assert not any(base == "agent.config" or (base == "agent" and name == "config")
                   for base, name in _imports(module)), module


def _settings_types(hint: object) -> set[type]:
    """The settings classes a field's type names, through unions and containers."""
    if inspect.isclass(hint) and issubclass(hint, (BaseSettings, Settings)):
        return {hint}
    return {found for arg in typing.get_args(hint) for found in _settings_types(arg)}


@pytest.mark.parametrize("carrier", [Upstreams, Services])
def test_the_carriers_every_stage_is_handed_hold_no_settings(carrier: type) -> None:
    hints = typing.get_type_hints(carrier)
    held = {field.name: _settings_types(hints[field.name]) for field in dataclasses.fields(carrier)}
    assert {name: types for name, types in held.items() if types} == {}


def test_no_settings_class_is_wide() -> None:
    widths = {section.__name__: len(section.model_fields) for section in Settings.sections()}
    assert max(widths.values()) <= MAX_FIELDS, widths
    assert len(Settings.model_fields) <= MAX_FIELDS


def test_a_stray_import_is_caught(tmp_path: Path) -> None:
    """The check itself: a module of the search stage that imports the rich answer's section is a stray."""
    stray = tmp_path / "stray.py"
    stray.write_text("from agent.answers.settings import RichSettings\n")
    MODULES["agent.search.stray"] = stray
    try:
        with pytest.raises(AssertionError, match="RichSettings"):
            test_a_section_is_imported_only_by_its_own_package("agent.search.stray")
    finally:
        del MODULES["agent.search.stray"]
