"""semantic-svc's exceptions: one root, `SemanticError`, whose `status` is the HTTP status it answers with.

api.py turns any of them into `{"error": message}` with that status, in one handler; no other module maps an
error to HTTP. Each family says what went wrong for the caller: the request (4xx), or the models (503).
"""

from __future__ import annotations


class SemanticError(Exception):
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(SemanticError):
    status = 400


class TooLarge(SemanticError):
    status = 413


class NotFound(SemanticError):
    status = 404


class CollectionNotFound(NotFound):
    """The request names a collection the index does not hold."""


class Conflict(SemanticError):
    status = 409


class DimensionMismatch(Conflict):
    """The collection holds vectors of another size than the embedder gives."""


class NotReady(SemanticError):
    """Models not loaded (yet, or at all), or the model queue is full: retry later."""

    status = 503


class ModelUnavailable(NotReady):
    """A configured model cannot be loaded; the message says which and why (/readyz then says it)."""


class StoreInUse(NotReady):
    """The embedded index's folder is held by another process: this one does not start (api.py says why in one
    line and exits)."""


class Busy(NotReady):
    """The model lane's queue is full, or a job waited too long to start; the client should retry later."""


class ClientGone(SemanticError):
    """The client disconnected before the answer was ready; nobody reads this reply (nginx's 499)."""

    status = 499
