"""The provider's errors: `{"error": {"type", "message", ...extra}}` with the contract's status."""

from __future__ import annotations

from typing import Any


class SandboxError(Exception):
    status = 500
    type = "internal"

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message  # the provider's sentence (shown to users on `refused`)
        self.extra = extra  # more fields of the error object, e.g. the existing `transfer`

    def body(self) -> dict[str, Any]:
        return {"error": {"type": self.type, "message": self.message, **self.extra}}


class SandboxInvalid(SandboxError):
    status = 400
    type = "invalid"


class SandboxUnauthorized(SandboxError):
    status = 401
    type = "unauthorized"


class SandboxForbidden(SandboxError):
    status = 403
    type = "forbidden"


class SandboxNotFound(SandboxError):
    status = 404
    type = "not_found"


class SandboxConflict(SandboxError):
    status = 409
    type = "conflict"


class SandboxRefused(SandboxError):
    status = 422
    type = "refused"


class SandboxUnavailable(SandboxError):
    status = 503
    type = "unavailable"
