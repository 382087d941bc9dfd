"""semantic-svc's exceptions share one root, which carries the HTTP status api.py answers with."""

import inspect

from semantic import errors


def test_every_error_derives_from_the_root_and_keeps_the_status_of_its_family() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass) if c.__module__ == errors.__name__]
    assert all(issubclass(c, errors.SemanticError) for c in classes) and len(classes) == 12
    statuses = {c.__name__: c.status for c in classes}
    assert statuses == {"SemanticError": 500, "BadRequest": 400, "TooLarge": 413, "NotFound": 404,
                        "CollectionNotFound": 404, "Conflict": 409, "DimensionMismatch": 409, "NotReady": 503,
                        "ModelUnavailable": 503, "StoreInUse": 503, "Busy": 503, "ClientGone": 499}
    assert errors.CollectionNotFound("no collection 'x'").message == "no collection 'x'"
