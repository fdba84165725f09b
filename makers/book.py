"""A simulated maker's two v1 book roles, run through the public v1 API with an API key exactly
as a maker bot would (docs/maker-protocol.md "The v1 book"):

- `BookFiller`, the filling operator (`fills_book`): every `fill_interval_ms` it reads the order
  book of each direction it bids in (BOOK corridors every round, RFQ corridors every fifth) and
  takes the best resting orders priced at or better than its own price for their size (what
  it would give for what it receives, from the same ladder its published levels come from): it
  builds a swap of exactly those orders (POST /v1/swaps, requireFullFill), checks it, sends the
  batch itself and reports the hash. Its published levels are therefore a true standing bid,
  which is what the service's fastFill price crosses.
- `BookPoster` (`book_orders`): keeps a few resting asks per direction on every BOOK corridor
  (prepare, eth_signTypedData_v4, submit), tops them up as they fill or expire. Its first round
  is part of the maker's start, so a venue whose fleet has started already holds its orders.

Both run as background tasks of the maker; a failing round is logged and the next one retries.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any, Protocol

import aiohttp
from eth_account import Account
from eth_account.messages import encode_typed_data

from makers.chain import MakerChain, TxSender, ensure_max_allowance
from makers.chainbook import ChainState
from makers.config import MakerConfig
from makers.latency import RandomLike
from makers.pricing import PricingModel
from rfqkit.maker_protocol import WelcomePair
from rfqkit.timestamps import unix_seconds
from rfqkit.wallets import Wallet

log = logging.getLogger("makers.book")

RFQ_SCAN_EVERY = 5  # RFQ corridors are read every fifth round (resting orders are rare there)
BATCH_GAS_BASE = 150_000
BATCH_GAS_PER_ORDER = 200_000
ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


class BookSeat(Protocol):
    """What the roles need of the maker they work for (makers.simulated.SimulatedMaker)."""

    @property
    def name(self) -> str: ...

    @property
    def wallet(self) -> Wallet: ...

    @property
    def config(self) -> MakerConfig: ...

    @property
    def pricing(self) -> PricingModel: ...

    def ready_states(self) -> list[ChainState]:
        """Chain states prepared and served by a live connection."""
        ...

    def chain_access(self, chain_id: int) -> MakerChain | None: ...

    def inventory(self, chain_id: int, token: str) -> int: ...

    async def refresh_balances(self, chain_id: int) -> None: ...


class V1Api:
    """The v1 endpoints the roles call, with one API key (bearer), over a shared session."""

    def __init__(self, session: aiohttp.ClientSession, url: str, key: str) -> None:
        self._session = session
        self._base = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {key}"}

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Any = None,
    ) -> tuple[int, Any]:
        async with self._session.request(
            method, self._base + path, params=params, json=body, headers=self._headers
        ) as response:
            payload = await response.json(content_type=None)
            return response.status, payload

    async def server_time(self) -> float | None:
        """The service's clock (GET /v1/health), Unix seconds: it may run ahead of this
        machine's (a simulator's clock can be advanced), and deadlines are judged by it."""
        health = await self.data("GET", "/v1/health")
        if not isinstance(health, dict) or not isinstance(health.get("time"), str):
            return None
        return unix_seconds(health["time"])

    async def data(self, method: str, path: str, **kwargs: Any) -> Any:
        """The `data` of a 2xx answer; None (logged) otherwise."""
        status, payload = await self.call(method, path, **kwargs)
        if status >= 300 or not isinstance(payload, dict):
            log.info("%s %s answered %s: %s", method, path, status, str(payload)[:300])
            return None
        return payload.get("data")


def _env(state: ChainState) -> str | None:
    welcome = state.client.welcome
    return welcome.environment if welcome is not None else None


class BookFiller:
    def __init__(self, seat: BookSeat, apis: Mapping[str, V1Api]) -> None:
        self._seat = seat
        self._apis = dict(apis)  # by environment
        self._allowed: set[tuple[int, str]] = set()  # (chain, token) approved to the reactor
        self.fills = 0  # swaps it executed
        self._round = 0

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self._seat.config.fill_interval_ms / 1000)
            if not self._seat.config.fills_book:
                continue
            self._round += 1
            for state in self._seat.ready_states():
                api = self._apis.get(_env(state) or "")
                if api is None:
                    continue
                pairs = list(state.info.book_pairs)
                if self._round % RFQ_SCAN_EVERY == 0:
                    pairs += state.info.pairs
                for pair in pairs:
                    try:
                        await self.fill_direction(state, pair, api)
                    except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
                        log.info("%s: filling %s failed: %r", self._seat.name, pair, exc)
                    except Exception:
                        log.exception("%s: filling %s failed", self._seat.name, pair)

    async def fill_direction(self, state: ChainState, pair: WelcomePair, api: V1Api) -> str | None:
        """One direction: the operator receives `pair.sellToken` and gives `pair.buyToken`
        (the direction of its levels), so it reads the book as a taker selling buyToken.
        Returns the swap's transaction hash when it filled something."""
        chain_id = state.info.chain_id
        gets = state.tokens.get(pair.sell_token.lower())
        gives = state.tokens.get(pair.buy_token.lower())
        if gets is None or gives is None:
            return None
        book = await api.data(
            "GET",
            "/v1/order-book",
            params={"chainId": chain_id, "sellToken": pair.buy_token, "buyToken": pair.sell_token},
        )
        if not book or not book.get("offers"):
            return None
        inventory = self._seat.inventory(chain_id, pair.buy_token)
        accepted: list[dict[str, Any]] = []
        spent = 0
        for offer in book["offers"]:
            cost, receives = int(offer["sellAmount"]), int(offer["buyAmount"])
            bid = self._seat.pricing.price_exact_input(gets, gives, receives, inventory)
            if bid is None or cost > bid or spent + cost > inventory:
                break  # the book is in matching order: take only its best prefix
            accepted.append(offer)
            spent += cost
        if not accepted:
            return None
        chain = self._seat.chain_access(chain_id)
        if not isinstance(chain, TxSender) or chain is None:
            return None
        await self._allow(chain, chain_id, pair.buy_token, state.info.reactor)
        status, created = await api.call(
            "POST",
            "/v1/swaps",
            body={
                "chainId": chain_id,
                "sellToken": pair.buy_token,
                "buyToken": pair.sell_token,
                "sellAmount": str(spent),
                "minRate": str(min(int(o["rateRay"]) for o in accepted)),
                "taker": self._seat.wallet.address,
                "requireFullFill": True,
            },
        )
        if status != 201 or not isinstance(created, dict):
            return None
        swap = created["data"]
        if _terms(swap["orders"]) != _terms(accepted):
            log.info("%s: the built swap is not the orders it chose; skipped", self._seat.name)
            return None
        tx = swap["transactions"]["swap"]
        tx_hash, ok = await chain.send(
            self._seat.wallet.private_key,
            tx["to"],
            bytes.fromhex(tx["data"][2:]),
            gas=BATCH_GAS_BASE + BATCH_GAS_PER_ORDER * len(accepted),
        )
        await api.call("POST", f"/v1/swaps/{swap['id']}/submit", body={"txHash": tx_hash})
        await self._seat.refresh_balances(chain_id)
        if not ok:
            log.warning("%s: swap %s reverted (%s)", self._seat.name, swap["id"], tx_hash)
            return None
        self.fills += 1
        log.info("%s: filled %d resting order(s) in %s", self._seat.name, len(accepted), tx_hash)
        return tx_hash

    async def _allow(self, chain: MakerChain, chain_id: int, token: str, reactor: str) -> None:
        """The reactor pulls what a taker pays with transferFrom: a max allowance, once."""
        key = (chain_id, token.lower())
        if key in self._allowed:
            return
        wallet = self._seat.wallet
        await ensure_max_allowance(chain, wallet.private_key, wallet.address, token, reactor)
        self._allowed.add(key)


