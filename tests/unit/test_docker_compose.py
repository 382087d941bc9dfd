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
GPU_OVERRIDE = yaml.safe_load((ROOT / "docker-compose.gpu.yml").read_text())
SEARXNG_SETTINGS = yaml.safe_load((ROOT / "searxng" / "settings.yml").read_text())
INTERPOLATION = re.compile(r"\$\{[A-Z_]+:?-([^}]*)\}")


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
    for model in ("EMBED_MODEL", "SIMILARITY_MODEL", "RERANK_MODEL"):
        assert service["build"]["args"][model] == service["environment"][model]
    assert service["environment"]["EMBED_MODEL"] == "${EMBED_MODEL:-BAAI/bge-m3}"
    dockerfile = dockerfile_of(service).read_text()
    assert "snapshot_download" in dockerfile and '"$SIMILARITY_MODEL"' in dockerfile
    assert "if m]" in dockerfile  # an empty SIMILARITY_MODEL downloads nothing


def merged(base: dict, override: dict) -> dict:
    """`override` applied on top of `base` as `docker compose -f base -f override` does for the keys used here:
    mappings merge key by key, anything else is replaced."""
    result = dict(base)
    for key, value in override.items():
        both_mappings = isinstance(value, dict) and isinstance(base.get(key), dict)
        result[key] = merged(base[key], value) if both_mappings else value
    return result


GPU_SERVICES = merged(COMPOSE, GPU_OVERRIDE)["services"]


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


def gpu_devices(service: dict) -> list[dict]:
    return service.get("deploy", {}).get("resources", {}).get("reservations", {}).get("devices", [])


def test_the_cpu_default_is_sized_for_the_deadline() -> None:
    """docs/hardware.md: on 4 CPU cores ms-marco-MiniLM-L6-v2 reranks hybrid's shortlist in 0.4 s, while
    bge-reranker-v2-m3 takes 11 s of the 8 s deadline; BGE-M3 stays the embedder of queries and the index."""
    service = SERVICES["semantic-svc"]
    assert by_default(service["environment"]["RERANK_MODEL"]) == "cross-encoder/ms-marco-MiniLM-L6-v2"
    assert by_default(service["environment"]["EMBED_MODEL"]) == "BAAI/bge-m3"
    assert "TORCH_VARIANT" not in service["build"]["args"]
    assert "MODEL_DEVICE" not in service["environment"]  # cpu, the default
    assert re.search(r"^ARG TORCH_VARIANT=cpu$", dockerfile_of(service).read_text(), re.MULTILINE)
    assert not any(gpu_devices(s) for s in SERVICES.values())


def test_the_cpu_default_gives_similarity_a_small_multilingual_model_with_its_prefixes() -> None:
    """docs/hardware.md: on 4 cores BGE-M3 embeds semantic mode's pass 2 in 8.3 s, past its 4 s share of the
    deadline; multilingual-e5-small in 0.8 s. e5 models read `query: ` and `passage: ` before each text."""
    environment = SERVICES["semantic-svc"]["environment"]
    settings = SemanticSettings(**{name.lower(): by_default(value) for name, value in environment.items()})
    assert settings.similarity_model == "intfloat/multilingual-e5-small"
    assert (settings.similarity_query_prefix, settings.similarity_passage_prefix) == ("query: ", "passage: ")
    # `-` rather than `:-`: an empty SIMILARITY_MODEL in the environment hands /similarity to BGE-M3
    assert environment["SIMILARITY_MODEL"] == "${SIMILARITY_MODEL-intfloat/multilingual-e5-small}"


def test_the_gpu_override_runs_bge_m3_for_everything_on_cuda() -> None:
    environment = GPU_SERVICES["semantic-svc"]["environment"]
    settings = SemanticSettings(**{name.lower(): by_default(value) for name, value in environment.items()})
    assert (settings.model_device, settings.similarity_embedder()) == ("cuda", None)
    assert by_default(GPU_SERVICES["semantic-svc"]["build"]["args"]["SIMILARITY_MODEL"]) == ""


def test_the_gpu_override_runs_the_large_models_on_cuda_torch_and_a_reserved_gpu() -> None:
    assert set(GPU_OVERRIDE["services"]) <= set(SERVICES)
    service = GPU_SERVICES["semantic-svc"]
    assert by_default(service["environment"]["RERANK_MODEL"]) == "BAAI/bge-reranker-v2-m3"
    assert by_default(service["environment"]["EMBED_MODEL"]) == "BAAI/bge-m3"
    for model in ("EMBED_MODEL", "SIMILARITY_MODEL", "RERANK_MODEL"):  # the image bakes in what the container runs
        assert service["build"]["args"][model] == service["environment"][model]
    assert re.fullmatch(r"cu\d+", service["build"]["args"]["TORCH_VARIANT"])
    assert "whl/$TORCH_VARIANT" in dockerfile_of(service).read_text()
    assert service["build"]["dockerfile"] == SERVICES["semantic-svc"]["build"]["dockerfile"]
    for name in ("semantic-svc", "llm"):
        [device] = gpu_devices(GPU_SERVICES[name])
        assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]


@pytest.mark.parametrize(("service", "settings"), [("agent-svc", AgentSettings), ("semantic-svc", SemanticSettings)])
def test_gpu_override_environment_uses_the_settings_names(service: str, settings: type) -> None:
    unknown = set(GPU_SERVICES[service]["environment"]) - env_names(settings)
    assert not unknown, f"{service} sets variables its Settings class does not read: {unknown}"


def command_option(command: list[str], *names: str) -> int:
    for name in names:
        if name in command:
            return int(command[command.index(name) + 1])
    return 1


@pytest.mark.parametrize("services", [SERVICES, GPU_SERVICES], ids=["cpu", "gpu"])
def test_each_llm_slot_holds_a_rich_answer(services: dict) -> None:
    """llama.cpp's server splits its context (-c) between its slots (--parallel): one slot must hold the rules,
    the packed sources (about 4 characters a token) and the longest answer."""
    settings = AgentSettings()
    command = services["llm"]["command"]
    per_slot = command_option(command, "-c", "--ctx-size") // command_option(command, "--parallel", "-np")
    assert per_slot >= 500 + settings.rich_context_chars // 4 + settings.llm_max_tokens
    model = by_default(command[command.index("-hf") + 1])
    assert by_default(services["agent-svc"]["environment"]["LLM_MODEL"]) == model


def test_the_cpu_llm_is_sized_for_the_rich_deadline() -> None:
    """docs/hardware.md: a 4B model's prompt and answer take longer than RICH_DEADLINE_S on 4 CPU cores."""
    command = SERVICES["llm"]["command"]
    assert re.search(r"-(270m|1b)-", by_default(command[command.index("-hf") + 1]))


def test_both_services_hold_one_pipeline_deadline() -> None:
    services = COMPOSE["services"]
    deadlines = {name: services[name]["environment"]["PIPELINE_DEADLINE_S"] for name in ("agent-svc", "semantic-svc")}
    assert set(deadlines.values()) == {"${PIPELINE_DEADLINE_S:-8}"}
