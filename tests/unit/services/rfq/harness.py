"""The RFQ core (auction, service, settlement, holds, reservations, slots) wired to fakes behind
its ports, for unit tests: one test chain (97) with one USDT/NGNS corridor, a fake chain reader
(balances, maker funding, receipts) and fake makers on the registry that sign real orders with
the project's well-known maker keys. No Anvil, no network; time is the simulator's Clock,
advanced by hand. The reply budget and head start are short (300 ms / 100 ms) to keep it fast."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Awaitable, Callable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from eth_utils.address import to_checksum_address

from contracts.orders import RfqOrder, sign_order
from rfqkit.maker_protocol import ServerMessage, to_wire
from rfqkit.wallets import Wallet, demo_wallet, maker_wallet
from simulator.clock import Clock
from simulator.errors import NotFound
from simulator.randomness import RandomSource
from simulator.runtime.access import build_access
from simulator.runtime.rfq import build_rfq
from simulator.services.access.callers import Caller
from simulator.services.rfq.answers import RequestOutcome
from simulator.services.rfq.area import RfqArea
from simulator.services.rfq.inventory import MakerInventory
from simulator.services.rfq.makers import (
    DeclineReply,
    MakerRegistry,
    MakerReply,
    OnlineMaker,
    QuoteReply,
)
from simulator.services.rfq.model import FilledOrder, StoredRfq
from simulator.services.rfq.ports import ChainUnreadable, FleetMemberStatus, RfqStore
from simulator.services.rfq.service import FirmRequest
from simulator.services.rfq.slots import OutstandingSlots
from simulator.services.rfq.store import TieredRfqStore
from simulator.services.rfq.trades import TradeRequest
from simulator.services.shared.amounts import fee_on
from simulator.services.shared.events import EventLog
from simulator.services.shared.fills import Fill, FillFanout
from simulator.services.shared.owners import RecordOwners
from simulator.services.shared.venue import (
    ChainVenue,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.settings import CorridorTiming, LimitSettings, load_settings
from tests.unit.services.ramp_harness import NoChain
from tests.unit.services.rfq.fake_archive import MemoryRfqArchive

CHAIN_ID = 97
USDT = VenueToken("USDT", "Tether USD", to_checksum_address("0x" + "a1" * 20), 18, True)
NGNS = VenueToken("NGNS", "Naira stablecoin", to_checksum_address("0x" + "b2" * 20), 6, False)
CONTRACTS = VenueContracts(*(to_checksum_address("0x" + f"{i:02x}" * 20) for i in range(1, 6)))
TIMING = CorridorTiming(reply_budget_ms=300, quote_ttl_s=60, preferred_wait_ms=100, fee_bps=5)
HEAD_START_S = TIMING.preferred_wait_ms / 1000
TAKER = demo_wallet(0)
ONE = 10**18  # one USDT, the taker's sell token
RATE = Fraction(1500 * 10**6, ONE)  # NGNS atomic units per USDT atomic unit: 1 USDT = 1500 NGNS
TX = "0x" + "ab" * 32


def make_venue(timing: CorridorTiming = TIMING) -> VenueDirectory:
    chain = ChainVenue(
        chain_id=CHAIN_ID,
        environment="test",
        name="unit",
        rpc_url="http://127.0.0.1:1",
        managed=False,
        min_size=Decimal("0.01"),
        contracts=CONTRACTS,
        tokens=(USDT, NGNS),
        corridors=(VenueCorridor(USDT, NGNS, timing),),
    )
    return VenueDirectory(chains={CHAIN_ID: chain})


class FakeChain:
    """BalanceReader, MakerChainReader and TxStatusReader over plain dicts."""

    def __init__(self) -> None:
        self.balances: dict[tuple[str, str], int] = {}  # (token, owner) lowercase -> balance
        self.maker_funds: dict[str, tuple[int, int]] = {}  # maker lowercase -> (balance, allowance)
        self.used_nonces: set[tuple[str, int]] = set()  # (maker lowercase, nonce) spent on chain
        self.receipts: dict[str, bool] = {}  # tx hash -> mined ok / reverted; absent: not mined
        self.unreadable = False  # every read raises ChainUnreadable
        self.maker_reads_down = False  # only the makers' funding reads raise ChainUnreadable
        self.on_receipt_read: Callable[[], Awaitable[None]] | None = None  # runs inside the read
        self.receipt_reads: list[str] = []  # tx hashes asked for, in order
        self.balance_reads: list[str] = []  # takers whose balance was read, in order

    def fund_taker(self, amount: int, token: VenueToken = USDT, owner: str = TAKER.address) -> None:
        self.balances[(token.address.lower(), owner.lower())] = amount

    async def token_balance(self, chain_id: int, token: str, owner: str) -> int:
        self.balance_reads.append(owner)
        if self.unreadable:
            raise ChainUnreadable("fake chain down")
        return self.balances.get((token.lower(), owner.lower()), 0)

    async def maker_funding(
        self, chain_id: int, token: str, maker: str, spender: str, nonce: int
    ) -> tuple[int, int, bool]:
        if self.unreadable or self.maker_reads_down:
            raise ChainUnreadable("fake chain down")
        balance, allowance = self.maker_funds.get(maker.lower(), (10**40, 2**256 - 1))
        return balance, allowance, (maker.lower(), nonce) in self.used_nonces

    async def receipt_status(self, chain_id: int, tx_hash: str) -> bool | None:
        self.receipt_reads.append(tx_hash)
        if self.unreadable:
            raise ChainUnreadable("fake chain down")
        if self.on_receipt_read is not None:
            await self.on_receipt_read()
        return self.receipts.get(tx_hash)


Mode = Literal["quote", "decline", "silent"]


class FakeMaker:
    """A maker on the registry (its link is this object). It answers each `rfq` after `delay_s`
    by delivering to the registry, as the maker stream does: a signed order at `rate` within
    `depth` (maker-receives units), else a decline. `tamper` changes the order before it is
    signed; `signer` signs with another key."""

    def __init__(self, registry: MakerRegistry, clock: Clock, index: int, rate: Fraction) -> None:
        self.wallet: Wallet = maker_wallet(index)
        self.registry = registry
        self.clock = clock
        self.rate = rate
        self.mode: Mode = "quote"
        self.delay_s = 0.0
        self.depth = 10_000 * ONE
        self.life_ms = 20_000  # expiresAtMs = minExpiresAtMs + life (capped at maxExpiresAtMs)
        self.deadline_slack_s = 30  # order deadline after the cutoff
        self.tamper: Callable[[RfqOrder], RfqOrder] | None = None
        self.signer: str | None = None  # private key to sign with instead of the wallet's
        self.on_told: Callable[[dict[str, Any]], Awaitable[None]] | None = None  # runs inside
        # the send of every notification (released, expired, filled), as a slow socket would
        self.received: list[tuple[float, dict[str, Any]]] = []  # (monotonic time, message)
        self.deliveries: list[tuple[str, bool]] = []  # (quote id, taken by a waiting auction)
        self._next_nonce = index * 1_000_000
        self._answers: set[asyncio.Task[None]] = set()
        self.online = OnlineMaker(
            maker_id=f"tx_test_maker{index}",
            wallet=self.wallet.address,
            environment="test",
            gateway=self,
            connected_at=clock.time(),
        )
        registry.connect(self.online)
        self.publish_levels()

    def publish_levels(self) -> None:
        key = (CHAIN_ID, USDT.address.lower(), NGNS.address.lower())
        self.registry.set_levels(self.online, key, [(self.depth, int(self.depth * self.rate))])

    # --- the link --------------------------------------------------------------------------

    async def send(self, frame: ServerMessage) -> None:
        message = to_wire(frame)  # what the maker reads: the frame's JSON object
        self.received.append((self.clock.monotonic(), message))
        if message.get("type") == "rfq":
            task = asyncio.create_task(self._answer(message))
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)
        elif self.on_told is not None:
            await self.on_told(message)

    async def close(self, code: int, reason: str) -> None:
        self.registry.disconnect(self.online)

    # --- what it saw -----------------------------------------------------------------------

    def rfqs(self) -> list[dict[str, Any]]:
        return [m for _, m in self.received if m["type"] == "rfq"]

    def asked_at(self) -> list[float]:
        return [t for t, m in self.received if m["type"] == "rfq"]

    def told(self, kind: str) -> list[dict[str, Any]]:
        """Notifications of one type (released, expired, filled), in order."""
        return [m for _, m in self.received if m["type"] == kind]

    async def answered(self) -> None:
        """Wait until every answer it is still preparing (late ones included) was delivered."""
        while self._answers:
            await asyncio.gather(*self._answers)

    # --- answering -------------------------------------------------------------------------

    async def _answer(self, rfq: dict[str, Any]) -> None:
        if self.mode == "silent":
            return
        if self.delay_s:
            await asyncio.sleep(self.delay_s)  # the maker's latency
        quote = self.quote_for(rfq) if self.mode == "quote" else None
        reply: MakerReply = (
            quote if quote is not None else DeclineReply(reason="liquidity", max_sell_amount=None)
        )
        taken = self.registry.deliver(self.online, rfq["quoteId"], reply)
        self.deliveries.append((rfq["quoteId"], taken))

    def quote_for(self, rfq: dict[str, Any]) -> QuoteReply | None:
        if rfq["kind"] == "exact_input":
            receives = int(rfq["makerReceives"])
            if receives > self.depth:
                return None
            gives = int(receives * self.rate)
        else:
            gives = int(rfq["makerGives"])
            if gives > int(self.depth * self.rate):
                return None
            receives = math.ceil(gives / self.rate)
        expires_ms = min(rfq["minExpiresAtMs"] + self.life_ms, rfq["maxExpiresAtMs"])
        self._next_nonce += 1
        order = RfqOrder(
            reactor=rfq["reactor"],
            maker=self.wallet.address,
            taker=rfq["taker"],
            inputToken=rfq["buyToken"],
            inputAmount=gives,
            outputToken=rfq["sellToken"],
            outputAmount=receives,
            feeAmount=fee_on(receives, rfq["feeBps"]),
            nonce=self._next_nonce,
            deadline=-(-expires_ms // 1000) + self.deadline_slack_s,
        )
        if self.tamper is not None:
            order = self.tamper(order)
        key = self.signer or self.wallet.private_key
        signature = sign_order(key, order, rfq["chainId"], rfq["signatureTransfer"])
        return QuoteReply(order=order, signature=signature, expires_at_ms=expires_ms)


class NoFleet:
    """No simulated fleet: the harness's makers are FakeMakers on the registry."""

    async def members(self) -> list[FleetMemberStatus]:
        return []

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        raise NotFound(f"no simulated maker {name!r}")