def _terms(orders: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(o["maker"].lower(), o["sellAmount"], o["buyAmount"]) for o in orders]


class BookPoster:
    def __init__(self, seat: BookSeat, apis: Mapping[str, V1Api], rng: RandomLike) -> None:
        self._seat = seat
        self._apis = dict(apis)  # by environment
        self._rng = rng
        self.placed = 0  # orders it rested

    async def run(self) -> None:
        """Top up every `refresh_s`; the first round is `round()`, which the maker's start runs
        (so its orders rest before the start returns)."""
        while True:
            book = self._seat.config.book_orders
            await asyncio.sleep(book.refresh_s if book is not None else 5.0)
            await self.round()

    async def round(self) -> int:
        """One round: every BOOK direction of every ready chain topped up; how many orders it
        placed. A chain that fails is logged and left for the next round."""
        if self._seat.config.book_orders is None:
            return 0
        placed = 0
        for state in self._seat.ready_states():
            api = self._apis.get(_env(state) or "")
            if api is None or not state.info.book_pairs:
                continue
            try:
                placed += await self.top_up(state, api)
            except (aiohttp.ClientError, TimeoutError, ValueError, KeyError) as exc:
                log.info("%s: posting on %s failed: %r", self._seat.name, state, exc)
            except Exception:
                log.exception("%s: posting failed", self._seat.name)
        return placed

    async def top_up(self, state: ChainState, api: V1Api) -> int:
        """Rest orders until every BOOK direction holds `per_side` active ones; how many."""
        book = self._seat.config.book_orders
        if book is None:
            return 0
        chain_id = state.info.chain_id
        mine = await api.data(
            "GET",
            "/v1/limit-orders",
            params={"chainId": chain_id, "wallet": self._seat.wallet.address, "limit": 200},
        )
        if mine is None:
            return 0
        active: dict[tuple[str, str], int] = {}
        resting: dict[str, int] = {}  # what active orders may still take, by token sold
        for order in mine:
            if order["status"] == "ACTIVE":
                key = (order["sellToken"].lower(), order["buyToken"].lower())
                active[key] = active.get(key, 0) + 1
                sold = order["sellToken"].lower()
                resting[sold] = resting.get(sold, 0) + int(order["sellAmount"])
        placed = 0
        now: float | None = None  # the service's clock, read once the first order is due
        for pair in state.info.book_pairs:
            # The maker gives the pair's buyToken for its sellToken (maker-stream directions).
            have = active.get((pair.buy_token.lower(), pair.sell_token.lower()), 0)
            for level in range(have, book.per_side):
                if now is None:
                    now = await api.server_time()
                    if now is None:
                        return 0  # nothing placed yet: the first order waits for the clock
                amount = await self._place(state, pair, level, api, resting, int(now))
                if amount:
                    placed += 1
                    sold = pair.buy_token.lower()
                    resting[sold] = resting.get(sold, 0) + amount
        self.placed += placed
        return placed

    async def _place(
        self,
        state: ChainState,
        pair: WelcomePair,
        level: int,
        api: V1Api,
        resting: dict[str, int],
        now_s: int,
    ) -> int:
        """Rest one order at `level` of the ladder; the amount it sells (0: none placed). The
        maker's own resting orders count against its balance, so every one of them stays
        funded together (the book offers only what a maker can cover at once)."""
        book = self._seat.config.book_orders
        assert book is not None
        sells = state.tokens.get(pair.buy_token.lower())
        wants = state.tokens.get(pair.sell_token.lower())
        if sells is None or wants is None:
            return 0
        params = self._seat.pricing.params
        mid = params.mid(sells.symbol, wants.symbol)  # whole `wants` per whole `sells`
        usd = params.usd_price(sells.symbol)
        if mid is None or usd is None:
            return 0
        jitter = Fraction(Decimal(str(0.8 + 0.4 * self._rng.random())))
        sell_whole = Fraction(book.size_usd) * jitter / usd
        sell_amount = math.floor(sell_whole * 10**sells.decimals)
        ask = 1 + (Fraction(book.spread_bps) + level * Fraction(book.step_bps)) / 10_000
        buy_amount = math.ceil(sell_whole * mid * ask * 10**wants.decimals)
        available = self._seat.inventory(state.info.chain_id, pair.buy_token)
        available -= resting.get(pair.buy_token.lower(), 0)
        if sell_amount <= 0 or sell_amount > available:
            return 0
        prepared = await api.data(
            "POST",
            "/v1/limit-orders/prepare",
            body={
                "chainId": state.info.chain_id,
                "maker": self._seat.wallet.address,
                "sellToken": pair.buy_token,
                "sellAmount": str(sell_amount),
                "buyToken": pair.sell_token,
                "buyAmount": str(buy_amount),
                "deadline": now_s + book.ttl_s,
            },
        )
        if prepared is None:
            return 0
        order = prepared["order"]
        witness = prepared["typedData"]["message"]["witness"]
        if (
            order["maker"].lower() != self._seat.wallet.address.lower()
            or int(order["inputAmount"]) != sell_amount
            or int(order["outputAmount"]) != buy_amount
            or witness["taker"] != ZERO_ADDRESS
            or order["reactor"].lower() != state.info.reactor.lower()
        ):
            log.warning("%s: prepared order differs from the request; not signed", self._seat.name)
            return 0
        signed = Account.sign_message(
            encode_typed_data(full_message=prepared["typedData"]), self._seat.wallet.private_key
        )
        body = {**order, "signature": "0x" + bytes(signed.signature).hex()}
        placed = await api.data("POST", "/v1/limit-orders", body=body)
        return sell_amount if placed is not None else 0
