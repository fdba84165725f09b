"""Ports of the RFQ area: the store that holds every RFQ record, the chain reads proof of funds,
quote checks and settlement need, the channel to each connected maker, and the simulated maker
fleet /_sim/makers controls. Adapters (adapters/rfq/chain_reads.py, maker_stream.py, fleet.py)
implement them; store.py holds the in-memory store; unit tests implement them with fakes."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from rfqkit.chain_errors import ChainUnreadable
from rfqkit.maker_protocol import ServerMessage
from simulator.services.rfq.archived import ArchivedRfq
from simulator.services.rfq.inventory import HoldRefusal, MakerHold
from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.fills import Fill, FillSubscriber
from simulator.services.shared.state import StateParticipant

__all__ = [
    "BalanceReader",
    "ChainUnreadable",
    "FillReplay",
    "FleetMemberStatus",
    "FrameTap",
    "HoldLedger",
    "MakerChainReader",
    "MakerGateway",
    "ReservationLedger",
    "RfqArchive",
    "RfqChainReads",
    "RfqStore",
    "SimulatedFleet",
    "SlotLedger",
    "TxStatusReader",
]


class FillReplay(Protocol):
    """The fills already indexed of some orders, handed again (adapters/rfq/indexer.py)."""

    async def replay(
        self, chain_id: int, order_hashes: Sequence[bytes], since: float, to: FillSubscriber
    ) -> int:
        """Hand `to` the chain's Fill logs of these orders in the blocks the index has
        passed, mined at `since` (service time) or later; none handed meanwhile by the index
        itself. How many."""
        ...


class FrameTap(Protocol):
    """Told every maker stream frame, in (from the maker) and out (services/sim/journal.py)."""

    def record_frame(
        self, maker_id: str, wallet: str, direction: Literal["in", "out"], text: str
    ) -> None: ...


class RfqStore(Protocol):
    """The only holder of RFQ record state (one store per area: reset and snapshot work store by
    store): the records, the index fills find them by, the Fill logs seen per RFQ;
    every fill seen on the reactors. No method awaits, so each call is atomic on the event loop;
    a caller that reads, awaits and then writes must re-check after the await or hold a lock."""

    def add(self, record: StoredRfq) -> None:
        """A new RFQ, from the moment makers are asked (status soliciting)."""
        ...

    def get(self, rfq_id: str) -> StoredRfq | None: ...

    def discard(self, rfq_id: str) -> None:
        """Forget an RFQ whose request failed while it was still soliciting."""
        ...

    def all(self) -> list[StoredRfq]:
        """Every RFQ, oldest first; a copy, so the store may change while the caller iterates."""
        ...

    def index_orders(self, record: StoredRfq) -> None:
        """A quote was issued: its maker orders now lead fills to this RFQ, and its expiresAt
        is watched."""
        ...

    def track_submitted(self, record: StoredRfq) -> None:
        """A quoted RFQ's transaction was reported: its order deadline now matters."""
        ...

    def expiring(self, until: float) -> list[StoredRfq]:
        """The quoted RFQs whose expiresAt is at or before `until`, earliest first; each is
        returned once (the caller expires it)."""
        ...

    def overdue(self, now: float) -> list[StoredRfq]:
        """The submitted RFQs whose order deadline is before `now`, until they leave submitted
        (a sweep that cannot decide one sees it again next time)."""
        ...

    def next_expiry(self) -> float | None:
        """The earliest expiresAt of a quoted RFQ not yet returned by `expiring`."""
        ...

    def next_deadline(self) -> float | None:
        """The earliest order deadline of a submitted RFQ not yet overdue."""
        ...

    def reindex_open(self) -> None:
        """The records were put back whole (reset, restore): rebuild what `open` reads."""
        ...

    def by_order_hash(self, order_hash: bytes) -> StoredRfq | None:
        """The RFQ whose quote holds the order (None: a v1 order, or none of ours)."""
        ...

    def adopt(self, archived: ArchivedRfq) -> StoredRfq:
        """A record another instance of the venue held, taken over: kept and swept here."""
        ...

    def copy(self, record: StoredRfq) -> Callable[[], bytes]:
        """The record and its fills as kept for another instance (made only when called)."""
        ...

    def evict_at_rest(self, before: float) -> int:
        """Forget every record that has been at rest (`StoredRfq.at_rest_since`) since before
        `before` (a horizon no later than now), with its order index and fills; returns how
        many went."""
        ...

    def fill_of(self, rfq_id: str, order_hash: bytes) -> Fill | None:
        """The Fill log seen of one of the RFQ's orders, if any."""
        ...

    def add_fill(self, rfq_id: str, fill: Fill) -> list[Fill]:
        """Remember one Fill log of an RFQ's orders (one per order hash); returns every one seen
        so far, in arrival order."""
        ...

    def in_memory(self) -> int:
        """How many records are in memory (the rest are in the archive)."""
        ...

    def spill(self, before: float) -> int:
        """Move every record at rest since before `before` (a horizon no later than now) out of
        memory, into the archive; returns how many went (they stay readable through `get` and
        `by_order_hash`)."""
        ...


