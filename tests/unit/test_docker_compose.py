"""docker-compose.yml, the Dockerfiles, searxng/settings.yml and the Makefile, checked statically (no Docker
engine runs here)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from agent.api.firecrawl.index_routes import SimilarRequest
from agent.api.firecrawl.scrape_wire import MAX_TIMEOUT_MS
from agent.config import Settings as AgentSettings
from agent.pages.browser.settings import BrowserSettings
from semantic.config import Settings as SemanticSettings

ROOT = Path(__file__).parents[2]


class ComposeLoader(yaml.SafeLoader):
    """YAML as Compose reads it: `!reset` drops what the files before gave a key."""


RESET = object()
ComposeLoader.add_constructor("!reset", lambda *_: RESET)


def compose_file(name: str) -> dict:
    return yaml.load((ROOT / name).read_text(), Loader=ComposeLoader)


COMPOSE = compose_file("docker-compose.yml")
SERVICES = COMPOSE["services"]
GPU_OVERRIDE = compose_file("docker-compose.gpu.yml")
SCALE_OVERRIDE = compose_file("docker-compose.scale.yml")
SEARXNG_SETTINGS = yaml.safe_load((ROOT / "searxng" / "settings.yml").read_text())
INTERPOLATION = re.compile(r"\$\{[A-Z_]+:?-([^}]*)\}")


def env_names(settings_class: type) -> set[str]:
    """The variables a service reads: agent-svc's every section's, semantic-svc's Settings'."""
    sections = settings_class.sections() if hasattr(settings_class, "sections") else [settings_class]
    return {name.upper() for section in sections for name in section.model_fields}


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


REPLACED_SEQUENCES = {"command", "entrypoint", "test"}  # Compose replaces these lists; it appends to the others


def merged(base: dict, override: dict) -> dict:
    """`override` applied on top of `base` as `docker compose -f base -f override` does: mappings merge key by
    key, sequences append (but commands and health check tests), `!reset` drops the key, scalars are replaced."""
    result = dict(base)
    for key, value in override.items():
        if value is RESET:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            result[key] = merged(base[key], value)
        elif isinstance(value, list) and isinstance(base.get(key), list) and key not in REPLACED_SEQUENCES:
            result[key] = base[key] + value
        else:
            result[key] = value
    return result


GPU_SERVICES = merged(COMPOSE, GPU_OVERRIDE)["services"]
SCALED = merged(COMPOSE, SCALE_OVERRIDE)
SCALED_SERVICES = SCALED["services"]
STACKS = pytest.mark.parametrize("compose", [COMPOSE, SCALED], ids=["single", "scaled"])


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


@STACKS
@pytest.mark.parametrize(("service", "settings"), [("agent-svc", AgentSettings), ("semantic-svc", SemanticSettings)])
def test_service_environment_uses_the_settings_names(compose: dict, service: str, settings: type) -> None:
    unknown = set(compose["services"][service]["environment"]) - env_names(settings)
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


@STACKS
def test_dependencies_exist_and_health_conditions_have_health_checks(compose: dict) -> None:
    services = compose["services"]
    for name, service in services.items():
        for dependency, condition in service.get("depends_on", {}).items():
            assert dependency in services, f"{name} depends on unknown {dependency}"
            if condition["condition"] == "service_healthy":
                target = services[dependency]
                has_check = "healthcheck" in target or (
                    "build" in target and "HEALTHCHECK" in dockerfile_of(target).read_text())
                assert has_check, f"{name} waits for {dependency} to be healthy, which has no health check"


@STACKS
def test_volumes_exist(compose: dict) -> None:
    named = set(compose.get("volumes") or {})
    for name, service in compose["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":", 1)[0]
            if source.startswith("."):
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in named, f"{name} uses undeclared volume {source}"


@STACKS
def test_published_ports_bind_loopback_only(compose: dict) -> None:
    for service in compose["services"].values():
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
    assert per_slot >= 500 + settings.rich.rich_context_chars // 4 + settings.llm.llm_max_tokens
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


# docker-compose.scale.yml on top of docker-compose.yml: agent-svc replicas on Redis behind HAProxy

HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
DURATION = re.compile(r"(\d+)(ms|s|m|h)?")


def haproxy_sections(text: str) -> dict[str, list[str]]:
    """Each section of an HAProxy configuration ("frontend wisp") with its lines, comments and spacing dropped."""
    sections: dict[str, list[str]] = {}
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if line[0].isspace():
            lines.append(" ".join(line.split()))
        else:
            lines = sections.setdefault(" ".join(line.split()), [])
    return sections


HAPROXY = haproxy_sections(HAPROXY_CFG.read_text())


def seconds(duration: str) -> float:
    """An HAProxy duration in seconds (a bare number is milliseconds)."""
    match = DURATION.fullmatch(duration)
    assert match, duration
    number, unit = match.groups()
    return int(number) * {"ms": 0.001, None: 0.001, "s": 1, "m": 60, "h": 3600}[unit]


def setting(section: str, name: str) -> str:
    """The value of the line of `section` that starts with `name` ("timeout server" → "610s")."""
    [value] = [line.removeprefix(name).strip() for line in HAPROXY[section] if line.startswith(name + " ")]
    return value


def frontend_on(port: int) -> str:
    [frontend] = [s for s, lines in HAPROXY.items() if s.startswith("frontend ") and f"bind :{port}" in lines]
    return frontend


def backend_of(frontend: str) -> list[str]:
    return HAPROXY["backend " + setting(frontend, "default_backend")]


def published_port(service: dict) -> int:
    """The container port of a service's one published mapping."""
    [mapping] = service["ports"]
    return int(by_default(mapping).rsplit(":", 1)[-1])


