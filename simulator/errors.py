"""The one error hierarchy. Each class carries the spec's HTTP status and stable `code`; the error
middleware (api/http/middleware.py) is the only place that renders them, as the spec's envelope
`{error: {code, message, request_id, details?, ...extra}}`: a few ramp codes carry extra members
on the error object itself."""

from __future__ import annotations

from typing import Any, ClassVar


class ServiceError(Exception):
    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"
    default_message: ClassVar[str] = "Internal server error"
    # Extra members that hold a service object, written through the wire model each operation
    # that can answer this error declares for it (`Operation.error_members`).
    object_members: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.details = details  # rendered as error.details when present
        self.headers = headers or {}  # extra response headers (Retry-After, Allow)
        # Additional members of the `error` object (ramp RA2: error.kyc, quote drift amounts).
        # They never replace code, message, request_id or details.
        self.extra = extra or {}
        super().__init__(self.message)


class InvalidRequest(ServiceError):
    status = 400
    code = "invalid_request"
    default_message = "The request is invalid"

    @classmethod
    def for_field(
        cls, field: str, message: str, kind: str = "value_error", *, summary: str | None = None
    ) -> InvalidRequest:
        """400 naming one field, shaped like a schema failure (`details.issues`); `field` is a
        dotted path (`document.imageFront`), `loc` its parts."""
        loc: list[str | int] = [int(p) if p.isdigit() else p for p in field.split(".")]
        return cls(
            summary or f"{field}: {message}",
            details={"issues": [{"field": field, "loc": loc, "message": message, "type": kind}]},
        )


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"
    default_message = "Authentication required"


class Forbidden(ServiceError):
    status = 403
    code = "forbidden"
    default_message = "Not allowed for this credential"


class NotFound(ServiceError):
    status = 404
    code = "not_found"
    default_message = "Not found"


class MethodNotAllowed(ServiceError):
    status = 405
    code = "method_not_allowed"
    default_message = "Method not allowed"


class Conflict(ServiceError):
    status = 409
    code = "conflict"
    default_message = "Conflict with the current state"


class PayloadTooLarge(ServiceError):
    status = 413
    code = "payload_too_large"
    default_message = "Request body too large"


class RateLimited(ServiceError):
    status = 429
    code = "rate_limited"
    default_message = "Rate limit exceeded"


class InternalError(ServiceError):
    pass


class UpstreamError(ServiceError):
    status = 502
    code = "upstream_error"
    default_message = "An upstream dependency is unreachable"


class FleetProcessUnreachable(UpstreamError):
    """The simulator's maker fleet in its own process did not answer its control channel (the
    process exited, or did not reply in time)."""

    default_message = "The simulated maker fleet's process is unreachable"


class VenueUnavailable(ServiceError):
    status = 503
    code = "venue_unavailable"
    default_message = "Quotes are briefly not served"


class RampCustomerRequired(ServiceError):
    """The side needs a personal provider profile and the wallet has none (ramp RA8, RA10)."""

    status = 409
    code = "ramp_customer_required"
    default_message = "This wallet needs a customer profile with the provider; register it first"


class QuoteDrift(ServiceError):
    """The executable quote moved more than the drift bound from expectedTargetAmount; nothing
    was booked. The amounts (and on a sell the registered recipient) ride on the error object."""

    status = 409
    code = "quote_drift"
    default_message = "The price moved more than 1% from expectedTargetAmount; nothing was booked"

    def __init__(
        self,
        *,
        expected_target_amount: str,
        actual_target_amount: str,
        rate_label: str,
        fee_label: str,
        provider_recipient_id: str | None = None,
        message: str | None = None,
    ) -> None:
        extra: dict[str, Any] = {
            "expectedTargetAmount": expected_target_amount,
            "actualTargetAmount": actual_target_amount,
            "rateLabel": rate_label,
            "feeLabel": fee_label,
        }
        if provider_recipient_id is not None:
            extra["providerRecipientId"] = provider_recipient_id
        super().__init__(message, extra=extra)


class KycRequired(ServiceError):
    """A buy for a person the provider will not take a deposit from; `kyc` is the review state
    (the ramp's KycView), carried as `error.kyc` in the shape the operation declares for it
    (`Operation.error_members`)."""

    status = 422
    code = "kyc_required"
    default_message = "The provider will not accept a deposit from this person until verified"
    object_members = ("kyc",)

    def __init__(self, kyc: object, message: str | None = None) -> None:
        super().__init__(message, extra={"kyc": kyc})


class ProviderDeclined(ServiceError):
    """The provider declined; the message is the provider's own sentence, shown to the user."""

    status = 422
    code = "provider_refused"
    default_message = "The provider declined the request"


ALL_ERRORS: tuple[type[ServiceError], ...] = (
    InvalidRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Conflict,
    PayloadTooLarge,
    RateLimited,
    InternalError,
    UpstreamError,
    VenueUnavailable,
    RampCustomerRequired,
    QuoteDrift,
    KycRequired,
    ProviderDeclined,
)


class ProofOfControlError(Unauthorized):
    """A missing or bad takerProof: 401 with `details.reason` naming which rule failed."""

    reason: ClassVar[str] = "proof_of_control_invalid"

    def __init__(self, message: str | None = None, **extra: Any) -> None:
        super().__init__(message, details={"reason": self.reason, **extra})


class ProofOfControlRequired(ProofOfControlError):
    reason = "proof_of_control_required"
    default_message = "takerProof is required: no live proof-of-control grant for this taker"


class ProofOfControlStale(ProofOfControlError):
    reason = "proof_of_control_stale"
    default_message = "takerProof.issuedAt is more than 60 seconds from the service clock"


class ProofOfControlInvalid(ProofOfControlError):
    reason = "proof_of_control_invalid"
    default_message = "takerProof.signature does not verify as the taker"


class ProofOfControlReplayed(ProofOfControlError):
    reason = "proof_of_control_replayed"
    default_message = "takerProof nonce was already used with other contents or by another caller"


class TakerControlUnverifiable(UpstreamError):
    default_message = "The taker's smart-account signature could not be checked on chain; retry"

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, details={"reason": "taker_control_unverifiable"})
