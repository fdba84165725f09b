"""Stability across reads: every object the spec lets a client read more than once shows the same
immutable fields each time, across two reads a second or more apart, a list row and its record,
and a replay of its create. :data:`KINDS` holds, per kind of object, the fields the spec fixes
when the object is created (ids, creation times, the terms and amounts it was made with) and the
secrets it shows only at creation; :func:`assert_stable` compares two reads of one object under
that table. Nothing the spec lets change is compared: statuses, fills, timelines, what a later
update may rewrite.

How values compare (:func:`same_member`, which rfqsim proxy's read-twice check uses too): a
time as an instant (:func:`conformance.wire.response_checks.same_instant`: a view in whole seconds
agrees with a finer one within that second), an address or a hash whatever its letter case (the
spec accepts both), a decimal string as a number, an event-type list as a set, anything else
exactly as JSON. A list row may show fewer fields than its record where the spec does not give
the row's shape, so a row is compared on the fields both show; any other second read must show every
field the first showed. The pairs of reads are :class:`ReadPair` values: :func:`a_second_later`
(which waits out what is left of the second since the first read completed), :func:`row_of`,
:data:`REPLAY`; a failure names the object, the field, both values and the pair, and never a
secret's value.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from conformance.wire.response_checks import same_instant
from conformance.wire.wording import shown

EXACT, INSTANT, ADDRESS, SET = "exact", "instant", "address", "set"
MIN_GAP_S = 1.0  # two reads "more than once" are at least this far apart


@dataclass(frozen=True)
class Kind:
    title: str  # how a failure names the object
    identity: str | None  # the member naming the object; every read must show it
    fields: Mapping[str, str]  # member (dotted for a nested one) -> how two reads compare
    secrets: tuple[str, ...] = ()  # members the spec shows at creation only, never on a read
    rules: tuple[str, ...] = ()  # the spec's rules the comparison checks (for spec markers)
    # A member's own rule where the spec gives one (rfqsim proxy reports under it); else the
    # kind's first rule.
    field_rules: Mapping[str, str] = field(default_factory=dict)

    def rule_for(self, member: str) -> str | None:
        return self.field_rules.get(member, self.rules[0] if self.rules else None)


RFQ = "rfq/resources/rfq-record/"
TRANSFER = "ramp/resources/transfer/"
CUSTOMER = "ramp/resources/customer/"
ORDER = "v1/resources/limit-order-record/"
TRANSFER_PAYMENT = {
    "payIn.type": EXACT,
    "payIn.address": ADDRESS,
    "payIn.network": EXACT,
    "payIn.recipient_details.bank_name": EXACT,
    "payIn.recipient_details.account_number": EXACT,
    "payIn.recipient_details.account_name": EXACT,
    "payIn.expires_at": INSTANT,
    "payOut.type": EXACT,
    "payOut.network": EXACT,
    "payOut.address": ADDRESS,
}

KINDS: dict[str, Kind] = {
    # Spec 1 "RFQ record": the amounts echo the request until a winner exists, then are the
    # winner's (all or nothing), so every read after the answer shows the same. expiresAt (the
    # accept cutoff) is left out: the spec does not say a cancel leaves it as it was.
    "rfq": Kind(
        "RFQ record",
        "rfqId",
        {
            "rfqId": EXACT,
            "chainId": EXACT,
            "sellToken": ADDRESS,
            "buyToken": ADDRESS,
            "taker": ADDRESS,
            "sellAmount": EXACT,
            "buyAmount": EXACT,
            "feeAmount": EXACT,
            "quoteTtlMs": EXACT,
            "replyBy": INSTANT,
            "createdAt": INSTANT,
        },
        secrets=("claimToken", "encodedOrder", "signature"),
        rules=(
            RFQ + "createdat",
            RFQ + "signed-order-signature-claim",
            "rfq/auth/claim-token/returned-once-post-v2",
        ),
        field_rules={
            "chainId": RFQ + "chainid",
            "sellToken": RFQ + "selltoken-buytoken",
            "buyToken": RFQ + "selltoken-buytoken",
            "taker": RFQ + "taker",
            "quoteTtlMs": RFQ + "quotettlms",
        },
    ),
    # Spec 3 "Limit order record": exactly the amounts the order named.
    "limit_order": Kind(
        "limit order",
        "id",
        {
            "id": EXACT,
            "chainId": EXACT,
            "sellToken": ADDRESS,
            "sellAmount": EXACT,
            "buyToken": ADDRESS,
            "buyAmount": EXACT,
            "rateRay": EXACT,
            "executionRateRay": EXACT,
            "nonce": EXACT,
            "deadline": INSTANT,
            "createdAt": INSTANT,
        },
        rules=(ORDER + "createdat", ORDER + "selltoken-sellamount-buytoken-buyamount"),
        field_rules={
            **dict.fromkeys(
                ("sellToken", "sellAmount", "buyToken", "buyAmount"),
                ORDER + "selltoken-sellamount-buytoken-buyamount",
            ),
            "chainId": ORDER + "chainid",
            "nonce": ORDER + "nonce",
            "deadline": ORDER + "deadline",
        },
    ),
    # Spec 3 shows no field of the swap record: its id, and the create-swap request's terms
    # where the swap shows them.
    "swap": Kind(
        "swap",
        "id",
        {
            "id": EXACT,
            "chainId": EXACT,
            "sellToken": ADDRESS,
            "buyToken": ADDRESS,
            "sellAmount": EXACT,
            "taker": ADDRESS,
            "minRate": EXACT,
            "createdAt": INSTANT,
        },
        rules=("v1/endpoints/get-v1-swaps-id",),
    ),
    # Spec 2 "Transfer": the price is locked at creation; status, providerStatus, timeline and
    # the payout's blockchain_hash move on, and hasEmail follows the customer's record.
    "ramp_transfer": Kind(
        "transfer",
        "id",
        {
            "id": EXACT,
            "providerTransferId": EXACT,
            "provider": EXACT,
            "sandbox": EXACT,
            "side": EXACT,
            "fiat": EXACT,
            "token": EXACT,
            "chainId": EXACT,
            "sourceAmount": EXACT,
            "targetAmount": EXACT,
            "rateLabel": EXACT,
            "feeLabel": EXACT,
            "retryOfId": EXACT,
            **TRANSFER_PAYMENT,
            "expiresAt": INSTANT,
            "createdAt": INSTANT,
        },
        secrets=("claimToken",),
        rules=(TRANSFER + "id", TRANSFER + "createdat", TRANSFER + "claim-token"),
        field_rules={
            "createdAt": TRANSFER + "createdat",
            "side": TRANSFER + "side",
            "chainId": TRANSFER + "chainid",
            "fiat": TRANSFER + "fiat-token",
            "token": TRANSFER + "fiat-token",
            "provider": TRANSFER + "provider",
            "providerTransferId": TRANSFER + "providertransferid",
        },
    ),
    # Spec 2 "Customer": one record per wallet per provider.
    "ramp_customer": Kind(
        "customer",
        "id",
        {"id": EXACT},
        rules=(
            CUSTOMER + "response-of-registration",
            "ramp/endpoints/post-v2-ramp-customers/calling-again-same-wallet",
        ),
    ),
    # The stored details, the same on every read that no registration came between; birth
    # date and address are forwarded and never returned.
    "ramp_customer_details": Kind(
        "customer details of",
        None,
        {name: EXACT for name in ("firstName", "lastName", "email", "phone", "registered")},
        secrets=("birthDate", "address"),
        rules=(
            CUSTOMER + "stored-details-response-details",
            CUSTOMER + "birth-date-address-forwarded",
        ),
    ),
    # Spec 1 "Webhook endpoint": status is `active`, signingSecret returned only at creation.
    "webhook_endpoint": Kind(
        "webhook endpoint",
        "id",
        {"id": EXACT, "url": EXACT, "eventTypes": SET, "status": EXACT},
        secrets=("signingSecret",),
        rules=("rfq/resources/webhook-endpoint/fields",),
    ),
    # Spec 3 "GET /historical_trades": trade_id is stable, a dedupe key.
    "feed_trade": Kind(
        "trade",
        "trade_id",
        {
            "trade_id": EXACT,
            "price": EXACT,
            "base_volume": EXACT,
            "target_volume": EXACT,
            "trade_timestamp": EXACT,
            "type": EXACT,
        },
        rules=("v1/feed/get-historical_trades/trade_id-fills-transaction-hash",),
    ),
    # Any record's creation time alone (conformance.checks.assertions.assert_same_creation).
    "creation": Kind("record", None, {"createdAt": INSTANT}),
}
CREATION = "creation"


@dataclass(frozen=True)
class ReadPair:
    """Which two reads are compared, as a failure names them."""

    label: str
    row: bool = False  # a list row against its record: only the fields both show
    replay: bool = False  # the create answered again: it carries what the create did


TWO_READS = ReadPair("two reads")
REPLAY = ReadPair("replay of the create", replay=True)


def row_of(view: str = "record") -> ReadPair:
    return ReadPair(f"list row vs {view}", row=True)


def a_second_later(read_at: float, view: str = "record") -> ReadPair:
    """The pair of a read made now and the first, whose completion ``read_at`` took from
    ``time.monotonic()``: waits out what is left of :data:`MIN_GAP_S` since then first (reads
    apart in time are the requirement itself, so this wait is no guess at the service's pace)."""
    left = read_at + MIN_GAP_S - time.monotonic()
    if left > 0:
        time.sleep(left)
    return ReadPair(f"{view} read {time.monotonic() - read_at:.1f} s later")


def assert_stable(
    kind: str, identity: str, first: Mapping[str, Any], again: Mapping[str, Any], *, what: ReadPair
) -> None:
    """Two reads of one object of ``kind`` (a key of :data:`KINDS`) show the same immutable
    fields, and the second none of the secrets the spec shows only at creation (a replay of the
    create is that answer again, so it may)."""
    table = KINDS[kind]
    name = f"{table.title} {identity}"
    if table.identity is not None:
        for read, which in ((first, "the first read"), (again, what.label)):
            assert table.identity in read, f"{name}: {table.identity} missing ({which})"
    for member, how in table.fields.items():
        in_first, a = _member(first, member)
        in_again, b = _member(again, member)
        if not in_first or (what.row and not in_again):
            continue
        assert in_again, f"{name}: {member} shown by the first read, missing ({what.label})"
        assert_member_unchanged(name, member, how, a, b, what.label)
    if what.replay:
        return
    for secret in table.secrets:
        assert not _member(again, secret)[0], (
            f"{name}: {secret} shown again ({what.label}); the spec returns it at creation only"
        )


def _member(read: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    """(shown, value) of a member, nested members named with dots."""
    value: Any = read
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def same_member(how: str, first: Any, again: Any) -> bool:
    """Whether two reads of one member mean the same: a time as one instant, an address or a
    hash whatever its letter case, a decimal string as a number, a set as a set."""
    if isinstance(first, str) and isinstance(again, str):
        if how == INSTANT:
            return same_instant(first, again)
        if how == ADDRESS or (first.startswith("0x") and again.startswith("0x")):
            return first.lower() == again.lower()
        if DECIMAL.match(first) and DECIMAL.match(again):
            return Decimal(first) == Decimal(again)
    if how == SET and isinstance(first, list) and isinstance(again, list):
        return sorted(map(_json, first)) == sorted(map(_json, again))
    return _json(first) == _json(again)


def assert_member_unchanged(
    name: str, member: str, how: str, first: Any, again: Any, label: str
) -> None:
    """One member of two reads of the object called ``name`` (its title and id)."""
    assert same_member(how, first, again), (
        f"{name}: expected the {member} first read, {_spelled(how, first)}, got "
        f"{_spelled(how, again)} ({label}): it is fixed when the object is created"
    )


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _spelled(how: str, value: Any) -> str:
    """A time as it was sent; anything else as :func:`shown` spells it."""
    return value if how == INSTANT and isinstance(value, str) else shown(value)
