"""docker-compose.yml, the Dockerfiles, searxng/settings.yml and the Makefile, checked statically (no Docker
engine runs here)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from agent.config import Settings as AgentSettings
from semantic.config import Settings as SemanticSettings

ROOT = Path(__file__).parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
SEARXNG_SETTINGS = yaml.safe_load((ROOT / "searxng" / "settings.yml").read_text())
INTERPOLATION = re.compile(r"\$\{[A-Z_]+:-([^}]*)\}")


def env_names(settings_class: type) -> set[str]:
    return {name.upper() for name in settings_class.model_fields}


def dockerfile_of(service: dict) -> Path:
    build = service["build"]
    if isinstance(build, str):
        return ROOT / build / "Dockerfile"
    return ROOT / build.get("context", ".") / build.get("dockerfile", "Dockerfile")


def test_dockerfiles_copy_only_what_their_context_holds() -> None:
    for name, service in SERVICES.items():
        if "build" not in service:
            continue
        build = service["build"]
        context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
        for source in re.findall(r"^COPY (\S+) ", dockerfile_of(service).read_text(), re.MULTILINE):
            assert (context / source).exists(), f"{name}: COPY {source} is not in its build context"


def test_the_semantic_image_bakes_in_the_models_compose_asks_for() -> None:
    service = SERVICES["semantic-svc"]
    for model in ("EMBED_MODEL", "RERANK_MODEL"):
        assert service["build"]["args"][model] == service["environment"][model]
    assert service["environment"]["EMBED_MODEL"] == "${EMBED_MODEL:-BAAI/bge-m3}"
    assert "snapshot_download" in dockerfile_of(service).read_text()


def by_default(value: str) -> str:
    """A compose value as it is when the environment sets none of its variables."""
    return INTERPOLATION.sub(lambda m: m.group(1), value)


def container_port(service: dict) -> int:
    """The port a service listens on inside the compose network."""
    for mapping in [*service.get("ports", []), *service.get("expose", [])]:
        return int(str(mapping).rsplit(":", 1)[-1])
    command = service.get("command") or []
    if "--port" in command:
        return int(command[command.index("--port") + 1])
    cmd = re.search(r"--port\", \"(\d+)\"", dockerfile_of(service).read_text()) if "build" in service else None
    return int(cmd.group(1)) if cmd else 0


def test_every_service_has_an_image_or_a_buildable_context() -> None:
    assert set(SERVICES) == {"searxng", "qdrant", "llm", "semantic-svc", "agent-svc"}
    for name, service in SERVICES.items():
        assert "image" in service or dockerfile_of(service).is_file(), name


@pytest.mark.parametrize(("service", "settings"), [("agent-svc", AgentSettings), ("semantic-svc", SemanticSettings)])
def test_service_environment_uses_the_settings_names(service: str, settings: type) -> None:
    unknown = set(SERVICES[service]["environment"]) - env_names(settings)
    assert not unknown, f"{service} sets variables its Settings class does not read: {unknown}"


@pytest.mark.parametrize(
    ("service", "variable", "target"),
    [("agent-svc", "SEARXNG_URL", "searxng"), ("agent-svc", "SEMANTIC_SVC_URL", "semantic-svc"),
     ("agent-svc", "LLM_BASE_URL", "llm"), ("semantic-svc", "QDRANT_URL", "qdrant")],
)
def test_urls_point_at_the_right_service_and_port(service: str, variable: str, target: str) -> None:
    url = urlsplit(SERVICES[service]["environment"][variable])
    assert url.hostname == target
    expected_port = 6333 if target == "qdrant" else container_port(SERVICES[target])
    assert url.port == expected_port


def test_dependencies_exist_and_health_conditions_have_health_checks() -> None:
    for name, service in SERVICES.items():
        for dependency, condition in service.get("depends_on", {}).items():
            assert dependency in SERVICES, f"{name} depends on unknown {dependency}"
            if condition["condition"] == "service_healthy":
                target = SERVICES[dependency]
                has_check = "healthcheck" in target or (
                    "build" in target and "HEALTHCHECK" in dockerfile_of(target).read_text())
                assert has_check, f"{name} waits for {dependency} to be healthy, which has no health check"


def test_volumes_exist() -> None:
    named = set(COMPOSE.get("volumes") or {})
    for name, service in SERVICES.items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in named, f"{name} uses undeclared volume {source}"


def test_published_ports_bind_loopback_only() -> None:
    for service in SERVICES.values():
        for mapping in service.get("ports", []):
            assert by_default(str(mapping)).startswith("127.0.0.1:")


def test_only_agent_svc_is_published() -> None:
    assert {name for name, service in SERVICES.items() if service.get("ports")} == {"agent-svc"}
    assert [by_default(p) for p in SERVICES["agent-svc"]["ports"]] == ["127.0.0.1:3002:8000"]


def test_keys_and_limits_come_from_the_environment_and_default_to_open_on_loopback() -> None:
    environment = SERVICES["agent-svc"]["environment"]
    assert environment["API_KEYS"] == "${API_KEYS:-}"  # the shell's or the .env file's, never written here
    assert by_default(environment["RATE_LIMIT_PER_MIN"]) == "0"
    assert int(by_default(environment["RANKED_CONCURRENCY_PER_KEY"])) > 0


def test_the_makefile_serves_on_loopback() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "0.0.0.0" not in makefile
    assert set(re.findall(r"--host (\S+)", makefile)) <= {"127.0.0.1"}


def test_searxng_settings_serve_agent_svc() -> None:
    assert "json" in SEARXNG_SETTINGS["search"]["formats"]  # else SearXNG answers 403
    assert SEARXNG_SETTINGS["server"]["limiter"] is False  # else API clients meet 429
    assert SEARXNG_SETTINGS["server"]["port"] == container_port(SERVICES["searxng"])
    assert "SEARXNG_SECRET" in SERVICES["searxng"]["environment"]
    kept = set(SEARXNG_SETTINGS["use_default_settings"]["engines"]["keep_only"])
    assert {e["name"] for e in SEARXNG_SETTINGS["engines"]} <= kept
    assert "/etc/searxng" in SERVICES["searxng"]["volumes"][0]
