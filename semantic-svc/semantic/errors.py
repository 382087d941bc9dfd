"""The errors semantic-svc answers with on purpose, each with its HTTP status; mapped to JSON in api.py."""

from __future__ import annotations


class ServiceError(Exception):
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequest(ServiceError):
    status = 400


class NotFound(ServiceError):
    status = 404


class Conflict(ServiceError):
    status = 409


class TooLarge(ServiceError):
    status = 413


class NotReady(ServiceError):
    """Models not loaded (yet, or at all), or the model queue is full: retry later."""

    status = 503


class ClientGone(ServiceError):
    """The client disconnected before the answer was ready; nobody reads this reply (nginx's 499)."""

    status = 499
