"""Each service's HTTP contract covers every layer below its routes.

A forbidden contract checks only the modules it lists: a layer left out of it may import FastAPI or Starlette
unseen (agent.metrics was, until issue 32). So the listed modules must be every layer from the first one listed
down to the bottom of the service's layers contract.
"""

import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _contracts(service: str) -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / service / ".importlinter")
    return config


def _layers(contract: configparser.SectionProxy) -> list[set[str]]:
    """The layers, top to bottom, each as the full names of its modules (`|` and `:` siblings together)."""
    containers = contract.get("containers", "").split()
    rows = [line.replace(":", "|").split("|") for line in contract["layers"].split("\n") if line.strip()]
    return [{f"{container}.{name.strip()}" if container else name.strip()
             for name in row for container in containers or [""]} for row in rows]


@pytest.mark.parametrize("service", ["agent-svc", "semantic-svc"])
def test_the_http_contract_lists_every_layer_below_the_routes(service: str) -> None:
    config = _contracts(service)
    layers = _layers(config["importlinter:contract:layers"])
    sources = set(config["importlinter:contract:http"]["source_modules"].split())
    first = next(i for i, row in enumerate(layers) if row & sources)
    assert first > 0, "the top layer, the routes or the app, is the one that may know HTTP"
    below_the_routes = set().union(*layers[first:])
    assert sources == below_the_routes, f"left out: {sorted(below_the_routes - sources)}; not layers: " \
                                        f"{sorted(sources - below_the_routes)}"
