"""Debian's HAProxy as a child process on loopback: one frontend that spreads requests round-robin over
agent-svc replicas, as a production deployment's balancer does. No health checks of its own, on purpose: a
replica that dies mid-test keeps receiving its share until a request to it fails, and HAProxy then retries that
request on another replica (`option redispatch`), which is what a client sees in production between two checks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from offline_web.processes import Service, free_port

HAPROXY = "/usr/sbin/haproxy"
HEALTH_PATH = "/lb-health"  # answered by HAProxy itself (monitor-uri)


def haproxy_config(port: int, backends: list[str], timeout_s: int = 600) -> str:
    servers = "\n".join(f"    server r{i} {url.removeprefix('http://')}" for i, url in enumerate(backends))
    return f"""global
    maxconn 512

defaults
    mode http
    timeout connect 2s
    timeout client {timeout_s}s
    timeout server {timeout_s}s
    timeout tunnel {timeout_s}s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend wisp
    bind 127.0.0.1:{port}
    monitor-uri {HEALTH_PATH}
    default_backend agents

backend agents
    balance roundrobin
{servers}
"""


class Balancer(Service):
    """HAProxy on 127.0.0.1:`port`, round-robin over `backends` (http://127.0.0.1:PORT each)."""

    def __init__(self, workdir: Path, backends: list[str], port: int | None = None, name: str = "haproxy") -> None:
        self.port = port or free_port()
        config = workdir / f"{name}.cfg"
        workdir.mkdir(parents=True, exist_ok=True)
        config.write_text(haproxy_config(self.port, backends))
        command = [shutil.which("haproxy") or HAPROXY, "-db", "-f", str(config)]
        super().__init__(name, command, f"http://127.0.0.1:{self.port}", workdir / f"{name}.log",
                         health_path=HEALTH_PATH)
