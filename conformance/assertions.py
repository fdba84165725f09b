"""What the service returned, checked against the spec: the exact field sets of the RFQ record,
its routing, a firm quote and its order entries; :func:`assert_firm_quote` checks a ``quoted``
answer field by field and against the signed orders it carries (decoded from ``encodedOrder``)
and returns a :class:`CheckedQuote`; :func:`assert_settled` checks a fill's exact on-chain
movements between two :class:`conformance.funding.Balances` snapshots (of the
:func:`settlement_holders`) and
:func:`assert_filled_record` the record of a filled RFQ. Beside them the wire readers and the
arithmetic the checks share: :func:`atomic`, :func:`iso_seconds`, :func:`fee_on` (5 bps),
:func:`rate_ray` and :func:`decode_swap`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address

from conformance.chain import erc20_approve, hex_bytes, selector
from conformance.funding import Balances
from conformance.response_checks import parse_iso_utc
from conformance.venue import ChainInfo
from contracts.orders import RfqOrder, decode_order

FEE_BPS = 5
BPS = 10_000

# Fields of the RFQ record (GET /v2/rfq/{id}).
RECORD_FIELDS = frozenset(
    {
        "rfqId",
        "status",
        "chainId",
        "sellToken",
        "buyToken",
        "sellAmount",
        "buyAmount",
        "feeAmount",
        "taker",
        "quoteTtlMs",
        "replyBy",
        "expiresAt",
        "noQuoteReason",
        "txHash",
        "submittedAt",
        "filledAt",
        "failReason",
        "routing",
        "createdAt",
    }
)
ROUTING_FIELDS = frozenset(
    {
        "preferenceApplied",
        "restrictionApplied",
        "fallbackUsed",
        "targetMakerWallets",
        "preferredQuotesReceived",
        "openMarketQuotesReceived",
    }
)
QUOTE_FIELDS = frozenset(
    {
        "sellAmount",
        "buyAmount",
        "feeAmount",
        "takerPays",
        "rateRay",
        "expiresAt",
        "orderDeadline",
        "latestOrderDeadline",
        "reactor",
        "spender",
        "taker",
        "encodedOrder",
        "signature",
        "orders",
    }
)
ORDER_ENTRY_FIELDS = frozenset(
    {"encodedOrder", "signature", "sellAmount", "buyAmount", "feeAmount", "maker"}
)


def fee_on(maker_receives: int) -> int:
    """The protocol fee on one order's maker output: 5 bps, rounded down."""
    return maker_receives * FEE_BPS // BPS


def iso_seconds(value: Any) -> float:
    return parse_iso_utc(value).timestamp()


RAY = 10**27
EXECUTE = selector("execute((bytes,bytes))")
EXECUTE_BATCH = selector("executeBatch((bytes,bytes)[])")
_ATOMIC = re.compile(r"^(0|[1-9][0-9]*)$")


def atomic(value: Any, what: str = "amount") -> int:
    """An amount on the wire: a base-10 string of atomic units, no decimals; its int."""
    assert isinstance(value, str), f"{what} is not a string: {value!r}"
    assert _ATOMIC.match(value), f"{what} is not atomic: {value!r}"
    return int(value)


def rate_ray(sell: int, sell_decimals: int, buy: int, buy_decimals: int) -> int:
    """Decimal-normalized buy-per-sell rate, RAY-scaled, rounded down."""
    rate: int = buy * RAY * 10**sell_decimals // (sell * 10**buy_decimals)
    return rate


def decode_swap(data: bytes) -> list[tuple[bytes, bytes]]:
    """The signed orders inside transactions.swap (reactor execute or executeBatch)."""
    if data[:4] == EXECUTE:
        (single,) = abi_decode(["(bytes,bytes)"], data[4:])
        return [(bytes(single[0]), bytes(single[1]))]
    assert data[:4] == EXECUTE_BATCH, f"swap is neither execute nor executeBatch: {data[:4]!r}"
    (batch,) = abi_decode(["(bytes,bytes)[]"], data[4:])
    return [(bytes(order), bytes(sig)) for order, sig in batch]


