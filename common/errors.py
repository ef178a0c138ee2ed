"""Domain errors raised by services and mapped to HTTP once, in ``controlui.api``."""

from __future__ import annotations

from collections.abc import Sequence


class DomainError(Exception):
    """A request the service refuses; ``status`` is the HTTP code the API answers with."""

    status = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(DomainError):
    status = 404


class PermissionDenied(DomainError):
    status = 403


class PayloadTooLarge(DomainError):
    status = 413


class ServiceUnavailable(DomainError):
    """A backend failed (e.g. the database refused a write); the request may be retried."""

    status = 503


class InvalidInput(DomainError):
    """Input that parsed but is not acceptable; ``errors`` name the paths at fault."""

    status = 422

    def __init__(self, detail: str, errors: Sequence[str] = ()) -> None:
        super().__init__(detail)
        self.errors = list(errors)
