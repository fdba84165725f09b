"""The fleet's v1 book roles (makers/book.py) against a fake v1 API and a fake chain: the filling
operator takes exactly the best prefix of offers its own price covers, builds that swap, checks
it, sends the batch and reports the hash; the resting maker keeps per_side asks per direction
within its balance."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data

from makers.book import BookFiller, BookPoster
from makers.chainbook import ChainState
from makers.config import BookOrdersConfig, MakerConfig
from makers.pricing import PricingModel, PricingParams, TokenSpec
from rfqkit.maker_protocol import WelcomeChain, WelcomePair
from rfqkit.wallets import Wallet, maker_wallet

CHAIN = 97
USDC = "0x" + "c1" * 20
NGNS = "0x" + "b2" * 20
REACTOR = "0x" + "aa" * 20
PERMIT2 = "0x" + "bb" * 20
SPECS = {USDC: TokenSpec("USDC", 6), NGNS: TokenSpec("NGNS", 6)}
PAIR = WelcomePair(  # a taker selling NGNS receives USDC from the operator
    sell_token=NGNS,
    buy_token=USDC,
    sell_decimals=6,
    buy_decimals=6,
    fee_bps=5,
    reply_budget_ms=750,
    quote_ttl_ms=60_000,
)


class FakeClient:
    """What the roles read of the maker's stream connection."""

    def __init__(self) -> None:
        self.welcome = type("W", (), {"environment": "test"})()

    def server_time_ms(self) -> int:
        return 1_800_000_000_000


@dataclass
class FakeChain:
    allowances: dict[tuple[str, str], int] = field(default_factory=dict)
    sent: list[tuple[str, bytes]] = field(default_factory=list)
    chain_id: int = CHAIN

    async def token_symbol(self, token: str) -> str:
        return SPECS[token.lower()].symbol

    async def balance_of(self, token: str, owner: str) -> int:
        return 0

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        return self.allowances.get((token.lower(), spender.lower()), 0)

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        self.allowances[(token.lower(), spender.lower())] = amount
        return "0x" + "01" * 32

    async def send(self, private_key: str, to: str, data: bytes, *, gas: int) -> tuple[str, bool]:
        self.sent.append((to, data))
        return "0x" + "5e" * 32, True

    async def close(self) -> None:
        return None


