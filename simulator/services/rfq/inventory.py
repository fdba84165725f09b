"""Maker inventory held by live quotes: what each maker has promised and not yet delivered,
so a maker cannot sell the same tokens twice and cannot reuse a nonce across live quotes.
A hold ends when the quote fills, lapses at expiresAt, is cancelled or loses the auction.

Holds are indexed by maker and token, by nonce and by RFQ, so every check is proportional to
one maker's live quotes, not to all of them (thousands under load)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from simulator.clock import Clock
from simulator.services.shared.state import (
    AsPairs,
    SavedAttributes,
    StateParticipant,
    StateSchema,
)


@dataclass
class MakerHold:
    rfq_id: str
    quote_id: str  # maker-side id of the order
    chain_id: int
    maker: str  # lowercase
    token: str  # lowercase: the token the maker gives
    amount: int
    nonce: int
    until: float  # simulator time (the quote's expiresAt)
    sell_token: str  # lowercase: taker's sell side, to find holds in the same direction
    held_at: float = 0.0  # simulator time the hold was taken (set by MakerInventory.hold)
    owner: str = ""  # the caller whose RFQ holds it (key:<id> or ip:<address>)


BookKey = tuple[int, str, str]  # (chain id, maker, token)


def earliest_end(
    holds: Iterable[MakerHold], makers: Collection[str], other_than: str | None
) -> float | None:
    """The earliest end of a hold by one of `makers` (lowercase) whose RFQ is not
    `other_than`'s."""
    return min(
        (h.until for h in holds if h.maker in makers and h.owner != other_than), default=None
    )


@dataclass(frozen=True)
class HoldRefusal:
    """Why a hold was not taken: the maker's nonce is held by a live quote (`nonce_used`), or
    its balance (`underfunded`) or allowance (`allowance`) does not cover what its live quotes
    commit plus this one."""

    reason: Literal["nonce_used", "underfunded", "allowance"]
    committed: int  # what the maker's live quotes of that token commit (0 for nonce_used)


def refusal(committed: int, amount: int, balance: int, allowance: int) -> HoldRefusal | None:
    """The funding rule, given what is committed: balance and allowance must each cover it
    plus `amount`."""
    if balance < committed + amount:
        return HoldRefusal("underfunded", committed)
    if allowance < committed + amount:
        return HoldRefusal("allowance", committed)
    return None


