"""Provider failures (the port's errors) as the spec's errors, in one place for every ramp
service: unreachable is 502 upstream_error, a refusal is 422 provider_refused with the provider's
sentence, a request the provider calls malformed is 400."""

from __future__ import annotations

from simulator.errors import InvalidRequest, NotFound, ProviderDeclined, ServiceError, UpstreamError
from simulator.services.ramp.ports import (
    ProviderConflict,
    ProviderError,
    ProviderInvalid,
    ProviderNotFound,
    ProviderRefused,
)

UNREACHABLE_MESSAGE = "The ramp provider cannot be reached right now; retry"


def provider_unreachable(provider_id: str) -> UpstreamError:
    return UpstreamError(
        UNREACHABLE_MESSAGE, details={"reason": "provider_unreachable", "provider": provider_id}
    )


def provider_failure(provider_id: str, exc: ProviderError) -> ServiceError:
    """The spec's error for a provider failure. A `ProviderNotFound` becomes 404 here; callers
    for whom the provider's 404 means a bad input (an unknown bank) translate it themselves."""
    if isinstance(exc, ProviderRefused):
        return ProviderDeclined(exc.message or None)
    if isinstance(exc, ProviderInvalid):
        return InvalidRequest(
            exc.message or "The provider rejected the request as malformed",
            details={"reason": "provider_invalid"},
        )
    if isinstance(exc, ProviderNotFound):
        return NotFound(exc.message or None)
    if isinstance(exc, ProviderConflict):
        return UpstreamError(
            exc.message or "The provider reported a conflict",
            details={"reason": "provider_conflict", "provider": provider_id},
        )
    return provider_unreachable(provider_id)