@dataclass(frozen=True)
class CheckedQuote:
    """A firm quote after :func:`assert_firm_quote`: its orders decoded."""

    data: dict[str, Any]
    orders: list[RfqOrder]

    @property
    def quote(self) -> dict[str, Any]:
        quote: dict[str, Any] = self.data["quote"]
        return quote

    @property
    def taker_pays(self) -> int:
        return int(self.quote["takerPays"])

    @property
    def buy_amount(self) -> int:
        return int(self.quote["buyAmount"])

    @property
    def fee_amount(self) -> int:
        return int(self.quote["feeAmount"])

    @property
    def makers(self) -> list[str]:
        return [o.maker for o in self.orders]


def assert_firm_quote(
    chain: ChainInfo,
    data: Mapping[str, Any],
    *,
    sell: str,
    buy: str,
    taker: str,
    sell_amount: int | None = None,
    buy_amount: int | None = None,
) -> CheckedQuote:
    """Check a ``quoted`` answer of POST /v2/rfq/request against the spec, field by field, and
    against the signed orders it carries (decoded from encodedOrder). ``sell``/``buy`` are
    token symbols; exactly one of ``sell_amount`` / ``buy_amount`` is the request's size."""
    assert data.get("status") == "quoted", data
    assert {"rfqId", "claimToken", "status", "quote", "transactions", "routing"} <= set(data), (
        sorted(data)
    )
    assert str(data["rfqId"]).startswith("rfq_"), data["rfqId"]
    assert str(data["claimToken"]).startswith("rfqc_"), data["claimToken"]
    assert set(data["routing"]) >= ROUTING_FIELDS, data["routing"]
    quote = data["quote"]
    assert set(quote) >= QUOTE_FIELDS, sorted(set(quote) ^ QUOTE_FIELDS)
    sell_token, buy_token = chain.token(sell), chain.token(buy)
    reactor = chain.reactor
    for name in ("sellAmount", "buyAmount", "feeAmount", "takerPays", "rateRay"):
        atomic(quote[name], f"quote.{name}")
    assert quote["reactor"] == reactor, (quote["reactor"], reactor)
    assert quote["spender"] == reactor, "no vault orders here: the spender is the reactor"
    assert quote["taker"] == to_checksum_address(taker), (quote["taker"], taker)

    entries = quote["orders"]
    assert isinstance(entries, list), quote
    assert entries, quote
    orders: list[RfqOrder] = []
    for entry in entries:
        assert set(entry) >= ORDER_ENTRY_FIELDS, sorted(entry)
        order = decode_order(hex_bytes(entry["encodedOrder"]))
        orders.append(order)
        assert order.reactor == reactor, order
        assert order.taker == to_checksum_address(taker), "the order is bound to the taker"
        assert order.maker == entry["maker"], (order.maker, entry["maker"])
        assert order.inputToken == buy_token.address, "the maker gives the buy token"
        assert order.outputToken == sell_token.address, "the maker receives the sell token"
        assert atomic(entry["buyAmount"]) == order.inputAmount, entry
        assert atomic(entry["feeAmount"]) == order.feeAmount, (entry, order)
        if chain.fee_bps is not None:  # the corridor's fee, when the target's info names it
            assert order.feeAmount == order.outputAmount * chain.fee_bps // BPS, (
                f"fee must be {chain.fee_bps} bps of the maker output, rounded down: {order!r}"
            )
        assert atomic(entry["sellAmount"]) == order.outputAmount + order.feeAmount, entry
        assert len(hex_bytes(entry["signature"])) == 65, entry["signature"]
    assert quote["encodedOrder"] == entries[0]["encodedOrder"], "first order only"
    assert quote["signature"] == entries[0]["signature"], "first order only"

    taker_pays = int(quote["takerPays"])
    bought = int(quote["buyAmount"])
    assert bought == sum(o.inputAmount for o in orders), "buyAmount = what the makers give"
    assert int(quote["feeAmount"]) == sum(o.feeAmount for o in orders), "fee = sum of orders'"
    assert taker_pays == sum(o.outputAmount + o.feeAmount for o in orders), (
        "takerPays = every order's output plus its fee"
    )
    if sell_amount is not None:
        assert int(quote["sellAmount"]) == sell_amount, "exact input: sellAmount is the request"
        assert taker_pays <= sell_amount, "takerPays never exceeds the requested sellAmount"
        assert sell_amount - taker_pays <= 2 * len(orders) + 1, (
            f"takerPays {taker_pays} sits more than an atomic unit or so under {sell_amount}"
        )
    if buy_amount is not None:
        assert bought == buy_amount, "exact output: buyAmount is exactly the request"
        assert taker_pays <= int(quote["sellAmount"]), quote
    assert int(quote["rateRay"]) == rate_ray(
        taker_pays, sell_token.decimals, bought, buy_token.decimals
    ), "rateRay = buy per sell (decimal-normalized), RAY-scaled"

    expires = iso_seconds(quote["expiresAt"])
    deadline = iso_seconds(quote["orderDeadline"])
    latest = iso_seconds(quote["latestOrderDeadline"])
    assert deadline == min(o.deadline for o in orders), (quote["orderDeadline"], orders)
    assert latest == max(o.deadline for o in orders), (quote["latestOrderDeadline"], orders)
    assert expires <= deadline <= latest, quote
    if len({o.maker for o in orders}) == 1 and len(orders) == 1:
        assert quote["latestOrderDeadline"] == quote["orderDeadline"], quote

    transactions = data["transactions"]
    assert {"approval", "swap"} <= set(transactions), transactions
    for tx in transactions.values():
        assert {"to", "data", "value", "chainId"} <= set(tx), tx
        assert tx["value"] == "0", tx
        assert tx["chainId"] == chain.chain_id, tx
    approval = transactions["approval"]
    assert approval["to"] == sell_token.address, approval
    assert hex_bytes(approval["data"]) == erc20_approve(reactor, taker_pays), (
        "approval approves takerPays of the sell token to the reactor"
    )
    swap = transactions["swap"]
    assert swap["to"] == reactor, swap
    signed = decode_swap(hex_bytes(swap["data"]))
    assert signed == [(hex_bytes(e["encodedOrder"]), hex_bytes(e["signature"])) for e in entries], (
        "transactions.swap executes every order of the quote"
    )
    if len(orders) > 1:
        assert hex_bytes(swap["data"])[:4] == EXECUTE_BATCH, "a bundle is one batch execution"
    return CheckedQuote(dict(data), orders)


