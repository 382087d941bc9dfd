"""An app served by uvicorn on a free loopback port, as production serves it, for the real clients to call."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn


def served(app: Any) -> Iterator[str]:
    """Serve `app` (its state already set: no lifespan) until the generator is closed; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, "127.0.0.1", port, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(5)
