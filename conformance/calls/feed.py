"""The public rates feed read the way a price aggregator reads it (spec 3 "Rates feed"): plain
GETs without a key, every success checked for its transport rules (CORS open, a short public
cache, a request id) and every error for the feed's own `{error: "<string>"}` body; history paged
back by `end_time` and deduplicated by `trade_id`. The bodies' shapes (:func:`assert_pairs`,
:func:`assert_tickers`, :func:`assert_trades`) and the transport rules
(:func:`assert_feed_transport`, :func:`assert_feed_error_body`) need only the answer, so the
watching proxy runs them too. Beside the reader, what a test needs to put
trades on the tape without the RFQ API: :class:`DirectMaker` signs its own orders exactly as
makers do and a taker executes them on the reactor (one order, or several in one transaction),
and :func:`fill_logs` reads the reactor's Fill events back from a receipt, the ground truth the
feed's trades are checked against.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from conformance.deployment.funding import fund_wallet
from conformance.deployment.venue import Token, VenueChain
from conformance.wire.chain import WAIT_TIMEOUT, calldata, wait_for
from conformance.wire.client import Client, Response
from conformance.wire.wording import shown
from contracts.orders import RfqOrder, encode_order, sign_order
from rfqkit.wallets import Wallet

TICKER_FIELDS = frozenset(
    {
        "ticker_id",
        "base_currency",
        "target_currency",
        "last_price",
        "bid",
        "ask",
        "high",
        "low",
        "base_volume",
        "target_volume",
    }
)
TICKER_NUMBERS = TICKER_FIELDS - {"ticker_id", "base_currency", "target_currency"}
TRADE_FIELDS = frozenset(
    {"trade_id", "price", "base_volume", "target_volume", "trade_timestamp", "type"}
)
# The feed's numbers: decimal strings in plain notation (no exponent, no sign).
DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
TRADE_ID = re.compile(r"^0x[0-9a-f]{64}-[0-9]+$")
FILL_TOPIC = (
    "0x"
    + keccak(text="Fill(bytes32,address,address,address,uint256,address,uint256,uint256)").hex()
)
EXACT = Context(prec=160)
PRICE_PLACES = Decimal(1).scaleb(-18)
# What the simulator publishes the naira stablecoin as (spec: "published as NGN").
PUBLISHED = {"NGNS": "NGN"}


# -- reading ------------------------------------------------------------------------------


def number(value: Any, what: str = "number") -> Decimal:
    """A feed number: a decimal string; its value."""
    assert isinstance(value, str), f"{what}: expected a plain decimal string, got {shown(value)}"
    assert DECIMAL.match(value), f"{what}: expected a plain decimal string, got {shown(value)}"
    return Decimal(value)


def assert_feed_ok(resp: Response) -> Any:
    """A feed success: 200, JSON, CORS open, publicly cacheable for a few seconds, an id."""
    assert resp.status == 200, resp.describe()
    assert_feed_transport(resp)
    return resp.json()


def assert_feed_transport(resp: Response) -> None:
    """What every feed success carries: CORS open, a public cache of a few seconds, an id,
    and no per-key limiter headers (no key)."""
    assert resp.headers.get("Access-Control-Allow-Origin") == "*", resp.headers
    cache = resp.headers.get("Cache-Control") or ""
    match = re.fullmatch(r"public, max-age=([0-9]+)", cache)
    assert match, f"Cache-Control: {shown(cache)}"
    assert 1 <= int(match.group(1)) <= 10, "cached for a few seconds"
    assert resp.request_id, "X-Request-Id on every response"
    assert "X-RateLimit-Limit" not in resp.headers, "no key, no per-key limiter"


def assert_feed_error(resp: Response, status: int) -> str:
    """A feed error: exactly `{error: "<string>"}` with the status, never the v2 envelope."""
    assert resp.status == status, resp.describe()
    return assert_feed_error_body(resp)


def assert_feed_error_body(resp: Response) -> str:
    """Whatever the status: exactly `{error: "<string>"}`, an id, CORS open."""
    body = resp.json()
    assert isinstance(body, dict), body
    assert set(body) == {"error"}, f"not the feed's error body: {shown(body)}"
    assert isinstance(body["error"], str), (
        f"error is not a string (the v2 envelope?): {shown(body)}"
    )
    assert body["error"].strip(), body
    assert resp.request_id, "X-Request-Id on every response"
    assert resp.headers.get("Access-Control-Allow-Origin") == "*", resp.headers
    return str(body["error"])


def assert_pairs(pairs: Any) -> None:
    """GET /pairs: an array of {ticker_id, base, target}, ticker_id BASE_TARGET."""
    assert isinstance(pairs, list), pairs
    for pair in pairs:
        assert {"ticker_id", "base", "target"} <= set(pair), pair
        assert pair["ticker_id"] == f"{pair['base']}_{pair['target']}", pair


def assert_tickers(tickers: Any) -> None:
    """GET /tickers: an array of tickers with every field, numbers as decimal strings, and
    the relations between one ticker's own fields that the spec implies (below)."""
    assert_ticker_shapes(tickers)
    for ticker in tickers:
        assert_ticker_sides(ticker)
        assert_ticker_range(ticker)


