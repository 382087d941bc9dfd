"""The log of both services: one JSON object per line (LOG_FORMAT=json) or plain text, each line with the id of
the request it was written for. uvicorn's own lines go the same way; its access log is off, the middleware of
requests.py writes one with the route and the duration instead.

Never log a request body or its headers: they carry queries, pages and API keys.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from wisp_obs.requests import current

LogFormat = Literal["json", "text"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
# what every LogRecord has; the rest of a record's attributes came from `extra=` and are written as fields
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "request_id",
                                                                                "taskName"}


class RequestIdFilter(logging.Filter):
    """Adds `request_id`: the request being served where the line is written, else None."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = current()
        record.request_id = info.id if info else None
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        line.update((key, value) for key, value in vars(record).items() if key not in _STANDARD)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class _WispHandler(logging.StreamHandler):
    """The handler configure() installs, told apart from others' (pytest's capture) when configuring again."""


def configure(level: str, log_format: LogFormat) -> None:
    """Send every logger's lines to stderr in `log_format`, at `level` and above."""
    handler = _WispHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _WispHandler)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    logging.captureWarnings(True)  # Python's warnings become lines of the log too, not raw text beside them
    uvicorn = logging.getLogger("uvicorn")  # its level stays as uvicorn's --log-level set it
    uvicorn.handlers.clear()
    uvicorn.propagate = True
    access = logging.getLogger("uvicorn.access")  # with no handler uvicorn skips its access lines altogether
    access.handlers.clear()
    access.propagate = False
