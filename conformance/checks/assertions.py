"""What the service returned, checked against the spec: the exact field sets of the RFQ record,
its routing, a firm quote and its order entries; :func:`assert_firm_quote` checks a ``quoted``
answer field by field and against the signed orders it carries (decoded from ``encodedOrder``)
and returns a :class:`CheckedQuote`, made of ``assert_quote_*`` parts that need only the
request's :class:`QuoteTerms` and the answer (so a watching proxy runs them too);
:func:`assert_settled` checks a fill's exact on-chain movements between two
:class:`conformance.deployment.funding.Balances` snapshots of the taker (the fee recipient's
and the makers' movements are read from the fill's own logs) and
:func:`assert_filled_record` the record of a filled RFQ. Beside them the wire readers and the
arithmetic the checks share: :func:`atomic`, :func:`iso_seconds`, :func:`fee_on` (5 bps),
:func:`rate_ray` and :func:`decode_swap`; :func:`iso_seconds` and :func:`same_instant` live in
:mod:`conformance.wire.response_checks` and are importable from here too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode as abi_decode

from conformance.checks.stable_reads import CREATION, TWO_READS, assert_stable
from conformance.deployment.funding import Balances
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import erc20_approve, hex_bytes, selector, token_delta
from conformance.wire.response_checks import iso_seconds as iso_seconds
from conformance.wire.response_checks import parse_iso_utc
from conformance.wire.response_checks import same_instant as same_instant
from conformance.wire.wording import shown
from contracts.orders import RfqOrder, checksum_address, decode_order

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


def assert_same_creation(identity: str, first: str, again: str) -> None:
    """Two reads of one record show one creation instant: :func:`assert_stable` on createdAt
    alone (the watching proxy's read-twice check says it in these words)."""
    assert_stable(CREATION, identity, {"createdAt": first}, {"createdAt": again}, what=TWO_READS)


RAY = 10**27
EXECUTE = selector("execute((bytes,bytes))")
EXECUTE_BATCH = selector("executeBatch((bytes,bytes)[])")
_ATOMIC = re.compile(r"^(0|[1-9][0-9]*)$")


def atomic(value: Any, what: str = "amount") -> int:
    """An amount on the wire: a base-10 string of atomic units, no decimals; its int."""
    assert isinstance(value, str), (
        f"{what}: expected a base-10 string of atomic units, got {shown(value)}"
    )
    assert _ATOMIC.match(value), (
        f"{what}: expected a base-10 string of atomic units, got {shown(value)}"
    )
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
    assert data[:4] == EXECUTE_BATCH, f"swap is neither execute nor executeBatch: {shown(data[:4])}"
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


@dataclass(frozen=True)
class QuoteTerms:
    """What a firm quote is checked against, as the request named it: the chain, the token
    addresses, the taker and the one exact size (``sell_amount`` for exact input,
    ``buy_amount`` for exact output); the tokens' decimals when known (for rateRay)."""

    chain_id: int
    sell_token: str
    buy_token: str
    taker: str
    sell_amount: int | None = None
    buy_amount: int | None = None
    decimals: tuple[int, int] | None = None  # (sell token, buy token)


def assert_firm_quote(
    chain: VenueChain,
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
    token symbols; exactly one of ``sell_amount`` / ``buy_amount`` is the request's size.
    The parts that need nothing but the request and the answer are the ``assert_quote_*``
    functions below (what a watching proxy can check); the rest needs the venue."""
    sell_token, buy_token = chain.token(sell), chain.token(buy)
    terms = QuoteTerms(
        chain.chain_id,
        sell_token.address,
        buy_token.address,
        taker,
        sell_amount,
        buy_amount,
        (sell_token.decimals, buy_token.decimals),
    )
    assert_quote_fields(data)
    assert_quote_claim_token(data)
    quote = data["quote"]
    assert_quote_amounts(quote)
    reactor = chain.reactor
    assert quote["reactor"] == reactor, (quote["reactor"], reactor)
    assert quote["spender"] == reactor, "no vault orders here: the spender is the reactor"
    orders = assert_quote_orders(quote, terms)
    if chain.fee_bps is not None:  # the corridor's fee, when the target's info names it
        for order in orders:
            assert order.feeAmount == order.outputAmount * chain.fee_bps // BPS, (
                f"fee must be {chain.fee_bps} bps of the maker output, rounded down: {shown(order)}"
            )
    assert_quote_totals(quote, orders)
    assert_quote_meets_request(quote, orders, terms)
    assert_quote_rate(quote, terms)
    assert_quote_deadlines(quote, orders)
    assert_quote_expiry(quote)
    assert_quote_transactions(data, terms)
    assert_quote_approval(data, terms)
    assert_quote_swap(data, orders)
    return CheckedQuote(dict(data), orders)


def assert_quote_fields(data: Mapping[str, Any]) -> None:
    """A firm quote's members (the claim token is :func:`assert_quote_claim_token`)."""
    assert data.get("status") == "quoted", data
    assert {"rfqId", "status", "quote", "transactions", "routing"} <= set(data), sorted(data)
    assert str(data["rfqId"]).startswith("rfq_"), data["rfqId"]
    assert set(data["routing"]) >= ROUTING_FIELDS, data["routing"]
    quote = data["quote"]
    assert set(quote) >= QUOTE_FIELDS, sorted(set(quote) ^ QUOTE_FIELDS)


def assert_quote_claim_token(data: Mapping[str, Any]) -> None:
    """A firm quote (or a no-quote) carries its claim token, prefix ``rfqc_``."""
    assert "claimToken" in data, f"no claimToken in the answer: {sorted(data)}"
    assert str(data["claimToken"]).startswith("rfqc_"), data["claimToken"]


def assert_quote_amounts(quote: Mapping[str, Any]) -> None:
    """The quote's amounts and rate are base-10 strings of atomic units."""
    for name in ("sellAmount", "buyAmount", "feeAmount", "takerPays", "rateRay"):
        atomic(quote[name], f"quote.{name}")


def assert_quote_orders(quote: Mapping[str, Any], terms: QuoteTerms) -> list[RfqOrder]:
    """Each entry of quote.orders against the signed order it carries: bound to the quote's
    reactor and the taker, the maker gives the buy token and receives the sell token, the
    entry's amounts are the order's; the top-level encodedOrder/signature are the first
    order's. Returns the decoded orders."""
    reactor = checksum_address(quote["reactor"])
    taker = checksum_address(terms.taker)
    assert quote["taker"] == taker, (quote["taker"], terms.taker)
    entries = quote["orders"]
    assert isinstance(entries, list), quote
    assert entries, quote
    orders: list[RfqOrder] = []
    for entry in entries:
        assert set(entry) >= ORDER_ENTRY_FIELDS, sorted(entry)
        order = decode_order(hex_bytes(entry["encodedOrder"]))
        orders.append(order)
        assert order.reactor == reactor, order
        assert order.taker == taker, "the order is bound to the taker"
        assert order.maker == entry["maker"], (order.maker, entry["maker"])
        assert order.inputToken == checksum_address(terms.buy_token), (
            "the maker gives the buy token"
        )
        assert order.outputToken == checksum_address(terms.sell_token), (
            "the maker receives the sell token"
        )
        assert atomic(entry["buyAmount"]) == order.inputAmount, entry
        assert atomic(entry["feeAmount"]) == order.feeAmount, (entry, order)
        assert atomic(entry["sellAmount"]) == order.outputAmount + order.feeAmount, entry
        assert len(hex_bytes(entry["signature"])) == 65, entry["signature"]
    assert quote["encodedOrder"] == entries[0]["encodedOrder"], "first order only"
    assert quote["signature"] == entries[0]["signature"], "first order only"
    return orders


def assert_quote_totals(quote: Mapping[str, Any], orders: list[RfqOrder]) -> None:
    """buyAmount, feeAmount and takerPays are the sums over the signed orders: the fee is
    inside takerPays."""
    bought = int(quote["buyAmount"])
    assert bought == sum(o.inputAmount for o in orders), "buyAmount = what the makers give"
    assert int(quote["feeAmount"]) == sum(o.feeAmount for o in orders), "fee = sum of orders'"
    assert int(quote["takerPays"]) == sum(o.outputAmount + o.feeAmount for o in orders), (
        "takerPays = every order's output plus its fee"
    )


def assert_quote_meets_request(
    quote: Mapping[str, Any], orders: list[RfqOrder], terms: QuoteTerms
) -> None:
    """Exact input: sellAmount is the request's and takerPays never exceeds it (an atomic
    unit or so under); exact output: buyAmount is exactly the request's."""
    taker_pays = int(quote["takerPays"])
    sell_amount, buy_amount = terms.sell_amount, terms.buy_amount
    if sell_amount is not None:
        assert int(quote["sellAmount"]) == sell_amount, "exact input: sellAmount is the request"
        assert taker_pays <= sell_amount, "takerPays never exceeds the requested sellAmount"
        assert sell_amount - taker_pays <= 2 * len(orders) + 1, (
            f"takerPays {taker_pays} sits more than an atomic unit or so under {sell_amount}"
        )
    if buy_amount is not None:
        assert int(quote["buyAmount"]) == buy_amount, (
            "exact output: buyAmount is exactly the request"
        )
        assert taker_pays <= int(quote["sellAmount"]), quote


def assert_quote_rate(quote: Mapping[str, Any], terms: QuoteTerms) -> None:
    """rateRay = buy per sell, decimal-normalized, RAY-scaled (needs the tokens' decimals)."""
    if terms.decimals is None:
        return
    sell_decimals, buy_decimals = terms.decimals
    assert int(quote["rateRay"]) == rate_ray(
        int(quote["takerPays"]), sell_decimals, int(quote["buyAmount"]), buy_decimals
    ), "rateRay = buy per sell (decimal-normalized), RAY-scaled"


def assert_quote_deadlines(quote: Mapping[str, Any], orders: list[RfqOrder]) -> None:
    """orderDeadline is the earliest signed order's deadline, latestOrderDeadline the last
    one's (the same for a one-maker quote)."""
    deadline = iso_seconds(quote["orderDeadline"])
    latest = iso_seconds(quote["latestOrderDeadline"])
    assert deadline == min(o.deadline for o in orders), (quote["orderDeadline"], orders)
    assert latest == max(o.deadline for o in orders), (quote["latestOrderDeadline"], orders)
    assert deadline <= latest, quote
    if len({o.maker for o in orders}) == 1 and len(orders) == 1:
        assert quote["latestOrderDeadline"] == quote["orderDeadline"], quote


def assert_quote_expiry(quote: Mapping[str, Any]) -> None:
    """expiresAt, the accept cutoff, comes no later than orderDeadline."""
    assert iso_seconds(quote["expiresAt"]) <= iso_seconds(quote["orderDeadline"]), quote


def assert_quote_transactions(data: Mapping[str, Any], terms: QuoteTerms) -> None:
    """transactions.approval and .swap are unsigned transactions: to, data, value ``0`` and
    the request's chainId."""
    transactions = data["transactions"]
    assert {"approval", "swap"} <= set(transactions), transactions
    for tx in transactions.values():
        assert {"to", "data", "value", "chainId"} <= set(tx), tx
        assert tx["value"] == "0", tx
        assert tx["chainId"] == terms.chain_id, tx


def assert_quote_approval(data: Mapping[str, Any], terms: QuoteTerms) -> None:
    """transactions.approval approves takerPays of the sell token to quote.reactor."""
    quote, approval = data["quote"], data["transactions"]["approval"]
    assert checksum_address(approval["to"]) == checksum_address(terms.sell_token), approval
    assert hex_bytes(approval["data"]) == erc20_approve(
        checksum_address(quote["reactor"]), int(quote["takerPays"])
    ), "approval approves takerPays of the sell token to the reactor"


def assert_quote_swap(data: Mapping[str, Any], orders: list[RfqOrder]) -> None:
    """transactions.swap calls quote.reactor and executes every order of the quote (one batch
    execution for a bundle)."""
    quote, swap = data["quote"], data["transactions"]["swap"]
    assert swap["to"] == quote["reactor"], swap
    entries = quote["orders"]
    signed = decode_swap(hex_bytes(swap["data"]))
    assert signed == [(hex_bytes(e["encodedOrder"]), hex_bytes(e["signature"])) for e in entries], (
        "transactions.swap executes every order of the quote"
    )
    if len(orders) > 1:
        assert hex_bytes(swap["data"])[:4] == EXECUTE_BATCH, "a bundle is one batch execution"


def assert_settled(
    before: Balances,
    after: Balances,
    chain: VenueChain,
    checked: CheckedQuote,
    *,
    taker: str,
    sell: str,
    buy: str,
    tx_hash: str,
) -> None:
    """Exact on-chain movements of a filled quote: the taker paid takerPays and received
    buyAmount, each maker received its orders' outputs and gave their inputs, and the fee
    recipient received the fee. The fee recipient and the venue's makers are shared by every
    fill on the venue (other tests' too), so what they received and gave is read from the
    fill's own logs (``tx_hash``); the taker, fresh per test, from its balances."""
    sell_address, buy_address = chain.token(sell).address, chain.token(buy).address
    assert before.delta(after, sell_address, taker) == -checked.taker_pays, "taker paid"
    assert before.delta(after, buy_address, taker) == checked.buy_amount, "taker received"
    receipt = chain.rpc().wait_receipt(tx_hash)
    recipient = chain.contracts.get("fee_recipient")
    if recipient:
        assert token_delta(receipt, sell_address, recipient) == checked.fee_amount, "fee"
        assert token_delta(receipt, buy_address, recipient) == 0, "fee is in the sell token"
    for maker in dict.fromkeys(checked.makers):
        mine = [o for o in checked.orders if o.maker == maker]
        assert token_delta(receipt, sell_address, maker) == sum(o.outputAmount for o in mine)
        assert token_delta(receipt, buy_address, maker) == -sum(o.inputAmount for o in mine)


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