def assert_ticker_shapes(tickers: Any) -> None:
    assert isinstance(tickers, list), tickers
    for ticker in tickers:
        assert set(ticker) >= TICKER_FIELDS, sorted(set(ticker) ^ TICKER_FIELDS)
        assert ticker["ticker_id"] == f"{ticker['base_currency']}_{ticker['target_currency']}"
        for name in TICKER_NUMBERS:
            number(ticker[name], f"{ticker['ticker_id']}.{name}")


def _ticker_number(ticker: Mapping[str, Any], name: str) -> Decimal:
    return number(ticker[name], f"{ticker['ticker_id']}.{name}")


def assert_ticker_sides(ticker: Mapping[str, Any]) -> None:
    """bid (selling the base) is not above ask (buying it) when both sides quote: both are
    what a trade of the same size clears at, net of fees ("GET /tickers" bid and ask)."""
    bid, ask = _ticker_number(ticker, "bid"), _ticker_number(ticker, "ask")
    if bid > 0 and ask > 0:
        assert bid <= ask, (
            f"{ticker['ticker_id']}: bid {ticker['bid']} is above ask {ticker['ask']}: selling "
            "the base clears above buying it (the sides inverted?)"
        )


def assert_ticker_range(ticker: Mapping[str, Any]) -> None:
    """low <= last_price <= high: the lowest, most recent and highest cleared price of the
    same 24 h (or, with no trade, the one reference for all three)."""
    low, last, high = (_ticker_number(ticker, n) for n in ("low", "last_price", "high"))
    assert low <= last <= high, (
        f"{ticker['ticker_id']}: expected low <= last_price <= high, got low {ticker['low']}, "
        f"last_price {ticker['last_price']}, high {ticker['high']}"
    )


def assert_trades(body: Any) -> None:
    """GET /historical_trades: {buy, sell}, each newest first, every trade with its fields,
    its side as type, trade_id `<tx hash>-<log index>`, trade_timestamp in Unix seconds."""
    assert isinstance(body, dict), body
    assert {"buy", "sell"} <= set(body), body
    for side in ("buy", "sell"):
        stamps = [t["trade_timestamp"] for t in body[side]]
        assert stamps == sorted(stamps, reverse=True), f"{side} is not newest first: {stamps}"
        for trade in body[side]:
            assert set(trade) >= TRADE_FIELDS, sorted(set(trade) ^ TRADE_FIELDS)
            assert trade["type"] == side, trade
            assert TRADE_ID.match(trade["trade_id"]), trade
            assert isinstance(trade["trade_timestamp"], int), trade
            assert trade["trade_timestamp"] < 10**11, "Unix seconds, not milliseconds"
            for name in ("price", "base_volume", "target_volume"):
                number(trade[name], name)


def get_pairs(client: Client) -> list[dict[str, Any]]:
    pairs = assert_feed_ok(client.get("/pairs"))
    assert_pairs(pairs)
    return list(pairs)


def get_tickers(client: Client, **params: Any) -> list[dict[str, Any]]:
    tickers = assert_feed_ok(client.get("/tickers", params=params or None))
    assert_tickers(tickers)
    return list(tickers)


