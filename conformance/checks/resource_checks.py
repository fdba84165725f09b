"""The spec's resources checked from one answer alone, with nothing known about the venue: the
RFQ record (:func:`assert_record_fields`, :func:`assert_record_status`,
:func:`assert_record_secrets`), a no-quote (:func:`assert_no_quote`,
:func:`assert_no_quote_reason`, :func:`assert_reserved_consistent`), a preview
(:func:`assert_preview`), the price ladder (:func:`assert_ladder_fields`,
:func:`assert_ladder_directions`, :func:`assert_ladder_points`) and a webhook endpoint as created
and as listed (:func:`assert_created_endpoint`, :func:`assert_listed_endpoint`).

The tests call them beside their own venue-specific checks, and so does the watching proxy
(``rfqsim proxy``), which sees each answer once and knows only the request that led to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.checks.assertions import RECORD_FIELDS, ROUTING_FIELDS, atomic
from conformance.wire.json_walk import objects
from conformance.wire.response_checks import parse_iso_utc
from conformance.wire.wording import shown

# Spec 1 "RFQ record": status values.
RFQ_STATUSES = frozenset(
    {"soliciting", "quoted", "no_quote", "submitted", "filled", "failed", "expired"}
)
# "The signed order, its signature and the claim token are never returned by GET."
SECRET_FIELDS = frozenset({"claimToken", "signature", "encodedOrder", "orders"})
# Spec 3 "Unsigned transaction": to, data, value, chainId.
UNSIGNED_TRANSACTION_FIELDS = frozenset({"to", "data", "value"})
NO_QUOTE_FIELDS = frozenset({"rfqId", "claimToken", "status", "reason", "routing"})
NO_QUOTE_OPTIONAL = frozenset(
    {"availableSellAmount", "availableBuyAmount", "reservedUntil", "retryAfterMs"}
)
NO_QUOTE_REASONS = frozenset({"no_makers_online", "no_restricted_liquidity", "no_valid_quote"})
PREVIEW_FIELDS = frozenset(
    {
        "status",
        "sellAmount",
        "buyAmount",
        "feeAmount",
        "takerPays",
        "rateRay",
        "availableSellAmount",
        "routing",
    }
)
LADDER_FIELDS = frozenset({"chainId", "asOf", "pairs"})
PAIR_FIELDS = frozenset(
    {
        "sellToken",
        "buyToken",
        "sellDecimals",
        "buyDecimals",
        "minSellAmount",
        "maxSellAmount",
        "levels",
    }
)
MAX_LADDER_POINTS = 9
ENDPOINT_FIELDS = frozenset({"id", "url", "eventTypes", "status"})
# The event types an endpoint may subscribe to: spec 1 "Events" and spec 3 "Events".
RFQ_EVENTS = ("rfq.filled", "rfq.failed", "rfq.expired")
V1_EVENTS = ("swap.filled", "limit_order.filled", "limit_order.expired", "limit_order.cancelled")


# -- the RFQ record ------------------------------------------------------------------------


def assert_record_fields(record: Mapping[str, Any]) -> None:
    """GET /v2/rfq/{id}: every field of the record is there."""
    assert set(record) >= RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)


def _not_before(later: str, earlier: str, what: str) -> None:
    """`later` is not before `earlier`, allowing the second a whole-second spelling hides."""
    a, b = parse_iso_utc(later).timestamp(), parse_iso_utc(earlier).timestamp()
    slack = 1.0 if a.is_integer() or b.is_integer() else 0.0
    assert a + slack >= b, f"{what}: expected not before createdAt {earlier}, got {later}"


def assert_record_reply_by(record: Mapping[str, Any]) -> None:
    """replyBy, the end of the maker reply budget, is not before the RFQ was created."""
    _not_before(record["replyBy"], record["createdAt"], "replyBy")


def assert_record_settled_times(record: Mapping[str, Any]) -> None:
    """submittedAt and filledAt, once set, are not before the RFQ was created (filledAt is a
    block's time: whole seconds)."""
    for name in ("submittedAt", "filledAt"):
        if record.get(name) is not None:
            _not_before(record[name], record["createdAt"], name)


def assert_record_status(record: Mapping[str, Any]) -> None:
    assert record.get("status") in RFQ_STATUSES, f"status {shown(record.get('status'))}"


def assert_record_secrets(record: Mapping[str, Any]) -> None:
    """No signed order, signature or claim token in a record read by GET."""
    assert not SECRET_FIELDS & set(record), record


# -- no-quote and preview -------------------------------------------------------------------


def assert_no_quote(data: Mapping[str, Any]) -> None:
    """A ``no_quote`` answer of POST /v2/rfq/request: its members, prefixes and routing; a
    published depth only when that side has some."""
    assert set(data) >= NO_QUOTE_FIELDS, sorted(data)
    assert str(data["rfqId"]).startswith("rfq_"), data
    assert str(data["claimToken"]).startswith("rfqc_"), data
    assert set(data["routing"]) >= ROUTING_FIELDS, data["routing"]
    for name in ("availableSellAmount", "availableBuyAmount"):
        if name in data:
            assert atomic(data[name], name) > 0, f"{name} is omitted when that side is empty"


def assert_no_quote_reason(data: Mapping[str, Any]) -> None:
    """A no-quote's reason is one of the spec's three."""
    assert data.get("reason") in NO_QUOTE_REASONS, f"reason {shown(data.get('reason'))}"


def assert_reserved_consistent(data: Mapping[str, Any]) -> None:
    """reservedUntil and retryAfterMs come together (another caller's live quote holds
    liquidity that could have served the request)."""
    assert ("reservedUntil" in data) == ("retryAfterMs" in data), data
    if "reservedUntil" in data:
        parse_iso_utc(data["reservedUntil"])
        assert isinstance(data["retryAfterMs"], int), data
        assert data["retryAfterMs"] > 0, data


def assert_preview(data: Mapping[str, Any]) -> None:
    """A ``preview`` answer of POST /v2/rfq/preview: its members and routing."""
    assert data.get("status") == "preview", data
    assert set(data) >= PREVIEW_FIELDS, sorted(data)
    assert set(data["routing"]) >= ROUTING_FIELDS, data["routing"]


# -- the price ladder -----------------------------------------------------------------------


def assert_ladder_fields(data: Mapping[str, Any]) -> None:
    """GET /v2/rfq/levels: chainId, asOf and pairs[], each pair with its members."""
    assert set(data) >= LADDER_FIELDS, sorted(data)
    assert isinstance(data["pairs"], list), data
    for pair in data["pairs"]:
        assert isinstance(pair, Mapping), pair
        assert set(pair) >= PAIR_FIELDS, sorted(pair)


def ladder_directions(data: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Each (sellToken, buyToken) of the ladder, once (addresses as served)."""
    directions = {(p["sellToken"], p["buyToken"]) for p in data["pairs"]}
    assert len(directions) == len(data["pairs"]), "each direction once"
    return directions


def assert_ladder_directions(data: Mapping[str, Any]) -> None:
    """Every pair on the chain appears in both directions, each once."""
    directions = {(s.lower(), b.lower()) for s, b in ladder_directions(data)}
    missing = sorted((b, s) for s, b in directions if (b, s) not in directions)
    assert not missing, f"pairs without their reverse direction: {missing}"


def assert_ladder_points(levels: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """Up to nine points, both columns increasing together, atomic strings; the last point
    ((0, 0) for a pair with none)."""
    assert len(levels) <= MAX_LADDER_POINTS, f"{len(levels)} points"
    previous = (0, 0)
    for point in levels:
        assert {"sellAmount", "buyAmount"} <= set(point), point
        current = (atomic(point["sellAmount"]), atomic(point["buyAmount"]))
        assert current[0] > previous[0], f"sellAmount must increase: {levels}"
        assert current[1] > previous[1], f"buyAmount must increase with it: {levels}"
        previous = current
    return previous


def assert_ladder_depth(pair: Mapping[str, Any]) -> None:
    """A pair with no quotable depth has maxSellAmount ``0`` and no levels."""
    if atomic(pair["maxSellAmount"], "maxSellAmount") == 0:
        assert pair["levels"] == [], pair


# -- webhook endpoints ----------------------------------------------------------------------


def assert_created_endpoint(created: Mapping[str, Any]) -> None:
    """POST /v1/webhooks 201: the endpoint with its signing secret, shown this once."""
    assert (ENDPOINT_FIELDS | {"signingSecret"}) <= set(created), created
    assert re.fullmatch(r"whe_[A-Za-z0-9]+", created["id"]), created["id"]
    assert created["status"] == "active"
    secret = created["signingSecret"]
    assert isinstance(secret, str), secret
    assert secret.startswith("whsec_"), secret
    assert len(secret) >= 32, "a signing secret should carry enough entropy"


def assert_listed_endpoint(endpoint: Mapping[str, Any]) -> None:
    """An endpoint of GET /v1/webhooks: its fields, never its secret."""
    assert set(endpoint) >= ENDPOINT_FIELDS, f"fields missing: {shown(endpoint)}"
    assert "signingSecret" not in endpoint, f"secret listed: {shown(endpoint)}"


# -- v1 swaps ---------------------------------------------------------------------------------


def assert_swap_transactions_send_no_value(swap: Any) -> None:
    """Spec 3 "Unsigned transaction": ``value`` (wei, a string) is always ``0`` for swaps. Every
    unsigned transaction of the answer (an object with to, data and value, wherever the body,
    not shown beyond "a swap with unsigned transactions", puts it) is checked."""
    for tx in objects(swap):
        if set(tx) >= UNSIGNED_TRANSACTION_FIELDS:
            assert tx["value"] == "0", f"a swap's unsigned transaction sends value: {shown(tx)}"