def longest_request_s() -> float:
    """The longest a request may keep its agent-svc replica answering: a rich answer, or a scrape or /v2/similar
    with the longest `timeout` they take."""
    similar_ms = next(m.le for m in SimilarRequest.model_fields["timeout"].metadata if hasattr(m, "le"))
    return max(AgentSettings().rich.rich_deadline_s, MAX_TIMEOUT_MS / 1000, similar_ms / 1000)


def test_the_scaled_stack_adds_redis_and_a_balancer_to_the_same_services() -> None:
    assert set(SCALED_SERVICES) == set(SERVICES) | {"redis", "balancer"}
    assert set(SCALE_OVERRIDE["services"]) - {"redis", "balancer"} <= set(SERVICES)  # overrides, not new copies
    for name, service in SCALED_SERVICES.items():
        assert "image" in service or dockerfile_of(service).is_file(), name


@STACKS
def test_every_service_says_when_it_is_healthy(compose: dict) -> None:
    for name, service in compose["services"].items():
        assert "healthcheck" in service or "HEALTHCHECK" in dockerfile_of(service).read_text(), name


def test_the_scaled_stack_runs_three_agent_replicas_and_two_semantic_ones() -> None:
    assert SCALED_SERVICES["agent-svc"]["deploy"]["replicas"] == 3
    assert SCALED_SERVICES["semantic-svc"]["deploy"]["replicas"] == 2
    assert not any("deploy" in SERVICES[name] for name in ("agent-svc", "semantic-svc"))  # the default: one each


def test_every_agent_replica_shares_one_redis_and_waits_for_it() -> None:
    agent = SCALED_SERVICES["agent-svc"]
    url = urlsplit(agent["environment"]["REDIS_URL"])
    assert (url.scheme, url.hostname, url.port) == ("redis", "redis", int(SCALED_SERVICES["redis"]["expose"][0]))
    assert agent["depends_on"]["redis"] == {"condition": "service_healthy"}
    assert "REDIS_URL" not in SERVICES["agent-svc"]["environment"]  # the single-machine default keeps SQLite jobs