class SlotLedger(Protocol):
    """The outstanding-RFQ slots (slots.py has the rules): in memory for one instance
    (`OutstandingSlots`), in the shared engine for several (adapters/redis/slots.py). `acquire`
    is the one check-and-take and is atomic wherever the ledger lives: two requests, on one
    instance or two, never both take the last slot. The other calls do not wait: a shared
    ledger applies them in order, before the next `acquire` of the same instance checks."""

    async def acquire(self, owner: str, rfq_id: str, cap: int, hold_s: float) -> None:
        """Take a slot for `rfq_id`, held `hold_s` from now (provisional: its auction runs); over
        the cap is 429 `outstanding_rfq_cap` naming `nextSlotFreeAt`, after the owner's running
        auctions end."""
        ...

    def extend(self, rfq_id: str, held_until: float) -> None:
        """The quote's latestOrderDeadline: the slot is settled and held to it."""
        ...

    def release(self, rfq_id: str) -> None:
        """The slot is free now (a fill, a no-quote, an error, /_sim release)."""
        ...

    def evict_lapsed(self) -> None:
        """Drop every slot past its hold, whoever owns it."""
        ...

    def state(self, name: str) -> StateParticipant:
        """The ledger as reset, snapshots and the state directory see it."""
        ...


class ReservationLedger(Protocol):
    """Taker reservations (funds.py has the rules), per (chain id, taker, token) in lowercase:
    in memory for one instance (`MemoryReservations`), in the shared engine for several
    (adapters/redis/funds.py). `reserve` is the one check-and-reserve and is atomic wherever
    the ledger lives; the other writes do not wait (as the SlotLedger's)."""

    async def reserve(
        self,
        rfq_id: str,
        wallet: tuple[int, str, str],
        required: int,
        until: float,
        balance: int,
    ) -> int | None:
        """If `balance` covers what the wallet's other live reservations commit plus
        `required`, reserve `required` for `rfq_id` until `until` and return None; otherwise
        write nothing and return what is committed."""
        ...

    async def committed(self, wallet: tuple[int, str, str]) -> int:
        """What the wallet's live reservations commit now."""
        ...

    def hold(self, rfq_id: str, amount: int, until: float) -> None:
        """The quote's exact amount, held until `until` (a reservation that lapsed or was
        released stays gone)."""
        ...

    def release(self, rfq_id: str) -> None: ...

    def evict_lapsed(self) -> None:
        """Drop every reservation past its end, whoever holds it."""
        ...

    def state(self, name: str) -> StateParticipant: ...


class HoldLedger(Protocol):
    """Maker inventory held by live quotes (inventory.py has the rules): in memory for one
    instance (`MakerInventory`), in the shared engine for several (adapters/redis/holds.py).
    `try_hold` is the one check-and-hold and is atomic wherever the ledger lives; the reads
    (`release_rfq`'s answer, `holds_for`) see this instance's holds."""

    async def reserved_since(self, chain_id: int, sell_token: str, buy_token: str) -> float | None:
        """Since when live firm quotes of any instance have held maker inventory in that
        direction (the earliest `held_at` of a live hold there), or None."""
        ...

    async def earliest_end(
        self,
        chain_id: int,
        sell_token: str,
        buy_token: str,
        makers: Collection[str],
        other_than: str | None,
    ) -> float | None:
        """Of every instance's live holds in that direction (taker sells `sell_token`) by one
        of `makers` (lowercase wallets) whose RFQ is not `other_than`'s: the earliest end."""
        ...

    async def try_hold(self, hold: MakerHold, balance: int, allowance: int) -> HoldRefusal | None:
        """Hold `hold` (replacing a hold of the same quote id) unless its nonce is held by a
        live quote of the maker, or `balance` or `allowance` does not cover what the maker's
        live quotes of that token commit plus `hold.amount`: then nothing is written."""
        ...

    def release_quote(self, quote_id: str) -> None: ...

    def release_rfq(self, rfq_id: str) -> list[MakerHold]:
        """End every hold of the RFQ; returns them (their makers are told)."""
        ...

    def set_until(self, rfq_id: str, until: float) -> None:
        """The RFQ's holds run to `until` (the quote's expiresAt)."""
        ...

    def holds_for(self, chain_id: int, sell_token: str, buy_token: str) -> list[MakerHold]:
        """Live holds of quotes in the same direction (taker sells `sell_token`)."""
        ...

    def state(self, name: str) -> StateParticipant: ...


