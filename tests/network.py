"""Whether the package index pip would use can be reached, for the tests marked `network` (tests/conftest.py skips
them, saying why, when it cannot: a machine without the network, not a fault of the code).

The index is pip's own choice: PIP_INDEX_URL, else `index-url` in pip's configuration (its install section before
its global one), else PyPI. Reached means it answered, even with an error of its own, or TLS that pip may trust
where this probe does not (pip reads its own CA bundle): only no answer within PROBE_S, or a 5xx (a proxy that
cannot reach it either), is unreachable.
"""

from __future__ import annotations

import ast
import functools
import os
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

PYPI = "https://pypi.org/simple/"
PROBE_S = 5.0


def package_index() -> str:
    """The index URL pip would install from."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                            timeout=30).stdout
    found: dict[str, str] = {}
    for line in listed.splitlines():
        name, _, value = line.partition("=")
        section, _, key = name.partition(".")
        if key == "index-url" and value:
            found[section] = ast.literal_eval(value)
    return found.get("install") or found.get("global") or PYPI


@functools.cache
def index_unreachable() -> str | None:
    """Why the package index cannot be reached, or None when it answers; asked once a session."""
    index = package_index()
    if urlsplit(index).scheme == "file":
        path = Path(urlsplit(index).path)
        return None if path.is_dir() else f"the package index pip would use, {index}, is not a folder here"
    probe = index.rstrip("/") + "/pip/"  # a small page: the index's root lists every project
    try:
        urllib.request.urlopen(urllib.request.Request(probe, method="HEAD"), timeout=PROBE_S).close()
        return None
    except urllib.error.HTTPError as e:
        if e.code < 500:
            return None  # it answered
        why = f"answered HTTP {e.code}"
    except urllib.error.URLError as e:
        if isinstance(e.reason, ssl.SSLError):
            return None  # it answered, over TLS this probe does not trust
        why = f"did not answer ({e.reason})"
    except (OSError, TimeoutError) as e:
        why = f"did not answer within {PROBE_S:.0f} s ({type(e).__name__}: {e})"
    return f"needs the network: the package index pip would use, {index}, {why}"
