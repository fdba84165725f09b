"""Proof of funds for takers (spec 1-rfq-v2, POST /v2/rfq/request behaviour 2): the taker must
hold the sell token on chain: balance >= committed + required, where committed is what the
taker's other live quotes on the same chain and sell token reserve. A reservation lasts until
latestOrderDeadline plus a short skew, or until the fill settles; cancel or lapse do not free it
early. Only the balance is read, not the allowance."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import InvalidRequest, UpstreamError
from simulator.services.rfq.ports import BalanceReader, ChainUnreadable
from simulator.services.shared.state import AsPairs, StateSchema

RESERVATION_SKEW_S = 5.0  # slack after latestOrderDeadline for a fill mined at the deadline


@dataclass
class Reservation:
    chain_id: int
    taker: str  # lowercase
    token: str  # lowercase
    amount: int
    held_until: float  # simulator time


class TakerFunds:
    def __init__(self, clock: Clock, balances: BalanceReader) -> None:
        self._clock = clock
        self._balances = balances
        self._reservations: dict[str, Reservation] = {}  # by rfq id
        # Per (chain, taker, token): the running total reserved, and a heap of (end, rfq id)
        # pruned lazily, so committed() is O(log n) however many quotes a wallet holds.
        self._totals: dict[tuple[int, str, str], int] = {}
        self._ends: dict[tuple[int, str, str], list[tuple[float, str]]] = {}

    def committed(
        self, chain_id: int, taker: str, token: str, *, excluding: str | None = None
    ) -> int:
        key = (chain_id, taker.lower(), token.lower())
        self._prune(key)
        total = self._totals.get(key, 0)
        mine = self._reservations.get(excluding) if excluding is not None else None
        if mine is not None and (mine.chain_id, mine.taker, mine.token) == key:
            total -= mine.amount
        return total

    def _prune(self, key: tuple[int, str, str]) -> None:
        """Forget lapsed reservations of one wallet (its heap of ends, lazily pruned)."""
        now = self._clock.time()
        ends = self._ends.get(key, [])
        while ends and ends[0][0] <= now:
            _, rfq_id = heapq.heappop(ends)
            reservation = self._reservations.get(rfq_id)
            if reservation is None:
                continue
            if reservation.held_until <= now:
                self.release(rfq_id)
            else:
                heapq.heappush(ends, (reservation.held_until, rfq_id))  # extended since

    def evict_lapsed(self) -> None:
        """Drop the lapsed reservations of every wallet, and the heaps of wallets that hold
        none (a wallet that never comes back would keep them forever)."""
        for key in list(self._ends.keys()):
            self._prune(key)
            if key not in self._totals:
                self._ends.pop(key, None)

    async def balance(self, chain_id: int, token: str, taker: str) -> int:
        try:
            return await self._balances.token_balance(chain_id, token, taker)
        except ChainUnreadable as exc:
            # Never a false insufficient_funds: an unreadable balance is a transient 502.
            raise UpstreamError(
                "The taker's balance could not be read; retry",
                details={"reason": "chain_unreachable"},
            ) from exc

    async def reserve_checked(
        self, rfq_id: str, chain_id: int, taker: str, token: str, required: int, until: float
    ) -> None:
        """Check balance >= committed + required and reserve `required` until `until`:
        parallel requests for one wallet cannot both pass on the same balance.

        The balance is read first (the one await); the check and the reservation then happen as
        one synchronous step. No lock is needed across the read: reservations are off chain and
        never change what the read returns, so each request is checked against every
        reservation written before its own check, whichever read finished first. (A lock across
        the read made a wallet's requests queue one chain round trip each: under load that
        queue, not the chain, set the answer time.)"""
        key = (chain_id, taker.lower(), token.lower())
        balance = await self.balance(chain_id, token, taker)
        committed = self.committed(chain_id, taker, token, excluding=rfq_id)
        if balance < committed + required:
            details: dict[str, object] = {
                "reason": "insufficient_funds",
                "required": str(required),
                "available": str(balance),
            }
            if committed:
                details["committed"] = str(committed)
            raise InvalidRequest(
                "The taker does not hold enough of the sell token", details=details
            )
        self._reservations[rfq_id] = Reservation(chain_id, key[1], key[2], required, until)
        self._totals[key] = self._totals.get(key, 0) + required
        heapq.heappush(self._ends.setdefault(key, []), (until, rfq_id))

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        """A quote was issued: hold exactly what it can take until its last order deadline
        plus the skew."""
        reservation = self._reservations.get(rfq_id)
        if reservation is not None:
            key = (reservation.chain_id, reservation.taker, reservation.token)
            self._totals[key] = self._totals.get(key, 0) + amount - reservation.amount
            reservation.amount = amount
            reservation.held_until = until + RESERVATION_SKEW_S
            heapq.heappush(self._ends.setdefault(key, []), (reservation.held_until, rfq_id))

    def release(self, rfq_id: str) -> None:
        """On fill (settled), no-quote or error; cancel and lapse keep it to its deadline."""
        reservation = self._reservations.pop(rfq_id, None)
        if reservation is not None:
            key = (reservation.chain_id, reservation.taker, reservation.token)
            remaining = self._totals.get(key, 0) - reservation.amount
            if remaining:
                self._totals[key] = remaining
            else:
                self._totals.pop(key, None)


class FundsSaved(StateSchema):
    """What reset and snapshots put back of TakerFunds: every reservation, the running totals
    and the heaps of their ends, per (chain, taker, token)."""

    reservations: dict[str, Reservation] = Field(validation_alias="_reservations")
    totals: Annotated[dict[tuple[int, str, str], int], AsPairs()] = Field(
        validation_alias="_totals"
    )
    ends: Annotated[dict[tuple[int, str, str], list[tuple[float, str]]], AsPairs()] = Field(
        validation_alias="_ends"
    )
