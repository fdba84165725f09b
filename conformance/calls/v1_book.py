"""The closed v1 API's book called the way an existing v1 integrator's script calls it, over
public HTTP and real transactions only: a key of its own partner with the v1 scopes, maker
wallets funded from a demo wallet that approve the signature-transfer contract, limit orders
placed in two steps (prepare, then the wallet's ``eth_signTypedData_v4`` over the full typed
data, then submit), a maker's early cancel (``invalidateUnorderedNonces``), the order book and
quote reads, instant swaps executed by the taker (approval, then the one batch) and bounded
waits for statuses. Helpers that expect a 2xx fail the test with the response when they do
not get one. The simulator is never imported.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data

from conformance.calls.rfq_calls import keyed_client
from conformance.checks.resource_checks import V1_EVENTS, assert_swap_transactions_send_no_value
from conformance.deployment.funding import fund_wallet
from conformance.deployment.service_clock import Clocked
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import Token, VenueChain
from conformance.wire.chain import WAIT_TIMEOUT, calldata, hex_bytes, wait_for
from conformance.wire.client import Client, Response
from conformance.wire.response_checks import assert_data, parse_iso_utc
from contracts.orders import nonce_word_and_mask
from rfqkit.wallets import Wallet
from rfqkit.webhook_signatures import (
    DEFAULT_TOLERANCE_S,
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    signature_problem,
)

V1_SCOPES = ("quotes:read", "trades:read", "trades:write", "webhooks:manage")
MAX_UINT256 = 2**256 - 1
RAY = 10**27
FEE_BPS = 5
BPS = 10_000


@dataclass(frozen=True)
class Integrator:
    """A v1 integration: its client (bearer key) and the key record."""

    client: Client
    key: dict[str, Any]

    @property
    def partner_id(self) -> str:
        return str(self.key["partner_id"])


def v1_integrator(
    sim: SimControl,
    http: Client,
    environment: str = "test",
    scopes: Iterable[str] = V1_SCOPES,
    *,
    partner: str | None = None,
) -> Integrator:
    """A fresh key (own partner unless named) with the v1 scopes, unlimited rate tier."""
    name = partner or f"conformance-v1-{secrets.token_hex(6)}"
    key = sim.create_key(name, environment, list(scopes), tier="unlimited")
    return Integrator(keyed_client(http, key), key)


# -- wallets --------------------------------------------------------------------------------


def funded_maker(chain: VenueChain, source: Wallet, holdings: Mapping[Token, int]) -> Wallet:
    """A fresh maker wallet holding `holdings` that lets the signature-transfer contract spend
    them (what a maker does once before placing orders)."""
    maker = fund_wallet(chain, source, {t.address: amount for t, amount in holdings.items()})
    node = chain.rpc()
    for token in holdings:
        node.approve(maker, token.address, chain.contracts["signature_transfer"], MAX_UINT256)
    return maker


def funded_taker(chain: VenueChain, source: Wallet, holdings: Mapping[Token, int]) -> Wallet:
    return fund_wallet(chain, source, {t.address: amount for t, amount in holdings.items()})


def invalidate_nonce(chain: VenueChain, maker: Wallet, nonce: int) -> str:
    """The maker's early cancel: Permit2 invalidateUnorderedNonces(wordPos, mask)."""
    word, mask = nonce_word_and_mask(nonce)
    receipt = chain.rpc().transact(
        maker,
        chain.contracts["signature_transfer"],
        calldata(
            "invalidateUnorderedNonces(uint256,uint256)", ["uint256", "uint256"], [word, mask]
        ),
    )
    return str(receipt["transactionHash"])


# -- limit orders ---------------------------------------------------------------------------


def prepare_body(
    chain: VenueChain,
    maker: Wallet,
    sell: Token,
    sell_amount: int,
    buy: Token,
    *,
    deadline: int,
    buy_amount: int | None = None,
    pricing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": chain.chain_id,
        "maker": maker.address,
        "sellToken": sell.address,
        "sellAmount": str(sell_amount),
        "buyToken": buy.address,
        "deadline": deadline,
    }
    if buy_amount is not None:
        body["buyAmount"] = str(buy_amount)
    if pricing is not None:
        body["pricing"] = dict(pricing)
    return body


def prepare(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.post("/v1/limit-orders/prepare", json=dict(body)))
    return data


def sign_typed_data(prepared: Mapping[str, Any], wallet: Wallet) -> str:
    """What eth_signTypedData_v4 returns for the prepared typed data, signed by `wallet`."""
    message = encode_typed_data(full_message=dict(prepared["typedData"]))
    return "0x" + bytes(Account.sign_message(message, wallet.private_key).signature).hex()


