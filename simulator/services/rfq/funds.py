"""Proof of funds for takers (spec 1-rfq-v2, POST /v2/rfq/request behaviour 2): the taker must
hold the sell token on chain: balance >= committed + required, where committed is what the
taker's other live quotes on the same chain and sell token reserve. A reservation lasts until
latestOrderDeadline plus a short skew, or until the fill settles; cancel or lapse do not free it
early. Only the balance is read, not the allowance."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import InvalidRequest, UpstreamError
from simulator.services.rfq.ports import BalanceReader, ChainUnreadable, ReservationLedger
from simulator.services.shared.state import (
    AsPairs,
    SavedAttributes,
    StateParticipant,
    StateSchema,
)

RESERVATION_SKEW_S = 5.0  # slack after latestOrderDeadline for a fill mined at the deadline


@dataclass
class Reservation:
    chain_id: int
    taker: str  # lowercase
    token: str  # lowercase
    amount: int
    held_until: float  # simulator time


WalletToken = tuple[int, str, str]  # (chain id, taker, token), both addresses lowercase


class MemoryReservations:
    """The ReservationLedger of one instance: every reservation in memory."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._reservations: dict[str, Reservation] = {}  # by rfq id
        # Per (chain, taker, token): the running total reserved, and a heap of (end, rfq id)
        # pruned lazily, so a check is O(log n) however many quotes a wallet holds.
        self._totals: dict[WalletToken, int] = {}
        self._ends: dict[WalletToken, list[tuple[float, str]]] = {}

    def _committed(self, wallet: WalletToken, excluding: str | None = None) -> int:
        self._prune(wallet)
        total = self._totals.get(wallet, 0)
        mine = self._reservations.get(excluding) if excluding is not None else None
        if mine is not None and (mine.chain_id, mine.taker, mine.token) == wallet:
            total -= mine.amount
        return total

    async def committed(self, wallet: WalletToken) -> int:
        return self._committed(wallet)

    def _prune(self, wallet: WalletToken) -> None:
        """Forget lapsed reservations of one wallet (its heap of ends, lazily pruned)."""
        now = self._clock.time()
        ends = self._ends.get(wallet, [])
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
        for wallet in list(self._ends.keys()):
            self._prune(wallet)
            if wallet not in self._totals:
                self._ends.pop(wallet, None)

    async def reserve(
        self, rfq_id: str, wallet: WalletToken, required: int, until: float, balance: int
    ) -> int | None:
        committed = self._committed(wallet, excluding=rfq_id)  # no await from here on
        if balance < committed + required:
            return committed
        self.release(rfq_id)  # a reservation made again replaces the first
        self._reservations[rfq_id] = Reservation(*wallet, required, until)
        self._totals[wallet] = self._totals.get(wallet, 0) + required
        heapq.heappush(self._ends.setdefault(wallet, []), (until, rfq_id))
        return None

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        reservation = self._reservations.get(rfq_id)
        if reservation is not None:
            wallet = (reservation.chain_id, reservation.taker, reservation.token)
            self._totals[wallet] = self._totals.get(wallet, 0) + amount - reservation.amount
            reservation.amount = amount
            reservation.held_until = until
            heapq.heappush(self._ends.setdefault(wallet, []), (until, rfq_id))

    def release(self, rfq_id: str) -> None:
        reservation = self._reservations.pop(rfq_id, None)
        if reservation is not None:
            wallet = (reservation.chain_id, reservation.taker, reservation.token)
            remaining = self._totals.get(wallet, 0) - reservation.amount
            if remaining:
                self._totals[wallet] = remaining
            else:
                self._totals.pop(wallet, None)

    def state(self, name: str) -> StateParticipant:
        return SavedAttributes(name, self, FundsSaved)


class TakerFunds:
    """The rules of proof of funds over a ReservationLedger (in memory unless given: the
    shared engine's for several instances)."""

    def __init__(
        self, clock: Clock, balances: BalanceReader, ledger: ReservationLedger | None = None
    ) -> None:
        self._clock = clock
        self._balances = balances
        self.ledger: ReservationLedger = ledger or MemoryReservations(clock)

    async def committed(self, chain_id: int, taker: str, token: str) -> int:
        """What the wallet's live quotes on this chain reserve of this token."""
        return await self.ledger.committed((chain_id, taker.lower(), token.lower()))

    def evict_lapsed(self) -> None:
        """Drop the lapsed reservations of every wallet (a wallet that never comes back would
        keep them forever)."""
        self.ledger.evict_lapsed()

    async def balance(self, chain_id: int, token: str, taker: str) -> int:
        try:
            return await self._balances.token_balance(chain_id, token, taker)
        except ChainUnreadable as exc:
            # Never a false insufficient_funds: an unreadable balance is a transient 502.
            raise UpstreamError(
                "The taker's balance could not be read; retry",
                details={"reason": "chain_unreachable"},
            ) from exc

    def read_ahead(self, chain_id: int, token: str, taker: str) -> asyncio.Future[int]:
        """The balance read started now, for `reserve_checked` a moment later (its failure is
        raised there; cancel it if no check follows)."""
        ahead = asyncio.ensure_future(self.balance(chain_id, token, taker))
        ahead.add_done_callback(lambda done: done.cancelled() or done.exception())
        return ahead

    async def reserve_checked(
        self,
        rfq_id: str,
        chain_id: int,
        taker: str,
        token: str,
        required: int,
        until: float,
        *,
        balance: Awaitable[int] | None = None,
    ) -> None:
        """Check balance >= committed + required and reserve `required` until `until`:
        parallel requests for one wallet cannot both pass on the same balance.

        The balance is read first (or was: `balance`, from `read_ahead`); the check and the
        reservation are then one atomic step of the ledger. No lock is needed across the read:
        reservations are off chain and never change what the read returns, so each request is
        checked against every reservation written before its own check, whichever read
        finished first. (A lock across the read made a wallet's requests queue one chain round
        trip each: under load that queue, not the chain, set the answer time.)"""
        wallet = (chain_id, taker.lower(), token.lower())
        read = balance if balance is not None else self.balance(chain_id, token, taker)
        available = await read
        committed = await self.ledger.reserve(rfq_id, wallet, required, until, available)
        if committed is not None:
            details: dict[str, object] = {
                "reason": "insufficient_funds",
                "required": str(required),
                "available": str(available),
            }
            if committed:
                details["committed"] = str(committed)
            raise InvalidRequest(
                "The taker does not hold enough of the sell token", details=details
            )

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        """A quote was issued: hold exactly what it can take until its last order deadline
        plus the skew."""
        self.ledger.hold(rfq_id, amount, until + RESERVATION_SKEW_S)

    def release(self, rfq_id: str) -> None:
        """On fill (settled), no-quote or error; cancel and lapse keep it to its deadline."""
        self.ledger.release(rfq_id)

    def state(self, name: str) -> StateParticipant:
        return self.ledger.state(name)


class FundsSaved(StateSchema):
    """What reset and snapshots put back of the taker reservations: every reservation, the
    running totals and the heaps of their ends, per (chain, taker, token)."""

    reservations: dict[str, Reservation] = Field(validation_alias="_reservations")
    totals: Annotated[dict[tuple[int, str, str], int], AsPairs()] = Field(
        validation_alias="_totals"
    )
    ends: Annotated[dict[tuple[int, str, str], list[tuple[float, str]]], AsPairs()] = Field(
        validation_alias="_ends"
    )