def get_ticker(client: Client, ticker_id: str) -> dict[str, Any]:
    (ticker,) = get_tickers(client, ticker_id=ticker_id)
    assert ticker["ticker_id"] == ticker_id, ticker
    return ticker


def get_trades(client: Client, ticker_id: str, **params: Any) -> dict[str, list[dict[str, Any]]]:
    body = assert_feed_ok(
        client.get("/historical_trades", params={"ticker_id": ticker_id, **params})
    )
    assert_trades(body)
    return {"buy": list(body["buy"]), "sell": list(body["sell"])}


def oldest(page: Mapping[str, Sequence[Mapping[str, Any]]]) -> int | None:
    stamps = [t["trade_timestamp"] for side in ("buy", "sell") for t in page[side]]
    return min(stamps) if stamps else None


@dataclass
class Ingested:
    """What an aggregator's ingestion of one pair collected, paging back."""

    trades: dict[str, dict[str, Any]]  # by trade_id: the dedupe key
    pages: list[dict[str, list[dict[str, Any]]]]
    duplicates: int  # trade ids met again on a later page (0 when paging is right)


def page_back(
    client: Client, ticker_id: str, *, limit: int, max_pages: int = 400, **params: Any
) -> Ingested:
    """Request pages with end_time = the oldest trade_timestamp of the last page - 1 until a page
    is empty (or, with a start_time, until end_time would fall before it: start_time after
    end_time is a 400); dedupe by trade_id as an aggregator does (and count what dedupe had to
    drop)."""
    seen: dict[str, dict[str, Any]] = {}
    pages: list[dict[str, list[dict[str, Any]]]] = []
    duplicates = 0
    end: int | None = params.pop("end_time", None)
    start: int | None = params.get("start_time")
    for _ in range(max_pages):
        if start is not None and end is not None and end < start:
            return Ingested(seen, pages, duplicates)
        query = {**params, "limit": limit}
        if end is not None:
            query["end_time"] = end
        page = get_trades(client, ticker_id, **query)
        low = oldest(page)
        if low is None:
            return Ingested(seen, pages, duplicates)
        pages.append(page)
        for trade in page["buy"] + page["sell"]:
            if trade["trade_id"] in seen:
                duplicates += 1
            seen[trade["trade_id"]] = trade
        end = low - 1
    raise AssertionError(f"paging back {ticker_id} did not end after {max_pages} pages")


def wait_trades(
    client: Client,
    ticker_id: str,
    trade_ids: Iterable[str],
    *,
    timeout: float = WAIT_TIMEOUT,
    **params: Any,
) -> dict[str, dict[str, Any]]:
    """Poll /historical_trades until every id is on the page; the trades by id."""
    wanted = set(trade_ids)

    def probe() -> dict[str, dict[str, Any]] | None:
        page = get_trades(client, ticker_id, limit=1000, **params)
        found = {t["trade_id"]: t for t in page["buy"] + page["sell"] if t["trade_id"] in wanted}
        return found if len(found) == len(wanted) else None

    return wait_for(probe, timeout=timeout, interval=0.25, what=f"{sorted(wanted)} in the feed")


def published(symbol: str) -> str:
    return PUBLISHED.get(symbol, symbol)


def price(target: int, target_decimals: int, base: int, base_decimals: int) -> str:
    """Target per base from atomic amounts, as the feed writes it: 18 places, half-even, no
    trailing zeros."""
    value = EXACT.divide(
        Decimal(target).scaleb(-target_decimals, context=EXACT),
        Decimal(base).scaleb(-base_decimals, context=EXACT),
    ).quantize(PRICE_PLACES, ROUND_HALF_EVEN, context=EXACT)
    return whole_string(value)


def volume(amount: int, decimals: int) -> str:
    return whole_string(Decimal(amount).scaleb(-decimals, context=EXACT))


def whole_string(value: Decimal) -> str:
    if not value:
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# -- fills on chain -----------------------------------------------------------------------


@dataclass(frozen=True)
class FillLog:
    """One reactor Fill event: one filled order, as the chain recorded it."""

    tx_hash: str
    log_index: int
    block_number: int
    order_hash: str
    maker: str
    taker: str
    input_token: str  # the maker gave, the taker received
    input_amount: int
    output_token: str  # the maker received; the taker paid it plus the fee
    output_amount: int
    fee_amount: int

    @property
    def trade_id(self) -> str:
        return f"{self.tx_hash}-{self.log_index}"