class MakerInventory:
    """The HoldLedger of one instance: every hold in memory (ports.py)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._holds: dict[str, MakerHold] = {}  # by quote id: the source of truth
        self._by_book: dict[BookKey, set[str]] = defaultdict(set)  # quote ids per maker+token
        self._committed: dict[BookKey, int] = defaultdict(int)  # sum of those holds' amounts
        self._by_nonce: dict[tuple[int, str, int], str] = {}  # (chain, maker, nonce) -> quote id
        self._by_rfq: dict[str, set[str]] = defaultdict(set)  # quote ids per rfq
        self._expiries: list[tuple[float, str]] = []  # heap of (until, quote id), lazily pruned

    def _prune(self) -> None:
        now = self._clock.time()
        while self._expiries and self._expiries[0][0] <= now:
            _, quote_id = heapq.heappop(self._expiries)
            hold = self._holds.get(quote_id)
            if hold is not None and hold.until <= now:
                self._drop(quote_id)
            elif hold is not None:
                heapq.heappush(self._expiries, (hold.until, quote_id))  # extended since

    def _drop(self, quote_id: str) -> MakerHold | None:
        hold = self._holds.pop(quote_id, None)
        if hold is None:
            return None
        key = (hold.chain_id, hold.maker, hold.token)
        book = self._by_book[key]
        book.discard(quote_id)
        self._committed[key] -= hold.amount
        if not book:
            del self._by_book[key]
            del self._committed[key]
        self._by_nonce.pop((hold.chain_id, hold.maker, hold.nonce), None)
        quotes = self._by_rfq[hold.rfq_id]
        quotes.discard(quote_id)
        if not quotes:
            del self._by_rfq[hold.rfq_id]
        return hold

    def committed(self, chain_id: int, maker: str, token: str) -> int:
        self._prune()
        # A running total per book: under load a maker has thousands of live quotes, and this is
        # asked for every quote checked.
        return self._committed.get((chain_id, maker.lower(), token.lower()), 0)

    def nonce_in_use(self, chain_id: int, maker: str, nonce: int) -> bool:
        self._prune()
        return (chain_id, maker.lower(), nonce) in self._by_nonce

    async def try_hold(self, hold: MakerHold, balance: int, allowance: int) -> HoldRefusal | None:
        if self.nonce_in_use(hold.chain_id, hold.maker, hold.nonce):  # no await from here on
            return HoldRefusal("nonce_used", 0)
        refused = refusal(
            self.committed(hold.chain_id, hold.maker, hold.token), hold.amount, balance, allowance
        )
        if refused is None:
            self.hold(hold)
        return refused

    def state(self, name: str) -> StateParticipant:
        return SavedAttributes(name, self, InventorySaved)

    def hold(self, hold: MakerHold) -> None:
        self._drop(hold.quote_id)
        hold.held_at = self._clock.time()
        self._holds[hold.quote_id] = hold
        key = (hold.chain_id, hold.maker, hold.token)
        self._by_book[key].add(hold.quote_id)
        self._committed[key] += hold.amount
        self._by_nonce[(hold.chain_id, hold.maker, hold.nonce)] = hold.quote_id
        self._by_rfq[hold.rfq_id].add(hold.quote_id)
        heapq.heappush(self._expiries, (hold.until, hold.quote_id))

    def release_quote(self, quote_id: str) -> None:
        self._drop(quote_id)

    def release_rfq(self, rfq_id: str) -> list[MakerHold]:
        released = [self._drop(q) for q in list(self._by_rfq.get(rfq_id, ()))]
        return [h for h in released if h is not None]

    def holds_of(self, rfq_id: str) -> list[MakerHold]:
        return [self._holds[q] for q in self._by_rfq.get(rfq_id, ())]

    def set_until(self, rfq_id: str, until: float) -> None:
        for quote_id in self._by_rfq.get(rfq_id, ()):
            self._holds[quote_id].until = until
            heapq.heappush(self._expiries, (until, quote_id))

    async def reserved_since(self, chain_id: int, sell_token: str, buy_token: str) -> float | None:
        holds = self.holds_for(chain_id, sell_token, buy_token)
        return min((hold.held_at for hold in holds), default=None)

    async def earliest_end(
        self,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        makers: Collection[str],
        other_than: str | None,
    ) -> float | None:
        """One instance: its holds are the venue's."""
        return earliest_end(self.holds_for(chain_id, sell_token, buy_token), makers, other_than)

    def holds_for(self, chain_id: int, sell_token: str, buy_token: str) -> list[MakerHold]:
        """Live holds of quotes in the same direction (taker sells `sell_token`)."""
        self._prune()
        sell, buy = sell_token.lower(), buy_token.lower()
        return [
            self._holds[q]
            for (chain, _maker, token), quote_ids in self._by_book.items()
            if chain == chain_id and token == buy
            for q in quote_ids
            if self._holds[q].sell_token == sell
        ]


class InventorySaved(StateSchema):
    """What reset and snapshots put back of the MakerInventory: every hold and its indexes."""

    holds: dict[str, MakerHold] = Field(validation_alias="_holds")
    by_book: Annotated[defaultdict[BookKey, set[str]], AsPairs()] = Field(
        validation_alias="_by_book"
    )
    committed: Annotated[defaultdict[BookKey, int], AsPairs()] = Field(
        validation_alias="_committed"
    )
    by_nonce: Annotated[dict[tuple[int, str, int], str], AsPairs()] = Field(
        validation_alias="_by_nonce"
    )
    by_rfq: defaultdict[str, set[str]] = Field(validation_alias="_by_rfq")
    expiries: list[tuple[float, str]] = Field(validation_alias="_expiries")