def settlement_holders(chain: ChainInfo, taker: str, data: dict[str, Any]) -> list[str]:
    """The addresses a fill of the quote in ``data`` moves tokens between: the taker, the fee
    recipient and every maker of its orders (what to snapshot before executing it)."""
    makers = [o["maker"] for o in data["quote"]["orders"]]
    recipient = chain.contracts.get("fee_recipient")  # unknown on a venue that hides it
    return [taker, *([recipient] if recipient else []), *makers]


def assert_settled(
    before: Balances,
    after: Balances,
    chain: ChainInfo,
    checked: CheckedQuote,
    *,
    taker: str,
    sell: str,
    buy: str,
) -> None:
    """Exact on-chain movements of a filled quote: the taker paid takerPays and received
    buyAmount, each maker received its orders' outputs and gave their inputs, and the fee
    recipient received the fee."""
    sell_address, buy_address = chain.token(sell).address, chain.token(buy).address
    assert before.delta(after, sell_address, taker) == -checked.taker_pays, "taker paid"
    assert before.delta(after, buy_address, taker) == checked.buy_amount, "taker received"
    recipient = chain.contracts.get("fee_recipient")
    if recipient:
        assert before.delta(after, sell_address, recipient) == checked.fee_amount, "fee"
        assert before.delta(after, buy_address, recipient) == 0, "fee is in the sell token"
    for maker in dict.fromkeys(checked.makers):
        mine = [o for o in checked.orders if o.maker == maker]
        assert before.delta(after, sell_address, maker) == sum(o.outputAmount for o in mine)
        assert before.delta(after, buy_address, maker) == -sum(o.inputAmount for o in mine)


def assert_filled_record(
    record: Mapping[str, Any], checked: CheckedQuote, *, tx_hash: str | None = None
) -> None:
    """GET /v2/rfq/{id} of a filled RFQ: the settled amounts, the fill's hash, no secrets."""
    assert set(record) >= RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)
    assert record["status"] == "filled", record
    assert record["rfqId"] == checked.data["rfqId"], record
    assert record["sellAmount"] == str(checked.taker_pays), "sellAmount = what left the taker"
    assert record["buyAmount"] == str(checked.buy_amount), "buyAmount = what the taker received"
    assert record["feeAmount"] == str(checked.fee_amount), "feeAmount = what the fee took"
    assert record["failReason"] is None, record
    parse_iso_utc(record["filledAt"])
    if tx_hash is not None:
        assert str(record["txHash"]).lower() == tx_hash.lower(), (record["txHash"], tx_hash)