class RfqHarness:
    """The RFQ area as the app builds it (runtime/rfq.py `build_rfq`, runtime/access.py
    `build_access`), on fake ports: FakeChain for every chain read, no signature contract, no
    simulated fleet; the makers are FakeMakers on the area's registry."""

    def __init__(
        self, *, timing: CorridorTiming = TIMING, owners: RecordOwners | None = None
    ) -> None:
        self._owners = owners  # None: one instance
        self.clock = Clock()
        self.venue = make_venue(timing)
        self.chain = FakeChain()
        self.chain.fund_taker(1_000_000 * ONE)
        self._settings = load_settings(environ={})
        self._random = RandomSource(5)
        self.access = build_access(self._settings, self.clock, self._random, signatures=NoChain())
        self.access.limits = LimitSettings()
        self.events = EventLog()
        self.store = TieredRfqStore(archive=MemoryRfqArchive())
        self.area = self.build(self.store)
        deps = self.area.deps
        self.deps = deps
        self.registry = deps.makers
        assert isinstance(deps.inventory, MakerInventory)  # one instance: in memory
        self.inventory = deps.inventory
        assert isinstance(deps.slots, OutstandingSlots)  # one instance: in memory
        self.slots = deps.slots
        self.funds = deps.funds
        self.history = deps.history
        self.service = self.area.service
        self.settlement = self.area.settlement
        self.settings = self.settlement.settings
        self.faults = self.access.faults
        self.keys = self.access.keys
        self.partner = self.keys.create_partner("unit")
        self.caller = self.key_caller()
        self.makers: list[FakeMaker] = []

    def build(self, store: RfqStore) -> RfqArea:
        """The area on `store`, publishing on the harness's event log (a second one built on
        the same store carries on where the first left off)."""
        return build_rfq(
            self._settings,
            self.clock,
            self._random,
            self.access,
            self.venue,
            reads=self.chain,
            fleet=NoFleet(),
            fills=FillFanout(),
            store=store,
            events=self.events,
            owners=self._owners,
        )

    @property
    def limits(self) -> LimitSettings:
        return self.access.limits

    @limits.setter
    def limits(self, limits: LimitSettings) -> None:
        self.access.limits = limits  # what /_sim/limits does

    def key_caller(self, scopes: frozenset[str] = frozenset({"trades:write"})) -> Caller:
        key, _ = self.keys.create_key(
            partner_id=self.partner.partner_id, environment="test", scopes=scopes
        )
        return Caller(ip="127.0.0.1", key=key)

    def maker(self, index: int, rate: Fraction = RATE, **behaviour: Any) -> FakeMaker:
        """A maker online now; `behaviour` sets its attributes (mode, delay_s, depth, ...)."""
        maker = FakeMaker(self.registry, self.clock, index, rate)
        for name, value in behaviour.items():
            assert hasattr(maker, name), name
            setattr(maker, name, value)
        maker.publish_levels()
        self.makers.append(maker)
        return maker

    async def request(
        self,
        *,
        sell: int | None = 100 * ONE,
        buy: int | None = None,
        preferred: list[str] | None = None,
        restricted: list[str] | None = None,
        caller: Caller | None = None,
        taker: str = TAKER.address,
    ) -> RequestOutcome:
        trade = TradeRequest(
            chain_id=CHAIN_ID,
            sell_token=USDT.address,
            buy_token=NGNS.address,
            sell_amount=sell if buy is None else None,
            buy_amount=buy,
            preferred=preferred,
            restricted=restricted,
        )
        body = FirmRequest(trade, taker, proof=None)
        return await self.service.request(caller or self.caller, body)

    async def quoted(self, **request: Any) -> StoredRfq:
        outcome = await self.request(**request)
        assert outcome.record.status == "quoted", outcome.record.no_quote_reason
        return outcome.record

    async def expired(self) -> StoredRfq:
        """A quote that lapsed and was swept: at rest from its expiry."""
        record = await self.quoted()
        assert record.quote is not None
        await self.advance_to(record.quote.expires_at)
        await self.settlement.sweep()
        assert record.status == "expired"
        return record

    async def settled_makers(self) -> None:
        """Every fake maker's pending answers delivered (late ones included)."""
        for maker in self.makers:
            await maker.answered()

    async def advance_to(self, moment: float) -> None:
        """Move the simulator clock forward to `moment` (no-op when it is already past)."""
        if moment > self.clock.time():
            await self.clock.advance(moment - self.clock.time())

    def fill(self, order: FilledOrder, *, tx_hash: str = TX, log_index: int = 0) -> Fill:
        """The reactor's Fill log for one order of a quote, mined now."""
        return Fill(
            chain_id=CHAIN_ID,
            tx_hash=tx_hash,
            log_index=log_index,
            block_time=self.clock.time(),
            order_hash=order.order_hash,
            maker=order.maker,
            taker=TAKER.address,
            input_token=NGNS.address,
            input_amount=order.maker_gives,
            output_token=USDT.address,
            output_amount=order.maker_receives,
            fee_amount=order.fee_amount,
        )

    async def fill_all(self, record: StoredRfq, tx_hash: str = TX) -> None:
        assert record.quote is not None
        for i, order in enumerate(record.quote.orders):
            await self.settlement.on_fill(self.fill(order, tx_hash=tx_hash, log_index=i))

    def event_types(self) -> list[tuple[str, str]]:
        return [(e.type, e.body["data"]["rfq"]["id"]) for e in self.events.events]


def status(record: StoredRfq) -> str:
    """The record's status, read through a call: mypy would otherwise keep an earlier assert's
    narrowing of the attribute across the awaits that change it."""
    return record.status


def replace_order(**changes: Any) -> Callable[[RfqOrder], RfqOrder]:
    return lambda order: dataclasses.replace(order, **changes)