def fill_logs(receipt: Mapping[str, Any], reactor: str) -> list[FillLog]:
    """The reactor's Fill events in a receipt, in log order."""
    out: list[FillLog] = []
    for entry in receipt.get("logs") or []:
        if entry["address"].lower() != reactor.lower() or entry["topics"][0] != FILL_TOPIC:
            continue
        input_token, input_amount, output_token, output_amount, fee = abi_decode(
            ["address", "uint256", "address", "uint256", "uint256"],
            bytes.fromhex(entry["data"][2:]),
        )
        out.append(
            FillLog(
                tx_hash=str(entry["transactionHash"]).lower(),
                log_index=int(entry["logIndex"], 16),
                block_number=int(entry["blockNumber"], 16),
                order_hash=entry["topics"][1],
                maker=to_checksum_address("0x" + entry["topics"][2][-40:]),
                taker=to_checksum_address("0x" + entry["topics"][3][-40:]),
                input_token=to_checksum_address(input_token),
                input_amount=input_amount,
                output_token=to_checksum_address(output_token),
                output_amount=output_amount,
                fee_amount=fee,
            )
        )
    return out


def block_time(chain: VenueChain, receipt: Mapping[str, Any]) -> int:
    block = chain.rpc().rpc("eth_getBlockByNumber", [receipt["blockNumber"], False])
    return int(block["timestamp"], 16)


@dataclass(frozen=True)
class Leg:
    """One order of a direct fill: the maker gives `gives` of `give`, receives `gets` of `get`."""

    give: Token
    gives: int
    get: Token
    gets: int


class DirectMaker:
    """A maker of the test's own, outside the maker stream: a funded wallet that approved the
    signature-transfer contract and signs RFQ orders bound to one taker, exactly as makers do
    (contracts/orders.py). The service never sees these orders quoted."""

    def __init__(self, chain: VenueChain, source: Wallet, tokens: Mapping[str, int]) -> None:
        self.chain = chain
        self.wallet = fund_wallet(chain, source, tokens)
        node = chain.rpc()
        for token in tokens:
            node.approve(self.wallet, token, chain.contracts["signature_transfer"], 2**256 - 1)

    def order(self, taker: str, leg: Leg, deadline: int) -> tuple[bytes, bytes]:
        fee = leg.gets * 5 // 10_000  # the venue's fee rule: 5 bps of the maker's output
        order = RfqOrder(
            reactor=self.chain.reactor,
            maker=self.wallet.address,
            taker=taker,
            inputToken=leg.give.address,
            inputAmount=leg.gives,
            outputToken=leg.get.address,
            outputAmount=leg.gets,
            feeAmount=fee,
            nonce=secrets.randbits(248),
            deadline=deadline,
        )
        signature = sign_order(
            self.wallet.private_key,
            order,
            self.chain.chain_id,
            self.chain.contracts["signature_transfer"],
        )
        return encode_order(order), signature

    def fill(self, taker: Wallet, legs: Sequence[Leg]) -> dict[str, Any]:
        """The taker approves what it pays and executes the orders on the reactor itself: one
        `execute`, or one `executeBatch` for several legs (one transaction). The receipt."""
        node = self.chain.rpc()
        deadline = node.block_timestamp() + 600
        signed = [self.order(taker.address, leg, deadline) for leg in legs]
        owed: dict[str, int] = {}
        for leg in legs:
            owed[leg.get.address] = owed.get(leg.get.address, 0) + leg.gets + leg.gets * 5 // 10_000
        for token, amount in owed.items():
            usdt_like = any(t.usdt_like and t.address == token for t in self.chain.tokens.values())
            if usdt_like and node.allowance(token, taker.address, self.chain.reactor):
                node.approve(taker, token, self.chain.reactor, 0)
            node.approve(taker, token, self.chain.reactor, amount)
        if len(signed) == 1:
            data = calldata("execute((bytes,bytes))", ["(bytes,bytes)"], [signed[0]])
        else:
            data = calldata("executeBatch((bytes,bytes)[])", ["(bytes,bytes)[]"], [signed])
        return node.transact(taker, self.chain.reactor, data)
