"""The provider's errors: `{"error": {"type", "message", ...extra}}` with the contract's status."""

from __future__ import annotations

from typing import Any


class ProviderError(Exception):
    status = 500
    type = "internal"

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message  # the provider's sentence (shown to users on `refused`)
        self.extra = extra  # more fields of the error object, e.g. the existing `transfer`

    def body(self) -> dict[str, Any]:
        return {"error": {"type": self.type, "message": self.message, **self.extra}}


class Invalid(ProviderError):
    status = 400
    type = "invalid"


class Unauthorized(ProviderError):
    status = 401
    type = "unauthorized"


class NotFound(ProviderError):
    status = 404
    type = "not_found"


class Conflict(ProviderError):
    status = 409
    type = "conflict"


class Refused(ProviderError):
    status = 422
    type = "refused"


class Unavailable(ProviderError):
    status = 503
    type = "unavailable"