def signed_body(prepared: Mapping[str, Any], signature: str) -> dict[str, Any]:
    """POST /v1/limit-orders: the prepared order as it came, plus the signature."""
    return {**dict(prepared["order"]), "signature": signature}


def submit(client: Client, body: Mapping[str, Any]) -> Response:
    return client.post("/v1/limit-orders", json=dict(body))


def with_idempotency_key(client: Client) -> Client:
    """``client`` sending one fresh ``Idempotency-Key`` on every request: a create, then its
    replay (spec 3 "Endpoints": a retry with the same key replays the first response)."""
    return client.with_headers({"Idempotency-Key": f"conformance-{secrets.token_hex(8)}"})


@dataclass(frozen=True)
class PlacedOrder:
    order_id: str
    prepared: dict[str, Any]
    body: dict[str, Any]  # what was submitted
    answer: dict[str, Any]  # the 201's data

    @property
    def nonce(self) -> int:
        return int(self.prepared["order"]["nonce"])


def place(
    integrator: Integrator,
    clock: Clocked,
    chain: VenueChain,
    maker: Wallet,
    sell: Token,
    sell_amount: int,
    buy: Token,
    *,
    buy_amount: int | None = None,
    pricing: Mapping[str, Any] | None = None,
    ttl_s: int = 600,
    submit_with: Client | None = None,
) -> PlacedOrder:
    """prepare -> eth_signTypedData_v4 -> submit, expecting 201 (a fastFill order once a
    market-maker bid is live to price it); ``submit_with`` submits instead of the integrator's
    client (one with an Idempotency-Key)."""
    if pricing is not None and pricing.get("mode") == "fastFill":
        wait_fast_fill_bids(integrator.client, chain, sell, buy, sell_amount)
    deadline = clock.now_ms() // 1000 + ttl_s
    prepared = prepare(
        integrator.client,
        prepare_body(
            chain,
            maker,
            sell,
            sell_amount,
            buy,
            deadline=deadline,
            buy_amount=buy_amount,
            pricing=pricing,
        ),
    )
    body = signed_body(prepared, sign_typed_data(prepared, maker))
    answer: dict[str, Any] = assert_data(submit(submit_with or integrator.client, body), 201)
    return PlacedOrder(str(answer["id"]), prepared, body, answer)


def limit_order_quote(
    client: Client, chain: VenueChain, sell: Token, buy: Token, sell_amount: int, **params: Any
) -> dict[str, Any]:
    """GET /v1/limit-orders/quote, expecting 200."""
    query = {
        "chainId": chain.chain_id,
        "sellToken": sell.address,
        "buyToken": buy.address,
        "sellAmount": str(sell_amount),
        **params,
    }
    data: dict[str, Any] = assert_data(client.get("/v1/limit-orders/quote", params=query))
    return data


def wait_fast_fill_bids(
    client: Client, chain: VenueChain, sell: Token, buy: Token, sell_amount: int
) -> dict[str, Any]:
    """The quote once a market-maker bid is live in the direction: a filling operator's bids
    come and go with its published levels (a service whose clock just jumped sees none until
    they are published again), and fastFill is priced off the bid present at the time."""

    def probe() -> dict[str, Any] | None:
        data = limit_order_quote(client, chain, sell, buy, sell_amount)
        live = data["fastFillUnavailableReason"] != "no_market_maker_bids"
        return data if live else None

    return wait_for(probe, interval=0.25, what="a live market-maker bid (fastFill)")


def get_order(client: Client, order_id: str) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.get(f"/v1/limit-orders/{order_id}"))
    return data


def wait_order(
    client: Client,
    order_id: str,
    statuses: str | Iterable[str],
    *,
    timeout: float = WAIT_TIMEOUT,
) -> dict[str, Any]:
    wanted = {statuses} if isinstance(statuses, str) else set(statuses)

    def probe() -> dict[str, Any] | None:
        record = get_order(client, order_id)
        return record if record["status"] in wanted else None

    return wait_for(
        probe, timeout=timeout, interval=_poll_s(client), what=f"{order_id} in {wanted}"
    )


# -- the taker side -------------------------------------------------------------------------


def order_book(
    client: Client, chain: VenueChain, sell: Token, buy: Token, **params: Any
) -> dict[str, Any]:
    query = {"chainId": chain.chain_id, "sellToken": sell.address, "buyToken": buy.address}
    query.update(params)
    data: dict[str, Any] = assert_data(client.get("/v1/order-book", params=query))
    return data


def swap_body(
    chain: VenueChain, sell: Token, buy: Token, sell_amount: int, taker: str, **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": chain.chain_id,
        "sellToken": sell.address,
        "buyToken": buy.address,
        "sellAmount": str(sell_amount),
        "taker": taker,
    }
    body.update(extra)
    return body