class RfqArchive(Protocol):
    """The RFQ records at rest, out of memory (adapters/store/rfq_archive.py: the history
    database). What is put is visible to `get` at once, before it reaches the disk. Each call
    is synchronous and short (an indexed read), so the store stays atomic on the event loop."""

    def put(self, records: list[ArchivedRfq]) -> None:
        """Keep these (replacing what was kept under the same ids)."""
        ...

    def get(self, rfq_id: str) -> ArchivedRfq | None: ...

    def rfq_of_order(self, order_hash: bytes) -> str | None:
        """The RFQ whose quote holds this order, among the records kept."""
        ...

    def forget_at_rest_before(self, before: float) -> set[str]:
        """Forget every record at rest since before `before`; returns their ids."""
        ...

    def all(self) -> list[ArchivedRfq]:
        """Every record kept, oldest first (tests and snapshots: a full read)."""
        ...

    def count(self) -> int: ...

    def clear(self) -> None: ...


class BalanceReader(Protocol):
    async def token_balance(self, chain_id: int, token: str, owner: str) -> int:
        """ERC-20 balance; raises ChainUnreadable when the chain cannot be read."""
        ...


class MakerChainReader(Protocol):
    async def maker_funding(
        self, chain_id: int, token: str, maker: str, spender: str, nonce: int
    ) -> tuple[int, int, bool]:
        """(balance, allowance to `spender`, nonce already used) for a maker's order, read in
        one go. Raises ChainUnreadable when the chain cannot be read."""
        ...


class TxStatusReader(Protocol):
    async def receipt_status(self, chain_id: int, tx_hash: str) -> bool | None:
        """True mined and succeeded, False mined and reverted, None not mined (or unknown).
        Raises ChainUnreadable when the chain cannot be read."""
        ...


class RfqChainReads(BalanceReader, MakerChainReader, TxStatusReader, Protocol):
    """Every chain read the RFQ area makes (adapters/rfq/chain_reads.py `ChainReads`)."""


class MakerGateway(Protocol):
    """The channel to one connected maker: the registry, the auction and settlement send it
    the server's messages of docs/maker-protocol.md (`rfq`, `released`, `filled`, ...)."""

    async def send(self, message: ServerMessage) -> None:
        """One message of the protocol. Raises ConnectionError (or RuntimeError) when the
        connection is already gone; callers treat that as a maker that did not hear it."""
        ...

    async def close(self, code: int, reason: str) -> None:
        """Ask for the end of the connection with a close code of the protocol (4001
        replaced, ...); the session runs the closing handshake, nothing is sent after it."""
        ...


@dataclass(frozen=True)
class FleetMemberStatus:
    """One simulated maker as /_sim/makers shows it."""

    name: str
    wallet: str  # its funding wallet
    behaviour: str  # normal, silent, late, decline, bad_signature, underfunded or flaky
    online: bool  # configured to be connected
    connected: bool  # connected right now
    chains: list[int]  # chains it is ready to quote on
    live_quotes: int  # its quotes that still hold inventory
    stats: dict[str, Any]  # counters of what it answered and heard
    config: dict[str, Any]  # its settings as JSON, without the private key


class SimulatedFleet(Protocol):
    """The simulator's own maker fleet (makers/fleet.py), which starts once the API listens."""

    async def members(self) -> list[FleetMemberStatus]:
        """Every simulated maker in fleet order; none before the fleet runs, or without one."""
        ...

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        """Change one maker live (the fields of /_sim/makers/{name}). Raises NotFound for a name
        the fleet does not have, InvalidRequest for values the maker refuses, UpstreamError when
        it was asked to go online and could not reconnect."""
        ...
