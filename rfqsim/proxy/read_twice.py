"""What never changes once an object exists, compared across reads: every read of an RFQ
record, a ramp transfer, a v1 limit order or a feed trade (the answer to its creation, its own
GET, a row of a list) shows the same creation time and the same terms, so the proxy keeps the
first values it saw per object and compares every later read with them, each field under its
rule (the suite's read-twice checks use the same comparison, conformance/assertions.py
`assert_same_creation`).

Values are compared as what they mean, not as text: a time as an instant (a view in whole
seconds agrees with a finer one within that second), an address or hash whatever its letter
case, a decimal string as a number."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from conformance.assertions import assert_same_creation, iso_seconds, same_instant
from conformance.wording import shown
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.memory import ExpiringMap
from rfqsim.proxy.spec import SpecOperation

HOUR = 3600.0
TIMES = frozenset({"createdAt", "deadline"})
DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")


@dataclass(frozen=True)
class Kind:
    identity: str  # the member naming the object
    fields: tuple[tuple[str, str], ...]  # (member, its rule), compared on every later read
    lifetime_s: float  # how long the first read is kept


RFQ = "rfq/resources/rfq-record/"
RAMP = "ramp/resources/transfer/"
ORDER = "v1/resources/limit-order-record/"
ORDER_TERMS = ORDER + "selltoken-sellamount-buytoken-buyamount"
TRADE_ID = "v1/feed/get-historical_trades/trade_id-fills-transaction-hash"  # a dedupe key
KINDS = {
    "rfq": Kind(
        "rfqId",
        (
            ("createdAt", RFQ + "createdat"),
            ("chainId", RFQ + "chainid"),
            ("sellToken", RFQ + "selltoken-buytoken"),
            ("buyToken", RFQ + "selltoken-buytoken"),
            ("taker", RFQ + "taker"),
            ("quoteTtlMs", RFQ + "quotettlms"),
        ),
        25 * HOUR,  # the quote, the order deadline and the 24 h correction window
    ),
    "ramp": Kind(
        "id",
        (
            ("createdAt", RAMP + "createdat"),
            ("side", RAMP + "side"),
            ("chainId", RAMP + "chainid"),
            ("fiat", RAMP + "fiat-token"),
            ("token", RAMP + "fiat-token"),
            ("provider", RAMP + "provider"),
            ("providerTransferId", RAMP + "providertransferid"),
        ),
        3 * 24 * HOUR + HOUR,  # re-checked for three days after its payment window
    ),
    "v1-limit-orders": Kind(
        "id",
        (
            ("createdAt", ORDER + "createdat"),
            ("chainId", ORDER + "chainid"),
            ("sellToken", ORDER_TERMS),
            ("sellAmount", ORDER_TERMS),
            ("buyToken", ORDER_TERMS),
            ("buyAmount", ORDER_TERMS),
            ("nonce", ORDER + "nonce"),
            ("deadline", ORDER + "deadline"),
        ),
        25 * HOUR,
    ),
    "feed-trades": Kind(
        "trade_id",
        tuple(
            (name, TRADE_ID)
            for name in ("price", "base_volume", "target_volume", "trade_timestamp", "type")
        ),
        25 * HOUR,  # the feed's day, and an hour
    ),
}


def _kind(operation: SpecOperation) -> str | None:
    template = operation.template
    if template == "/historical_trades":
        return "feed-trades"
    if operation.surface == "v1":
        return "v1-limit-orders" if template.startswith("/v1/limit-orders") else None
    if template.startswith(("/v2/rfq/request", "/v2/rfq/{id}")):
        return "rfq"
    if template.startswith("/v2/ramp/transfers"):
        return "ramp"
    return None


def _objects(body: Any) -> Iterator[Mapping[str, Any]]:
    """The objects of an answer: `data` itself or each row of a `data` list, the ramp's
    `transfer` and `transfers`, the feed's `buy` and `sell` trades."""
    data = body.get("data", body) if isinstance(body, Mapping) else body
    candidates: list[Any] = list(data) if isinstance(data, list) else [data]
    if isinstance(data, Mapping):
        for many in ("transfers", "buy", "sell"):
            if isinstance(data.get(many), list):
                candidates.extend(data[many])
        if isinstance(data.get("transfer"), Mapping):
            candidates.append(data["transfer"])
    yield from (c for c in candidates if isinstance(c, Mapping))


def same_value(name: str, first: Any, again: Any) -> bool:
    """Whether two reads of one member mean the same (see the module)."""
    if isinstance(first, str) and isinstance(again, str):
        if name in TIMES:
            return same_instant(first, again)
        if first.startswith("0x") and again.startswith("0x"):
            return first.lower() == again.lower()
        if DECIMAL.match(first) and DECIMAL.match(again):
            return Decimal(first) == Decimal(again)
    return bool(first == again)


def assert_unchanged(identity: str, name: str, first: Any, again: Any) -> None:
    if name == "createdAt" and isinstance(first, str) and isinstance(again, str):
        assert_same_creation(identity, first, again)  # the suite's own words for it
        return
    assert same_value(name, first, again), (
        f"{identity}: expected the {name} first read, {shown(first)}, got {shown(again)}: "
        "it never changes once the object exists"
    )


class ReadTwice:
    def __init__(self, capacity: int) -> None:
        self._seen: ExpiringMap[tuple[str, str], tuple[Any, ...]] = ExpiringMap(capacity)

    def __len__(self) -> int:
        return len(self._seen)

    def observe(self, inspection: Inspection, operation: SpecOperation) -> None:
        ex = inspection.exchange
        name = _kind(operation)
        if name is None or not 200 <= ex.status < 300 or not ex.readable:
            return
        kind = KINDS[name]
        for found in _objects(ex.json):
            identity = found.get(kind.identity)
            if not isinstance(identity, str):
                continue
            values = tuple(found.get(member) for member, _ in kind.fields)
            first = self._seen.get((name, identity))
            if first is None:
                if self._readable(values, kind):
                    self._seen.set((name, identity), values, kind.lifetime_s)
                continue
            for (member, rule), was, now in zip(kind.fields, first, values, strict=True):
                if was is not None and now is not None:  # a view may leave a member out
                    inspection.check(rule, partial(assert_unchanged, identity, member, was, now))
            merged = tuple(
                now if was is None else was for was, now in zip(first, values, strict=True)
            )
            if merged != first and self._readable(merged, kind):  # a member seen the first time
                self._seen.set((name, identity), merged, kind.lifetime_s)

    @staticmethod
    def _readable(values: tuple[Any, ...], kind: Kind) -> bool:
        """Kept only when its times parse (their format is a rule of its own)."""
        for (member, _), value in zip(kind.fields, values, strict=True):
            if member in TIMES and value is not None:
                try:
                    iso_seconds(value)
                except (ValueError, TypeError, AssertionError):
                    return False
        return True