@dataclass
class FakeApi:
    book: list[dict[str, Any]]
    posted: list[tuple[str, str, Any]] = field(default_factory=list)
    mine: list[dict[str, Any]] = field(default_factory=list)

    async def call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        body: dict[str, Any] = kwargs.get("body") or {}
        self.posted.append((method, path, body))
        if path == "/v1/swaps":
            chosen = [o for o in self.book][: len(self.accepted_by(body))]
            return 201, {
                "data": {
                    "id": "sw_1",
                    "orders": chosen,
                    "transactions": {"swap": {"to": REACTOR, "data": "0xabcd"}},
                }
            }
        if path == "/v1/limit-orders/prepare":
            order = {
                "maker": body["maker"],
                "inputAmount": body["sellAmount"],
                "outputAmount": body["buyAmount"],
                "reactor": REACTOR,
            }
            typed = _typed(body)
            return 200, {"data": {"order": order, "typedData": typed}}
        return 200, {"data": {}}

    def accepted_by(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        total, out = 0, []
        for offer in self.book:
            total += int(offer["sellAmount"])
            out.append(offer)
            if total >= int(body["sellAmount"]):
                break
        return out

    async def server_time(self) -> float | None:
        return 1_800_000_000.0

    async def data(self, method: str, path: str, **kwargs: Any) -> Any:
        if path == "/v1/order-book":
            return {"offers": self.book}
        if method == "GET" and path == "/v1/limit-orders":
            return self.mine
        status, payload = await self.call(method, path, **kwargs)
        return payload["data"] if status < 300 else None


def _typed(body: dict[str, Any]) -> dict[str, Any]:
    zero = "0x0000000000000000000000000000000000000000"
    return {
        "types": {
            "EIP712Domain": [{"name": "name", "type": "string"}],
            "Order": [
                {"name": "taker", "type": "address"},
                {"name": "witness", "type": "Witness"},
            ],
            "Witness": [{"name": "taker", "type": "address"}],
        },
        "primaryType": "Order",
        "domain": {"name": "Permit2"},
        "message": {"taker": zero, "witness": {"taker": zero}},
    }


@dataclass
class Seat:
    chain: FakeChain
    config: MakerConfig
    inventory_of: int = 10**12
    refreshed: int = 0
    wallet: Wallet = field(default_factory=lambda: maker_wallet(0))
    pricing: PricingModel = field(
        default_factory=lambda: PricingModel(
            PricingParams(
                mids={"USDC/NGNS": Fraction(1600)},
                spread_bps=Fraction(8),
                impact_bps=Fraction(0),
            )
        )
    )

    @property
    def name(self) -> str:
        return self.config.name

    def ready_states(self) -> list[ChainState]:
        return [state()]

    def chain_access(self, chain_id: int) -> Any:
        return self.chain

    def inventory(self, chain_id: int, token: str) -> int:
        return self.inventory_of

    async def refresh_balances(self, chain_id: int) -> None:
        self.refreshed += 1


def state() -> ChainState:
    info = WelcomeChain(
        chain_id=CHAIN,
        reactor=REACTOR,
        signature_transfer=PERMIT2,
        fee_recipient="0x" + "fe" * 20,
        pairs=[],
        book_pairs=[PAIR],
    )
    return ChainState(info=info, client=FakeClient(), tokens=dict(SPECS))  # type: ignore[arg-type]


def offer(ngns_whole: int, usdc_cost: int) -> dict[str, Any]:
    return {
        "maker": "0x" + "9" * 40,
        "sellAmount": str(usdc_cost),
        "buyAmount": str(ngns_whole * 10**6),
        "feeAmount": "0",
        "rateRay": str(ngns_whole * 10**27 * 10**6 // usdc_cost),
    }


async def test_the_operator_takes_the_best_prefix_its_price_covers() -> None:
    # Its bid for 1600 NGNS is 1600 / 1600 * (1 - 4 bp) = 0.9996 USDC.
    cheap = offer(1600, 990_000)  # costs less than the bid: taken
    also = offer(1600, 999_000)  # still under 999_600: taken
    dear = offer(1600, 1_000_000)  # over the bid: stops here
    after = offer(1600, 500_000)  # cheap, but after a refused one: never
    api = FakeApi([cheap, also, dear, after])
    seat = Seat(FakeChain(), MakerConfig(name="alpha", wallet_index=0, fills_book=True))
    filler = BookFiller(seat, {"test": api})  # type: ignore[dict-item]
    tx_hash = await filler.fill_direction(state(), PAIR, api)  # type: ignore[arg-type]
    assert tx_hash == "0x" + "5e" * 32
    swaps = [body for _, path, body in api.posted if path == "/v1/swaps"]
    assert swaps == [
        {
            "chainId": CHAIN,
            "sellToken": USDC,
            "buyToken": NGNS,
            "sellAmount": str(990_000 + 999_000),
            "minRate": str(min(int(cheap["rateRay"]), int(also["rateRay"]))),
            "taker": seat.wallet.address,
            "requireFullFill": True,
        }
    ]
    assert seat.chain.sent == [(REACTOR, bytes.fromhex("abcd"))]
    assert ("POST", "/v1/swaps/sw_1/submit", {"txHash": tx_hash}) in api.posted
    assert seat.chain.allowances[(USDC, REACTOR)] > 0, "the reactor may pull what it pays"
    assert seat.refreshed == 1
    assert filler.fills == 1


async def test_the_operator_leaves_what_its_price_does_not_cover() -> None:
    api = FakeApi([offer(1600, 1_000_000)])
    seat = Seat(FakeChain(), MakerConfig(name="alpha", wallet_index=0, fills_book=True))
    filler = BookFiller(seat, {"test": api})  # type: ignore[dict-item]
    assert await filler.fill_direction(state(), PAIR, api) is None  # type: ignore[arg-type]
    assert seat.chain.sent == []
    assert not any(path == "/v1/swaps" for _, path, _ in api.posted)


async def test_the_operator_never_spends_more_than_its_inventory() -> None:
    api = FakeApi([offer(1600, 990_000), offer(1600, 990_000)])
    seat = Seat(
        FakeChain(),
        MakerConfig(name="alpha", wallet_index=0, fills_book=True),
        inventory_of=1_500_000,
    )
    filler = BookFiller(seat, {"test": api})  # type: ignore[dict-item]
    await filler.fill_direction(state(), PAIR, api)  # type: ignore[arg-type]
    (body,) = [body for _, path, body in api.posted if path == "/v1/swaps"]
    assert body["sellAmount"] == "990000"


async def test_the_poster_keeps_per_side_asks_within_its_balance() -> None:
    book = BookOrdersConfig(per_side=3, spread_bps=Decimal(40), size_usd=Decimal(100))
    config = MakerConfig(name="bravo", wallet_index=1, book_orders=book)
    api = FakeApi([])
    # One ask already rests in this direction: the maker gives USDC (the pair's buyToken).
    api.mine = [
        {"status": "ACTIVE", "sellToken": USDC, "buyToken": NGNS, "sellAmount": "100000000"},
        {"status": "EXPIRED", "sellToken": USDC, "buyToken": NGNS, "sellAmount": "100000000"},
    ]
    seat = Seat(FakeChain(), config, inventory_of=250 * 10**6)  # room for 150 more USDC
    poster = BookPoster(seat, {"test": api}, random.Random(1))  # type: ignore[dict-item]
    placed = await poster.top_up(state(), api)  # type: ignore[arg-type]
    prepares = [body for _, path, body in api.posted if path == "/v1/limit-orders/prepare"]
    submits = [body for _, path, body in api.posted if path == "/v1/limit-orders"]
    assert placed == len(submits) == len(prepares) >= 1
    assert sum(int(b["sellAmount"]) for b in prepares) <= 150 * 10**6
    for level, body in enumerate(prepares, start=1):
        assert (body["sellToken"], body["buyToken"]) == (USDC, NGNS)
        asked = Fraction(int(body["buyAmount"]), int(body["sellAmount"]))  # NGNS per USDC
        assert asked >= 1600 * (1 + Fraction(40 + 10 * level, 10_000)) - Fraction(1, 10**6)
        assert body["deadline"] == 1_800_000_000 + book.ttl_s
    for body, asked_for in zip(submits, prepares, strict=True):
        # A real eth_signTypedData_v4 signature by the maker over the prepared typed data.
        message = encode_typed_data(full_message=_typed(asked_for))
        assert Account.recover_message(message, signature=body["signature"]) == seat.wallet.address


async def test_one_poster_round_fills_every_ready_chain_and_reads_the_clock_once() -> None:
    book = BookOrdersConfig(per_side=2, size_usd=Decimal(100))
    config = MakerConfig(name="bravo", wallet_index=1, book_orders=book)
    api = FakeApi([])
    reads: list[float] = []
    clock = api.server_time

    async def counted() -> float | None:
        reads.append(1.0)
        return await clock()

    api.server_time = counted  # type: ignore[method-assign]
    seat = Seat(FakeChain(), config)
    poster = BookPoster(seat, {"test": api}, random.Random(1))  # type: ignore[dict-item]
    assert await poster.round() == 2 == poster.placed  # per_side asks in the one BOOK direction
    submits = [body for _, path, body in api.posted if path == "/v1/limit-orders"]
    assert len(submits) == 2
    assert len(reads) == 1, "one read of the service's clock per chain and round"
    # Another round finds them resting (the API lists them ACTIVE) and places nothing.
    api.mine = [
        {"status": "ACTIVE", "sellToken": USDC, "buyToken": NGNS, "sellAmount": b["inputAmount"]}
        for b in submits
    ]
    assert await poster.round() == 0
    assert len(reads) == 1, "nothing to place: the clock is not read"
