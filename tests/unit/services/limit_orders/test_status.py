"""Spec 3's limit-order status table, derived at read time (model.derive_status)."""

from __future__ import annotations

from simulator.services.limit_orders.model import DerivedStatus, derive_status
from simulator.services.shared.fills import Fill
from tests.unit.services.limit_orders.factory import limit_order

DEADLINE = 1_900_000_000
BEFORE, AFTER = DEADLINE - 10.0, DEADLINE + 10.0


def fill_of(order_hash: bytes) -> Fill:
    return Fill(97, "0xab", 0, BEFORE, order_hash, "0x", "0x", "0x", 1, "0x", 1, 0)


def test_active_until_the_deadline_then_expired_at_read_time() -> None:
    order = limit_order(10**6, 10**6, deadline=DEADLINE)
    assert derive_status(order, BEFORE, False) == DerivedStatus("ACTIVE", True)
    assert derive_status(order, AFTER, False) == DerivedStatus("EXPIRED", True)


def test_chain_unreachable_reads_unverified() -> None:
    order = limit_order(10**6, 10**6, deadline=DEADLINE)
    assert derive_status(order, AFTER, None) == DerivedStatus("EXPIRED", False)
    assert derive_status(order, BEFORE, None) == DerivedStatus("ACTIVE", False)


def test_spent_nonce_without_a_fill_is_cancelled_and_a_fill_supersedes_it() -> None:
    order = limit_order(10**6, 10**6, deadline=DEADLINE)
    assert derive_status(order, BEFORE, True) == DerivedStatus("CANCELLED", True)
    order.cancelled_at = BEFORE
    # Stored: no chain read is needed to show it, even with the chain unreachable.
    assert derive_status(order, AFTER, None) == DerivedStatus("CANCELLED", True)
    order.fill = fill_of(order.order_hash)
    assert derive_status(order, AFTER, True) == DerivedStatus("FILLED", True)


def test_superseded_is_terminal() -> None:
    order = limit_order(10**6, 10**6, deadline=DEADLINE)
    order.superseded = True
    assert derive_status(order, AFTER, True) == DerivedStatus("SUPERSEDED", True)
