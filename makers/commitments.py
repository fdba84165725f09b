"""What a simulated maker's live quotes hold: commitments by quote id, with a running total per
(chain, token) and an expiry heap, so the hot paths stay cheap under load.

`total(chain, token)` is a dict look-up (the inventory of every rfq and of every levels
computation asks for it), adding and releasing a quote are O(log n), and the safety-net sweep
of quotes the server never confirmed pops only what has lapsed instead of scanning them all.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Commitment:
    """Inventory a live quote holds: `amount` of `token` (what the order gives) until the quote
    fills, lapses or is released."""

    chain_id: int
    token: str  # lower-case address
    amount: int
    expires_at_ms: int  # server time
    nonce: int


class Commitments(MutableMapping[str, Commitment]):
    """Live commitments by quote id (a dict to read, write and pop), indexed for the hot paths.

    The heap is swept lazily: a commitment released before it lapses leaves its heap entry
    behind, skipped when popped (it no longer is the live commitment of its quote id) and
    dropped wholesale when stale entries outnumber the live ones."""

    def __init__(self) -> None:
        self._live: dict[str, Commitment] = {}
        self._totals: dict[tuple[int, str], int] = {}
        # (expires_at_ms, insertion sequence, quote id, commitment); the sequence keeps the
        # tuples ordered without ever comparing commitments.
        self._heap: list[tuple[int, int, str, Commitment]] = []
        self._sequence = itertools.count()

    # ---- the mapping ------------------------------------------------------------------------

    def __getitem__(self, quote_id: str) -> Commitment:
        return self._live[quote_id]

    def __setitem__(self, quote_id: str, commitment: Commitment) -> None:
        previous = self._live.get(quote_id)
        if previous is not None:
            self._subtract(previous)
        self._live[quote_id] = commitment
        key = (commitment.chain_id, commitment.token)
        self._totals[key] = self._totals.get(key, 0) + commitment.amount
        heapq.heappush(
            self._heap,
            (commitment.expires_at_ms, next(self._sequence), quote_id, commitment),
        )
        self._compact()

    def __delitem__(self, quote_id: str) -> None:
        self._subtract(self._live.pop(quote_id))
        self._compact()

    def __iter__(self) -> Iterator[str]:
        return iter(self._live)

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, quote_id: object) -> bool:
        return quote_id in self._live

    def __repr__(self) -> str:
        return f"Commitments({self._live!r})"

    # ---- the indexes ------------------------------------------------------------------------

    def total(self, chain_id: int, token: str) -> int:
        """What the live commitments hold of `token` (any address case) on `chain_id`."""
        return self._totals.get((chain_id, token.lower()), 0)

    def sweep(self, now_ms: int, grace_ms: int = 0) -> list[Commitment]:
        """Drop every commitment with `expires_at_ms + grace_ms < now_ms`; returns them."""
        dropped: list[Commitment] = []
        heap = self._heap
        while heap and heap[0][0] + grace_ms < now_ms:
            _, _, quote_id, commitment = heapq.heappop(heap)
            if self._live.get(quote_id) is commitment:
                del self._live[quote_id]
                self._subtract(commitment)
                dropped.append(commitment)
        return dropped

    def _subtract(self, commitment: Commitment) -> None:
        key = (commitment.chain_id, commitment.token)
        remaining = self._totals.get(key, 0) - commitment.amount
        if remaining:
            self._totals[key] = remaining
        else:
            self._totals.pop(key, None)

    def _compact(self) -> None:
        # Entries of released commitments linger until they lapse; rebuild the heap once they
        # are most of it, so it stays within a small factor of the live count.
        if len(self._heap) > 2 * len(self._live) + 64:
            self._heap = [entry for entry in self._heap if self._live.get(entry[2]) is entry[3]]
            heapq.heapify(self._heap)
