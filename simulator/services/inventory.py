"""Maker inventory held by live quotes: what each maker has promised and not yet delivered,
so a maker cannot sell the same tokens twice and cannot reuse a nonce across live quotes.
A hold ends when the quote fills, lapses at expiresAt, is cancelled or loses the auction."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.clock import Clock


@dataclass
class Hold:
    rfq_id: str
    quote_id: str  # maker-side id of the order
    chain_id: int
    maker: str  # lowercase
    token: str  # lowercase: the token the maker gives
    amount: int
    nonce: int
    until: float  # simulator time (the quote's expiresAt)
    sell_token: str  # lowercase: taker's sell side, to find holds in the same direction


class MakerInventory:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._holds: dict[str, Hold] = {}  # by quote id

    def _live(self) -> list[Hold]:
        now = self._clock.time()
        return [h for h in self._holds.values() if h.until > now]

    def committed(self, chain_id: int, maker: str, token: str) -> int:
        key = (chain_id, maker.lower(), token.lower())
        return sum(h.amount for h in self._live() if (h.chain_id, h.maker, h.token) == key)

    def nonce_in_use(self, chain_id: int, maker: str, nonce: int) -> bool:
        return any(
            h.chain_id == chain_id and h.maker == maker.lower() and h.nonce == nonce
            for h in self._live()
        )

    def hold(self, hold: Hold) -> None:
        self._holds[hold.quote_id] = hold

    def release_quote(self, quote_id: str) -> None:
        self._holds.pop(quote_id, None)

    def release_rfq(self, rfq_id: str) -> list[Hold]:
        released = [h for h in self._holds.values() if h.rfq_id == rfq_id]
        for hold in released:
            del self._holds[hold.quote_id]
        return released

    def holds_for(self, chain_id: int, sell_token: str, buy_token: str) -> list[Hold]:
        """Live holds of quotes in the same direction (taker sells `sell_token`)."""
        return [
            h
            for h in self._live()
            if h.chain_id == chain_id
            and h.sell_token == sell_token.lower()
            and h.token == buy_token.lower()
        ]

    def forget_expired(self) -> None:
        now = self._clock.time()
        for quote_id in [q for q, h in self._holds.items() if h.until <= now]:
            del self._holds[quote_id]

    def set_until(self, rfq_id: str, until: float) -> None:
        for hold in self._holds.values():
            if hold.rfq_id == rfq_id:
                hold.until = until