def test_redis_keeps_an_append_only_file_on_a_volume_and_says_when_it_is_loaded() -> None:
    redis = SCALED_SERVICES["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"  # a full Redis drops no job
    [volume] = redis["volumes"]
    assert volume.split(":")[1] == "/data" and volume.split(":")[0] in SCALED["volumes"]
    assert "ping" in " ".join(redis["healthcheck"]["test"]) and "PONG" in " ".join(redis["healthcheck"]["test"])


def test_semantic_replicas_share_the_qdrant_server_and_never_an_embedded_index() -> None:
    semantic = SCALED_SERVICES["semantic-svc"]
    url = urlsplit(semantic["environment"]["QDRANT_URL"])
    assert (url.hostname, url.port) == ("qdrant", 6333)
    assert "QDRANT_PATH" not in semantic["environment"]
    # a volume holds the models' relevance calibrations, a cache any replica may fill: never an index
    assert [v.split(":")[0] for v in semantic.get("volumes", [])] == ["relevance-cache"]
    assert semantic["depends_on"]["qdrant"] == {"condition": "service_healthy"}


def test_only_the_balancer_is_published_and_on_loopback_where_agent_svc_was() -> None:
    assert {name for name, service in SCALED_SERVICES.items() if service.get("ports")} == {"balancer"}
    assert [by_default(p) for p in SCALED_SERVICES["balancer"]["ports"]] == ["127.0.0.1:3002:8000"]


def test_the_balancer_runs_the_repositorys_config_and_starts_after_the_replicas() -> None:
    balancer = SCALED_SERVICES["balancer"]
    [volume] = balancer["volumes"]
    source, target, mode = volume.split(":")
    assert (ROOT / source).resolve() == HAPROXY_CFG.resolve() and target == "/usr/local/etc/haproxy/haproxy.cfg"
    assert mode == "ro"
    assert balancer["depends_on"] == {"agent-svc": {"condition": "service_healthy"},
                                      "semantic-svc": {"condition": "service_healthy"}}
    assert setting(frontend_on(published_port(balancer)), "monitor-uri") in " ".join(balancer["healthcheck"]["test"])


def test_clients_reach_every_agent_replica_round_robin() -> None:
    agent = SCALED_SERVICES["agent-svc"]
    backend = backend_of(frontend_on(published_port(SCALED_SERVICES["balancer"])))
    assert "balance roundrobin" in backend
    [servers] = [line for line in backend if line.startswith("server-template ")]
    _, _, slots, address, *options = servers.split()
    assert address == f"agent-svc:{container_port(agent)}" and int(slots) >= agent["deploy"]["replicas"]
    assert {"check", "resolvers"} <= set(options)  # each replica found through Docker's DNS, and checked


def test_agent_svc_reaches_the_semantic_replicas_through_the_balancer_round_robin_once_ready() -> None:
    url = urlsplit(SCALED_SERVICES["agent-svc"]["environment"]["SEMANTIC_SVC_URL"])
    assert url.hostname == "balancer" and str(url.port) in SCALED_SERVICES["balancer"]["expose"]
    backend = backend_of(frontend_on(url.port))
    assert "balance roundrobin" in backend and "option httpchk GET /readyz" in backend
    [servers] = [line for line in backend if line.startswith("server-template ")]
    assert servers.split()[3] == f"semantic-svc:{container_port(SERVICES['semantic-svc'])}"


def test_the_balancer_waits_as_long_as_a_replica_may_answer() -> None:
    """A rich answer takes up to RICH_DEADLINE_S, a scrape or /v2/similar up to their longest `timeout`: a
    balancer that gave up sooner would cut answers agent-svc is still writing."""
    for name in ("timeout server", "timeout client"):
        assert seconds(setting("defaults", name)) >= max(120, longest_request_s()), name
    assert seconds(setting("defaults", "timeout tunnel")) >= 3600  # the crawl's WebSocket


def test_the_balancer_streams_answers_unbuffered() -> None:
    settings = [line for lines in HAPROXY.values() for line in lines]
    assert "option http-no-delay" in HAPROXY["defaults"]  # each server-sent event leaves as it comes
    assert not any(line.startswith(("compression", "option http-buffer-request")) for line in settings)


def test_the_balancer_names_the_client_and_the_replicas_trust_only_that() -> None:
    """The keyless rate limit counts by client address: the balancer sets X-Forwarded-For (a client cannot add
    to it), and agent-svc's uvicorn reads it, its command otherwise the image's."""
    frontend = frontend_on(published_port(SCALED_SERVICES["balancer"]))
    assert "http-request set-header X-Forwarded-For %[src]" in HAPROXY[frontend]
    command = SCALED_SERVICES["agent-svc"]["command"]
    image_command = re.search(r"^CMD (\[.*\])$", dockerfile_of(SERVICES["agent-svc"]).read_text(), re.M)
    assert image_command and command == [*yaml.safe_load(image_command.group(1)), "--forwarded-allow-ips", "*"]


def test_retries_never_send_a_request_twice() -> None:
    settings = [line for lines in HAPROXY.values() for line in lines]
    assert not any(line.startswith("retry-on") for line in settings)  # the default: connection failures alone


@pytest.mark.skipif(shutil.which("haproxy") is None and not Path("/usr/sbin/haproxy").exists(),
                    reason="no HAProxy to check the configuration with")
def test_haproxy_accepts_the_configuration() -> None:
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    checked = subprocess.run([haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_agent_image_installs_the_browser_render_asks_for() -> None:
    """RENDER=auto in compose needs Chromium where BROWSER_EXECUTABLE looks, from Debian, not a Playwright download."""
    agent = SERVICES["agent-svc"]
    dockerfile = dockerfile_of(agent).read_text()
    assert re.search(r"apt-get install [^\n]*\bchromium\b", dockerfile)
    assert not re.search(r"^RUN [^\n]*playwright install", dockerfile, re.MULTILINE)
    assert BrowserSettings().browser_executable == "/usr/bin/chromium"  # where Debian's package puts it
    render = agent["environment"]["RENDER"]
    assert re.fullmatch(r"\$\{RENDER:-(auto|always|never)\}", render)
