"""The book and swaps services over a fake chain (no network): balances, allowances and Permit2
nonces set by the test, fills handed to the services when the fake index catches up."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils.address import to_checksum_address

from contracts.orders import RfqOrder, order_hash
from rfqkit.chain_errors import ChainUnreadable
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.limit_orders import build_book
from simulator.runtime.swaps import build_swaps
from simulator.services.access.callers import Caller
from simulator.services.access.keys import ApiKey
from simulator.services.limit_orders.area import BookArea
from simulator.services.limit_orders.jobs import BookSweep
from simulator.services.limit_orders.placement import PrepareRequest, SignedPlacement
from simulator.services.limit_orders.ports import FundingKey, NonceRef, ResourceState
from simulator.services.limit_orders.service import BookService
from simulator.services.shared.amounts import Curve
from simulator.services.shared.events import EventLog
from simulator.services.shared.fills import Fill
from simulator.services.shared.venue import (
    ChainVenue,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.services.swaps.area import SwapsArea
from simulator.services.swaps.service import SwapService
from simulator.settings import BookSettings, CorridorTiming, load_settings
from tests.unit.services.limit_orders.factory import CHAIN_ID, NGNS, PERMIT2, REACTOR, USDC, USDT

NGNS_T = VenueToken("NGNS", "Naira", to_checksum_address(NGNS), 6, False)
USDC_T = VenueToken("USDC", "USD Coin", to_checksum_address(USDC), 6, False)
USDT_T = VenueToken("USDT", "Tether", to_checksum_address(USDT), 18, True)


def venue() -> VenueDirectory:
    contracts = VenueContracts(
        signature_transfer=to_checksum_address(PERMIT2),
        reactor=to_checksum_address(REACTOR),
        router=to_checksum_address("0x" + "66" * 20),
        wallet_factory=to_checksum_address("0x" + "77" * 20),
        fee_recipient=to_checksum_address("0x" + "88" * 20),
    )
    chain = ChainVenue(
        chain_id=CHAIN_ID,
        environment="test",
        name="test",
        rpc_url="http://127.0.0.1:1",
        managed=False,
        min_size=Decimal("0.01"),
        contracts=contracts,
        tokens=(USDT_T, NGNS_T, USDC_T),
        corridors=(
            VenueCorridor(USDT_T, NGNS_T, CorridorTiming()),
            VenueCorridor(USDC_T, NGNS_T, CorridorTiming(mode="BOOK")),
        ),
    )
    return VenueDirectory({CHAIN_ID: chain})


def caller(partner: str = "ptn_a", environment: str = "test") -> Caller:
    key = ApiKey(
        key_id=f"tx_{environment}_{partner[-6:]:0>12}",
        partner_id=partner,
        environment=environment,  # type: ignore[arg-type]
        scopes=frozenset({"trades:write", "trades:read", "quotes:read"}),
        tier="default",
        name=partner,
        created_at=datetime.now(UTC),
        secret_hash=b"",
    )
    return Caller(ip="127.0.0.1", key=key)


@dataclass
class FakeChain:
    """BookChainReader, MakerChainReader, FillCatchUp and SignatureChecker at once."""

    block: int = 1
    spendable_by: dict[tuple[str, str], int] = field(default_factory=dict)  # (token, maker)
    spent: set[tuple[str, int]] = field(default_factory=set)  # (maker, nonce), lowercase
    down: bool = False
    head_reads: int = 0
    resource_reads: int = 0
    catch_ups: int = 0
    unindexed: list[Fill] = field(default_factory=list)  # mined, not yet handed on
    deliver: Callable[[Fill], Awaitable[None]] | None = None

    def fund(self, token: str, maker: str, amount: int) -> None:
        self.spendable_by[(token.lower(), maker.lower())] = amount
        self.block += 1

    def spend_nonce(self, maker: str, nonce: int) -> None:
        self.spent.add((maker.lower(), nonce))
        self.block += 1

    def _check(self) -> None:
        if self.down:
            raise ChainUnreadable("fake chain down")

    async def head(self, chain_id: int) -> int:
        self._check()
        self.head_reads += 1
        return self.block

    async def resources(
        self,
        chain_id: int,
        signature_transfer: str,
        funding: Sequence[FundingKey],
        nonces: Sequence[NonceRef],
    ) -> ResourceState:
        self._check()
        self.resource_reads += 1
        return ResourceState(
            block=self.block,
            spendable={
                (t.lower(), m.lower()): self.spendable_by.get((t.lower(), m.lower()), 0)
                for t, m in funding
            },
            spent={(m.lower(), n): (m.lower(), n) in self.spent for m, n in nonces},
        )

    async def maker_funding(
        self, chain_id: int, token: str, maker: str, spender: str, nonce: int
    ) -> tuple[int, int, bool]:
        self._check()
        amount = self.spendable_by.get((token.lower(), maker.lower()), 0)
        return amount, amount, (maker.lower(), nonce) in self.spent

    async def catch_up(self, chain_id: int) -> None:
        self._check()
        self.catch_ups += 1
        pending, self.unindexed = self.unindexed, []
        for fill in pending:
            assert self.deliver is not None
            await self.deliver(fill)

    async def is_valid_signature(
        self, chain_id: int, signer: str, digest: bytes, signature: bytes
    ) -> bool:
        self._check()
        return False

    def mine_fill(self, order: RfqOrder, taker: str, tx_hash: str, block_time: float) -> Fill:
        """The order settles on chain: its nonce is spent and a Fill waits for the index."""
        self.spend_nonce(order.maker, order.nonce)
        fill = Fill(
            chain_id=CHAIN_ID,
            tx_hash=tx_hash,
            log_index=len(self.unindexed),
            block_time=block_time,
            order_hash=order_hash(order),
            maker=order.maker,
            taker=taker,
            input_token=order.inputToken,
            input_amount=order.inputAmount,
            output_token=order.outputToken,
            output_amount=order.outputAmount,
            fee_amount=order.feeAmount,
        )
        self.unindexed.append(fill)
        return fill


@dataclass
class FakeBids:
    curves: dict[tuple[int, str, str], list[tuple[str, Curve]]] = field(default_factory=dict)

    def filler_curves(self, environment: str, key: tuple[int, str, str]) -> list[tuple[str, Curve]]:
        return self.curves.get(key, [])


@dataclass
class Harness:
    clock: Clock
    chain: FakeChain
    bids: FakeBids
    book: BookService
    swaps: SwapService
    sweep: BookSweep
    book_events: EventLog
    swap_events: EventLog
    settings: BookSettings
    book_area: BookArea
    swaps_area: SwapsArea

    async def deliver(self, fill: Fill) -> None:
        await self.book.on_fill(fill)
        await self.swaps.on_fill(fill)


def build(settings: BookSettings | None = None) -> Harness:
    """The book and swaps as the app builds them (runtime/limit_orders.py `build_book`,
    runtime/swaps.py `build_swaps`), on the fake chain and the fake filling bids."""
    book_settings = settings or BookSettings()
    app_settings = load_settings(environ={}).model_copy(update={"book": book_settings})
    clock = Clock()
    chain = FakeChain()
    bids = FakeBids()
    random = RandomSource(7)
    book = build_book(
        app_settings,
        clock,
        random,
        venue(),
        reads=chain,
        funding=chain,
        signatures=chain,
        bids=bids,
        fills=chain,
    )
    swaps = build_swaps(app_settings, clock, random, book)
    harness = Harness(
        clock,
        chain,
        bids,
        book.service,
        swaps.service,
        book.sweep,
        book.events,
        swaps.events,
        book_settings,
        book,
        swaps,
    )
    chain.deliver = harness.deliver
    return harness


MAKER_KEYS = [Account.create() for _ in range(3)]


def sign(typed_data: dict[str, object], private_key: bytes) -> bytes:
    """eth_signTypedData_v4 over the prepared typed data, as a wallet does."""
    message = encode_typed_data(full_message=typed_data)
    return bytes(Account.sign_message(message, private_key).signature)


async def place(
    h: Harness,
    *,
    sell_amount: int,
    buy_amount: int,
    maker: int = 0,
    sell: VenueToken = NGNS_T,
    buy: VenueToken = USDC_T,
    deadline_in: int = 600,
    who: Caller | None = None,
    fund: bool = True,
) -> str:
    """prepare -> sign -> place through the services; returns the order id."""
    account = MAKER_KEYS[maker]
    if fund:
        current = h.chain.spendable_by.get((sell.address.lower(), account.address.lower()), 0)
        h.chain.fund(sell.address, account.address, current + sell_amount)
    who = who or caller()
    prepared = await h.book.prepare(
        who,
        PrepareRequest(
            chain_id=CHAIN_ID,
            maker=account.address,
            sell_token=sell.address,
            sell_amount=sell_amount,
            buy_token=buy.address,
            buy_amount=buy_amount,
            pricing_mode=None,
            margin_bps=10,
            deadline=int(h.clock.time()) + deadline_in,
            preferred=None,
            restricted=None,
        ),
    )
    order, status = await h.book.place(
        who, signed(prepared.order, sign(prepared.typed_data, account.key))
    )
    assert status.status == "ACTIVE"
    return order.order_id


def signed(order: RfqOrder, signature: bytes) -> SignedPlacement:
    return SignedPlacement(
        chain_id=CHAIN_ID,
        reactor=order.reactor,
        maker=order.maker,
        input_token=order.inputToken,
        input_amount=order.inputAmount,
        output_token=order.outputToken,
        output_amount=order.outputAmount,
        nonce=order.nonce,
        deadline=order.deadline,
        signature=signature,
    )
