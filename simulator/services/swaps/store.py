"""The swaps' state: every swap built, by partner and by included order. Plain in-memory data
owned by the swap service (one store per area, so reset and snapshots work store by store)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from simulator.services.shared.state import AsPairs, StateSchema
from simulator.services.swaps.model import SwapRecord


@dataclass
class SwapStore:
    records: dict[str, SwapRecord] = field(default_factory=dict)  # by swap id
    by_partner: dict[str, list[str]] = field(default_factory=dict)  # partner -> ids, oldest first
    by_order: dict[tuple[int, bytes], list[str]] = field(
        default_factory=dict
    )  # (chain, order hash) -> swaps including it, oldest first
    sequence: int = 0  # last creation sequence handed out (the page cursor's order)

    def next_sequence(self) -> int:
        self.sequence += 1
        return self.sequence

    def add(self, record: SwapRecord) -> None:
        self.records[record.swap_id] = record
        if record.partner_id is not None:
            self.by_partner.setdefault(record.partner_id, []).append(record.swap_id)
        for order in record.orders:
            key = (record.chain_id, order.order_hash)
            self.by_order.setdefault(key, []).append(record.swap_id)

    def of_partner(self, partner_id: str) -> list[SwapRecord]:
        """Newest first."""
        return [self.records[i] for i in reversed(self.by_partner.get(partner_id, []))]

    def including(self, chain_id: int, order_hash: bytes) -> list[SwapRecord]:
        return [self.records[i] for i in self.by_order.get((chain_id, order_hash), [])]


class SwapStoreSaved(StateSchema):
    """What reset and snapshots put back of the swaps' store: all of it."""

    records: dict[str, SwapRecord]
    by_partner: dict[str, list[str]]
    by_order: Annotated[dict[tuple[int, bytes], list[str]], AsPairs()]
    sequence: int