def create_swap(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    """POST /v1/swaps expecting 201; the swap, its unsigned transactions sending no value."""
    data: dict[str, Any] = assert_data(client.post("/v1/swaps", json=dict(body)), 201)
    assert_swap_transactions_send_no_value(data)
    return data


def execute_swap(chain: VenueChain, taker: Wallet, swap: Mapping[str, Any]) -> str:
    """The taker's own transactions: the approval (a USDT-like token's nonzero allowance is set
    to zero first), then the one batch. Returns the batch's hash."""
    node = chain.rpc()
    approval = swap["transactions"]["approval"]
    token = chain.token_at(approval["to"])
    if token.usdt_like and node.allowance(token.address, taker.address, swap["allowanceTarget"]):
        node.approve(taker, token.address, swap["allowanceTarget"], 0)
    node.transact(taker, approval["to"], hex_bytes(approval["data"]))
    batch = swap["transactions"]["swap"]
    receipt = node.transact(taker, batch["to"], hex_bytes(batch["data"]))
    return str(receipt["transactionHash"]).lower()


def get_swap(client: Client, swap_id: str) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.get(f"/v1/swaps/{swap_id}"))
    return data


def wait_swap(
    client: Client, swap_id: str, statuses: str | Iterable[str], *, timeout: float = WAIT_TIMEOUT
) -> dict[str, Any]:
    wanted = {statuses} if isinstance(statuses, str) else set(statuses)

    def probe() -> dict[str, Any] | None:
        record = get_swap(client, swap_id)
        return record if record["status"] in wanted else None

    return wait_for(probe, timeout=timeout, interval=_poll_s(client), what=f"{swap_id} in {wanted}")


def _poll_s(client: Client) -> float:
    """Poll a status every 0.1 s, every second with a paced (shared, 60 a minute) key."""
    return 1.0 if client.pacing is not None else 0.1


# -- arithmetic the checks share ------------------------------------------------------------


def rate(sell: int, sell_decimals: int, buy: int, buy_decimals: int) -> int:
    """buy per sell, decimal-normalised, RAY-scaled, rounded down."""
    value: int = buy * RAY * 10**sell_decimals // (sell * 10**buy_decimals)
    return value


def book_rate(order_sell: int, sell_decimals: int, order_buy: int, buy_decimals: int) -> int:
    """A limit order's book rate: its sellToken per its buyToken."""
    return rate(order_buy, buy_decimals, order_sell, sell_decimals)


def fee_of(buy_amount: int) -> int:
    return buy_amount * FEE_BPS // BPS


# -- the book's sweep (simulator only) ------------------------------------------------------


def wait_for_sweep_since(sim: SimControl, service_time: float) -> None:
    """Until a limit-order sweep that started at or after `service_time` (Unix seconds on the
    service clock) has completed: everything due by then has been done."""

    def probe() -> bool | None:
        last = sim.call("GET", "book")["sweep"]["last_run_at"]
        return (
            True if last is not None and parse_iso_utc(last).timestamp() >= service_time else None
        )

    wait_for(probe, what="a limit-order sweep to run")


def service_now(sim: SimControl) -> float:
    return parse_iso_utc(sim.clock()["now"]).timestamp()


# -- events ---------------------------------------------------------------------------------


def register_endpoint(
    integrator: Integrator, url: str, event_types: Iterable[str] = V1_EVENTS
) -> dict[str, Any]:
    """POST /v1/webhooks (webhooks:manage) for the integrator's partner; the created record with
    its signingSecret."""
    body = {"url": url, "eventTypes": list(event_types)}
    created: dict[str, Any] = assert_data(integrator.client.post("/v1/webhooks", json=body), 201)
    return created


def verified_event(
    secret: str,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    raw_body: bytes,
) -> dict[str, Any]:
    """A delivery checked as a receiver must: the Service-Signature over the raw bytes (HMAC
    with the endpoint's signing secret, `t` against this machine's own clock: the signature is
    transport freshness, whatever the service's clock says), Service-Event-Id equal to the
    body's id. Returns the event."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    lowered = {k.lower(): v for k, v in pairs}
    problem = signature_problem(
        secret, lowered.get(SIGNATURE_HEADER.lower()), raw_body, DEFAULT_TOLERANCE_S
    )
    assert problem is None, f"signature check failed: {problem}"
    event: dict[str, Any] = json.loads(raw_body)
    assert lowered.get(EVENT_ID_HEADER.lower()) == event["id"], (lowered, event["id"])
    return event


def deliveries(sim: SimControl, event_id: str) -> list[dict[str, Any]]:
    """Every delivery of one event the simulator made or scheduled (any endpoint)."""
    found: list[dict[str, Any]] = sim.call("GET", f"webhooks/deliveries?event_id={event_id}")[
        "deliveries"
    ]
    return found
