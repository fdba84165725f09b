"""Proof of funds for takers (spec 1-rfq-v2, POST /v2/rfq/request behaviour 2): the taker must
hold the sell token on chain: balance >= committed + required, where committed is what the
taker's other live quotes on the same chain and sell token reserve. A reservation lasts until
latestOrderDeadline plus a short skew, or until the fill settles; cancel or lapse do not free it
early. Only the balance is read, not the allowance."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from simulator.clock import Clock
from simulator.errors import InvalidRequest, UpstreamError
from simulator.ports import BalanceReader, ChainUnreadable

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
        # rfq ids per (chain, taker, token): committed() looks at one wallet's quotes only.
        self._by_wallet: dict[tuple[int, str, str], set[str]] = {}
        # One lock per (chain, taker, token): guards the balance read and the reservation write.
        self._locks: dict[tuple[int, str, str], asyncio.Lock] = {}

    def committed(
        self, chain_id: int, taker: str, token: str, *, excluding: str | None = None
    ) -> int:
        now = self._clock.time()
        key = (chain_id, taker.lower(), token.lower())
        total = 0
        for rfq_id in list(self._by_wallet.get(key, ())):
            reservation = self._reservations[rfq_id]
            if reservation.held_until <= now:
                self.release(rfq_id)  # lapsed: forget it
            elif rfq_id != excluding:
                total += reservation.amount
        return total

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
        """Check balance >= committed + required and reserve `required` until `until`, as one
        step per (chain, taker, token): parallel requests for one wallet cannot both pass on
        the same balance."""
        key = (chain_id, taker.lower(), token.lower())
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
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
            self._by_wallet.setdefault(key, set()).add(rfq_id)

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        """A quote was issued: hold exactly what it can take until its last order deadline
        plus the skew."""
        reservation = self._reservations.get(rfq_id)
        if reservation is not None:
            reservation.amount = amount
            reservation.held_until = until + RESERVATION_SKEW_S

    def release(self, rfq_id: str) -> None:
        """On fill (settled), no-quote or error; cancel and lapse keep it to its deadline."""
        reservation = self._reservations.pop(rfq_id, None)
        if reservation is not None:
            key = (reservation.chain_id, reservation.taker, reservation.token)
            rfq_ids = self._by_wallet.get(key)
            if rfq_ids is not None:
                rfq_ids.discard(rfq_id)
                if not rfq_ids:
                    del self._by_wallet[key]
