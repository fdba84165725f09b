"""What never changes once an object exists, compared across reads: every read of an RFQ
record, a ramp transfer, a v1 limit order or a feed trade (the answer to its creation, its own
GET, a row of a list) shows the same creation time and the same terms, so the proxy keeps the
first values it saw per object and compares every later read with them, each member under its
rule. What is fixed and how two reads compare is the suite's own table and comparison
(conformance/checks/stable_reads.py `KINDS`, `same_member`); the proxy compares the members that the
answer to a creation shows alike (an RFQ's amounts are the request's cap in the answer and the
settled amounts on the record, so they are left to the suite's record-to-record reads)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from conformance.checks.stable_reads import INSTANT, assert_member_unchanged
from conformance.checks.stable_reads import KINDS as FIXED
from conformance.wire.response_checks import iso_seconds
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.memory import ExpiringMap
from rfqsim.proxy.spec import SpecOperation

HOUR = 3600.0


@dataclass(frozen=True)
class WatchedKind:
    fixed: str  # its kind in the suite's table (conformance/checks/stable_reads.py KINDS)
    members: tuple[str, ...]  # compared on every later read
    lifetime_s: float  # how long the first read is kept

    @property
    def identity(self) -> str:
        identity = FIXED[self.fixed].identity
        assert identity is not None
        return identity

    @property
    def title(self) -> str:
        return FIXED[self.fixed].title

    def how(self, member: str) -> str:
        return FIXED[self.fixed].fields[member]

    def rule(self, member: str) -> str:
        rule = FIXED[self.fixed].rule_for(member)
        assert rule is not None
        return rule


KINDS = {
    "rfq": WatchedKind(
        "rfq",
        ("createdAt", "chainId", "sellToken", "buyToken", "taker", "quoteTtlMs"),
        25 * HOUR,  # the quote, the order deadline and the 24 h correction window
    ),
    "ramp": WatchedKind(
        "ramp_transfer",
        ("createdAt", "side", "chainId", "fiat", "token", "provider", "providerTransferId"),
        3 * 24 * HOUR + HOUR,  # re-checked for three days after its payment window
    ),
    "v1-limit-orders": WatchedKind(
        "limit_order",
        (
            "createdAt",
            "chainId",
            "sellToken",
            "sellAmount",
            "buyToken",
            "buyAmount",
            "nonce",
            "deadline",
        ),
        25 * HOUR,
    ),
    "feed-trades": WatchedKind(
        "feed_trade",
        ("price", "base_volume", "target_volume", "trade_timestamp", "type"),
        25 * HOUR,  # the feed's day, and an hour
    ),
}


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


class ReadTwice:
    def __init__(self, capacity: int) -> None:
        self._seen: ExpiringMap[tuple[str, str], tuple[Any, ...]] = ExpiringMap(capacity)

    def __len__(self) -> int:
        return len(self._seen)

    def observe(self, inspection: Inspection, operation: SpecOperation) -> None:
        ex = inspection.exchange
        name = operation.reads
        if not name or not 200 <= ex.status < 300 or not ex.readable:
            return
        kind = KINDS[name]
        for found in _objects(ex.json):
            identity = found.get(kind.identity)
            if not isinstance(identity, str):
                continue
            values = tuple(found.get(member) for member in kind.members)
            first = self._seen.get((name, identity))
            if first is None:
                if self._readable(values, kind):
                    self._seen.set((name, identity), values, kind.lifetime_s)
                continue
            titled = f"{kind.title} {identity}"
            for member, was, now in zip(kind.members, first, values, strict=True):
                if was is not None and now is not None:  # a view may leave a member out
                    check = partial(
                        assert_member_unchanged,
                        titled,
                        member,
                        kind.how(member),
                        was,
                        now,
                        "read again",
                    )
                    inspection.check(kind.rule(member), check)
            merged = tuple(
                now if was is None else was for was, now in zip(first, values, strict=True)
            )
            if merged != first and self._readable(merged, kind):  # a member seen the first time
                self._seen.set((name, identity), merged, kind.lifetime_s)

    @staticmethod
    def _readable(values: tuple[Any, ...], kind: WatchedKind) -> bool:
        """Kept only when its times parse (their format is a rule of its own)."""
        for member, value in zip(kind.members, values, strict=True):
            if kind.how(member) == INSTANT and value is not None:
                try:
                    iso_seconds(value)
                except (ValueError, TypeError, AssertionError):
                    return False
        return True
