"""What a call to the shared state raises while Redis is out of reach: every Redis store catches these alone, to
fail (a 503) or fall back as its docstring says, and lets any other error through."""

from __future__ import annotations

from redis.exceptions import RedisError

# OSError: a socket's errors, and the TimeoutError of asyncio's waits
UNREACHABLE: tuple[type[Exception], ...] = (RedisError, OSError)
