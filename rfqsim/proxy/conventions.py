"""The service's side of every exchange, whatever the operation: the request id, the error
envelope and its status/code pair from the document's error table, the success body, the
limiter's headers and Retry-After, timestamps and amounts in the spec's formats, and an unknown
path answered 404. Each check is one of the conformance suite's assertions under its rule id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.calls.feed import number
from conformance.checks.assertions import atomic
from conformance.wire.json_walk import fields
from conformance.wire.response_checks import (
    RATE_LIMIT_HEADERS,
    assert_allow,
    assert_data_body,
    assert_envelope,
    assert_envelope_request_id,
    assert_issues,
    assert_json_content_type,
    assert_no_rate_limit_headers,
    assert_rate_limit_headers,
    assert_request_id,
    assert_retry_after,
    parse_iso_utc,
)
from conformance.wire.wording import shown
from rfqsim.proxy.exchange import is_json_type
from rfqsim.proxy.expect import expect_equal, expect_in
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.requests import API_KEY, RFQ_OWNED, SCHEMA_RULES
from rfqsim.proxy.spec import DOCUMENT, DOCUMENT_PATHS, SpecOperation, error_table, paths_of

REQUEST_ID = {
    "rfq": "rfq/overview/conventions/every-response-carries-x-request-id",
    "ramp": "ramp/overview/conventions",
    "v1": "rfq/overview/conventions/every-response-carries-x-request-id",
    "feed": "rfq/overview/conventions/every-response-carries-x-request-id",
}
ENVELOPE = {
    "rfq": "rfq/errors/envelope",
    "ramp": "ramp/errors/envelope",
    "v1": "v1/errors/same-envelope-document-1",
}
ENVELOPE_REQUEST_ID = {
    "rfq": "rfq/errors/request_id-equals-x-request-id-header",
    "ramp": "ramp/errors/envelope",
    "v1": "v1/errors/same-envelope-document-1",
}
WRAPPED = "rfq/overview/conventions/successful-bodies-wrapped-object"
JSON_BODIES = {"rfq": "rfq/endpoints/all-bodies-json", "ramp": "ramp/overview/conventions"}
# A success that says it is JSON and is not (v1 keeps document 1's conventions).
JSON_PARSES = {**JSON_BODIES, "v1": "rfq/endpoints/all-bodies-json"}
UNKNOWN_PATH = "rfq/errors/404-not_found"
LIMITER_HEADERS = {
    "rfq": "rfq/limits/rate-limit-headers-responses-handled",
    "v1": "v1/limits/per-key-rate-limit",
}
NOT_ON_BAD_KEY = "rfq/limits/absent-responses-rejected-earlier"
RETRY_AFTER = "rfq/limits/retry-after-set-two-time-window"
BACKSTOP = "rfq/limits/per-ip-ceiling-before-authentication"
RAMP_429 = "ramp/errors/429-rate_limited"
V1_429 = "v1/errors/429-rate_limited"
V1_429_MESSAGE = "Rate limit exceeded"
PROOF_REASONS = {
    "rfq": "rfq/auth/proof-of-control/rule-6",
    "ramp": "ramp/auth/item-2",
}
PROOF_REASON_VALUES = frozenset(
    {
        "proof_of_control_required",
        "proof_of_control_stale",
        "proof_of_control_invalid",
        "proof_of_control_replayed",
    }
)
INSUFFICIENT_FUNDS = "rfq/errors/400-invalid_request"
TIMESTAMPS = {
    "rfq": "rfq/overview/conventions/timestamps-iso-8601-utc-except",
    "ramp": "ramp/overview/conventions",
}
AMOUNTS = {
    "rfq": "rfq/overview/conventions/amounts-base-10-strings-atomic",
    "v1": "v1/overview/conventions",
}
RATES = {
    "rfq": "rfq/overview/conventions/rates-rateray-ray-scaled-1e27",
    "v1": "v1/overview/conventions",
}
RAMP_AMOUNTS = "ramp/overview/conventions"
ALLOW = "rfq/errors/envelope"  # the suite's 405 test (Allow, RFC 9110) is marked with it
NEVER_403 = "rfq/errors/404-not_found"  # "ownership-scoped; never 403"
BAD_KEY_401 = "rfq/auth/api-keys/revoked-suspended-unknown-malformed"
ISSUES = "rfq/errors/details-optional-either-issues"
ACCEPTED_INVALID = {
    "rfq": "rfq/errors/400-invalid_request",
    "ramp": "ramp/errors/400-invalid_request",
    "v1": "v1/errors/400-invalid_request",
}

# Timestamp fields of the spec's resources (spec 1: RFQ record, firm quote, no-quote, ladder,
# events; spec 2: transfer, its timeline and payIn, payout retry).
TIMESTAMP_FIELDS = {
    "rfq": frozenset(
        {
            "replyBy",
            "expiresAt",
            "submittedAt",
            "filledAt",
            "createdAt",
            "orderDeadline",
            "latestOrderDeadline",
            "reservedUntil",
            "asOf",
        }
    ),
    "ramp": frozenset({"expiresAt", "createdAt", "at", "expires_at", "stuckSince"}),
}
HEALTH_PATHS = paths_of("health")
# Amount and rate fields: spec 1 (atomic strings, RAY strings) and spec 3's v1 resources.
ATOMIC_FIELDS = {
    "rfq": frozenset(
        {
            "sellAmount",
            "buyAmount",
            "feeAmount",
            "takerPays",
            "availableSellAmount",
            "availableBuyAmount",
            "minSellAmount",
            "maxSellAmount",
        }
    ),
    "v1": frozenset(
        {
            "sellAmount",
            "buyAmount",
            "minBuyAmount",
            "totalCapacity",
            "maxMakerCapacity",
            "inputAmount",
            "outputAmount",
            "soldAmount",
            "proceeds",
        }
    ),
}
RAY_FIELDS = {
    "rfq": frozenset({"rateRay"}),
    "v1": frozenset(
        {"rateRay", "executionRateRay", "minRate", "assumedRateRay", "effectiveRateRay"}
    ),
}
RAMP_DECIMAL_FIELDS = frozenset(
    {"sourceAmount", "targetAmount", "amount", "expectedTargetAmount", "actualTargetAmount"}
)


Found = list[tuple[str, Any]]


def _atomic_values(found: Found) -> None:
    for name, value in found:
        if value is not None:
            atomic(value, name)


def _timestamps(found: Found) -> None:
    for _, value in found:
        if value is not None:
            parse_iso_utc(value)


def _decimals(found: Found) -> None:
    for name, value in found:
        if value is not None:
            number(value, name)


def _by_kind(body: Any, kinds: dict[str, frozenset[str]]) -> dict[str, Found]:
    """The members of each kind (timestamps, amounts, ...) in one walk over the body."""
    wanted = frozenset().union(*kinds.values())
    found: dict[str, Found] = {kind: [] for kind in kinds}
    for name, value in fields(body, wanted):
        for kind, names in kinds.items():
            if name in names:
                found[kind].append((name, value))
    return found


def check(inspection: Inspection, operation: SpecOperation | None, known_path: bool) -> None:
    """The checks of one exchange that hold for every operation of its surface."""
    ex = inspection.exchange
    surface = ex.surface
    resp = ex.response
    inspection.check(REQUEST_ID[surface], lambda: assert_request_id(resp))
    if not known_path and ex.status in (400, 403, 405, 409, 422):
        inspection.fail(
            UNKNOWN_PATH, f"a path no operation has ({ex.path}) answered {ex.status}, not 404"
        )
    _limits(inspection, operation)
    _credentials(inspection, operation)
    if ex.status == 405:
        inspection.check(ALLOW, lambda: assert_allow(resp, ex.method))
    schema_broken = any(f.side == "client" and f.rule in SCHEMA_RULES for f in inspection.found)
    if schema_broken and 200 <= ex.status < 300 and surface in ACCEPTED_INVALID:
        inspection.fail(
            ACCEPTED_INVALID[surface],
            f"a request whose body breaks the spec's schema was accepted ({ex.status}), not 400",
        )
    if not ex.readable:
        return
    if surface == "feed":
        return  # the feed's own bodies: resources.py
    if ex.status >= 400:
        _error(inspection)
    elif 200 <= ex.status < 300 and resp.is_json:
        _success(inspection, operation)
    elif 200 <= ex.status < 300 and resp.raw and is_json_type(resp.headers.get("Content-Type")):
        inspection.fail(
            JSON_PARSES[surface],
            f"HTTP {ex.status} says {resp.headers.get('Content-Type')} but its body is not JSON "
            f"({len(resp.raw)} bytes, starting {shown(resp.raw[:40])})",
        )


def _error(inspection: Inspection) -> None:
    ex = inspection.exchange
    surface, resp = ex.surface, ex.response
    if ex.path in paths_of("status") and ex.status == 503:
        return  # spec 3: 503 "down", body not shown
    envelope = ENVELOPE[surface]
    if not inspection.check(envelope, lambda: assert_json_content_type(resp)):
        return
    found: list[dict[str, Any]] = []
    if not inspection.check(envelope, lambda: found.append(assert_envelope(resp))):
        return
    error = found[0]
    inspection.check(
        ENVELOPE_REQUEST_ID[surface],
        lambda: assert_envelope_request_id(resp, error, ex.request_id),
    )
    table = error_table(DOCUMENT[surface])
    codes = table.get(ex.status)
    if codes and error.get("code") not in codes:
        rule = next(iter(codes.values()))
        inspection.fail(
            rule,
            f"HTTP {ex.status} answers code {shown(error.get('code'))}; the spec's table pairs "
            f"{ex.status} with {' or '.join(sorted(codes))}",
        )
    elif codes:
        inspection.check(codes[str(error["code"])], lambda: None)
    details = error.get("details") or {}
    reason = details.get("reason") if isinstance(details, Mapping) else None
    if ex.status == 401 and isinstance(reason, str) and reason.startswith("proof_of_control"):
        inspection.check(
            PROOF_REASONS.get(surface, PROOF_REASONS["rfq"]),
            lambda: expect_in(reason, PROOF_REASON_VALUES, "details.reason"),
        )
    if reason == "insufficient_funds" and surface == "rfq":
        funds = list(fields(details, frozenset({"required", "available", "committed"})))
        inspection.check(INSUFFICIENT_FUNDS, lambda: _atomic_values(funds))
    if ex.status == 400 and surface != "feed" and _only_schema_failures(inspection):
        inspection.check(ISSUES, lambda: assert_issues(error))
    if surface == "v1" and ex.status == 429:
        inspection.check(
            V1_429, lambda: expect_equal(error.get("message"), V1_429_MESSAGE, "error.message")
        )


def _success(inspection: Inspection, operation: SpecOperation | None) -> None:
    ex = inspection.exchange
    surface, resp = ex.surface, ex.response
    if surface in JSON_BODIES:
        inspection.check(JSON_BODIES[surface], lambda: assert_json_content_type(resp))
    if surface == "rfq" and ex.path != DOCUMENT_PATHS["rfq"]:
        inspection.check(WRAPPED, lambda: assert_data_body(resp))
    if ex.path in DOCUMENT_PATHS.values():
        return
    kinds: dict[str, frozenset[str]] = {}
    if surface in TIMESTAMP_FIELDS:
        kinds["timestamps"] = TIMESTAMP_FIELDS[surface]
    if ex.path in HEALTH_PATHS:
        kinds["time"] = frozenset({"time"})
    if surface in ATOMIC_FIELDS:
        kinds["amounts"], kinds["rates"] = ATOMIC_FIELDS[surface], RAY_FIELDS[surface]
    if surface == "ramp":
        kinds["decimals"] = RAMP_DECIMAL_FIELDS
    found = _by_kind(resp.body, kinds)
    if "timestamps" in found:
        inspection.check(TIMESTAMPS[surface], lambda: _timestamps(found["timestamps"]))
    if "time" in found:
        inspection.check(TIMESTAMPS["rfq"], lambda: _timestamps(found["time"]))
    if "amounts" in found:
        inspection.check(AMOUNTS[surface], lambda: _atomic_values(found["amounts"]))
        inspection.check(RATES[surface], lambda: _atomic_values(found["rates"]))
    if "decimals" in found:
        inspection.check(RAMP_AMOUNTS, lambda: _decimals(found["decimals"]))


def _limits(inspection: Inspection, operation: SpecOperation | None) -> None:
    """X-RateLimit-* where the limiter answered, none on a bad key's 401, Retry-After on the
    time-window 429s and never on the outstanding-RFQ cap's."""
    ex = inspection.exchange
    resp = ex.response
    limiter_headers = any(name in resp.headers for name in RATE_LIMIT_HEADERS)
    if ex.status == 401 and ex.keyed and ex.surface in ("rfq", "v1"):
        # With a key, proofs are ignored: a 401 is the key refused, before the limiter.
        inspection.check(NOT_ON_BAD_KEY, lambda: assert_no_rate_limit_headers(resp))
    elif operation is not None and operation.limited and ex.surface in LIMITER_HEADERS:
        handled = 200 <= ex.status < 300 or (
            ex.surface == "v1" and ex.status != 401 and (ex.status != 429 or limiter_headers)
        )
        if handled:
            inspection.check(LIMITER_HEADERS[ex.surface], lambda: assert_rate_limit_headers(resp))
    if ex.status != 429:
        return
    if not limiter_headers:  # the per-IP backstop, before anyone is identified
        inspection.check(BACKSTOP, lambda: assert_retry_after(resp))
    elif ex.surface == "ramp":
        inspection.check(RAMP_429, lambda: assert_retry_after(resp))
    elif ex.surface == "v1":
        inspection.check(LIMITER_HEADERS["v1"], lambda: assert_retry_after(resp))
    elif operation is not None and operation.role == "firm":
        if resp.headers.get("X-RateLimit-Remaining") != "0":  # let through: the outstanding cap
            inspection.check(RETRY_AFTER, lambda: _no_retry_after(resp.headers.get_all))
        elif resp.headers.get_all("Retry-After"):
            inspection.check(RETRY_AFTER, lambda: assert_retry_after(resp))
        # Remaining 0 and no Retry-After: the limiter's refusal, or the outstanding cap's on the
        # request that took the window's last slot. Only the window seen before can tell
        # (state.py `State._limiter`).
    else:
        inspection.check(RETRY_AFTER, lambda: assert_retry_after(resp))


def _only_schema_failures(inspection: Inspection) -> bool:
    """Whether the client's request broke the body's schema and nothing else: the service then
    has one cause to report, and its 400 names the fields (with another fault too, such as a
    body not sent as JSON, it may report that one by a reason)."""
    faults = [f.rule for f in inspection.found if f.side == "client"]
    return bool(faults) and all(rule in SCHEMA_RULES for rule in faults)


def _credentials(inspection: Inspection, operation: SpecOperation | None) -> None:
    """403 is a key's missing scope: never the answer to a caller without a key on an RFQ of
    its own, nor to a malformed key (401)."""
    ex = inspection.exchange
    if ex.status != 403:
        return
    if operation in RFQ_OWNED and not ex.keyed:
        inspection.fail(NEVER_403, "a caller without a key was answered 403 on an RFQ, not 404")
    key = ex.api_key
    if key is not None and not API_KEY.match(key):
        inspection.fail(BAD_KEY_401, "a malformed API key was answered 403, not 401")


def _no_retry_after(get_all: Any) -> None:
    got = get_all("Retry-After")
    assert not got, f"Retry-After: expected none on the outstanding-RFQ cap's 429, got {shown(got)}"
