"""RFQ events made and checked the way an integrator would, for test_webhooks_delivery.py and
test_webhooks_fill_events.py: a :class:`WebhookPartner` is a fresh partner's key (trade and webhook
scopes) that registers endpoints and requests firm quotes on chain 97 for a fresh taker wallet
(funded from a demo wallet, so allowances left by other tests cannot interfere with the
USDT-like approve); :func:`expire` advances the clock past ``expiresAt`` (``rfq.expired``) and
:meth:`WebhookPartner.execute` has the taker approve and broadcast ``transactions.swap`` itself
(``rfq.filled``). What arrives is checked independently of conformance/calls/webhooks.py:
:func:`check_signature` recomputes the HMAC over the raw body, :func:`check_event` the body's
fields and headers; :func:`attempts_made` and :func:`wait_for` poll the simulator's delivery log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.checks.resource_checks import RFQ_EVENTS
from conformance.deployment import loans
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue
from conformance.wire.chain import Chain
from conformance.wire.chain import wait_for as poll
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, parse_iso_utc
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import ReceivedRequest

CHAIN_ID = 97
SELL_AMOUNT = 10**18  # 1 USDT: above chain 97's 0.01 minimum
TOLERANCE_S = 300
WAIT_S = 15.0
RFQ_FIELDS = {
    "id",
    "chainId",
    "sellToken",
    "buyToken",
    "sellAmount",
    "buyAmount",
    "feeAmount",
    "taker",
    "txHash",
    "filledAt",
    "failReason",
}
FILL_ONLY_FIELDS = {"late", "supersedes", "previousFailReason"}


def wait_for(probe: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    """Poll until ``probe`` returns something truthy (a delivery log read, a flag)."""
    return poll(lambda: probe() or None, timeout=timeout, what=what)


# -- the venue as a fresh partner sees it -----------------------------------------------------


@dataclass
class WebhookPartner:
    """One partner record: a key with trade and webhook scopes, its endpoints, its RFQs."""

    target: Target
    sim: SimControl | None  # None against a deployment without /_sim: no delivery log
    caller: Client
    key: dict[str, Any]
    endpoints: list[str]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key['key']}"}

    def register(self, url: str, event_types: list[str] | None = None) -> dict[str, Any]:
        body = {"url": url, "eventTypes": list(event_types or RFQ_EVENTS)}
        created: dict[str, Any] = assert_data(
            self.caller.post("/v1/webhooks", json=body, headers=self.auth), 201
        )
        self.endpoints.append(str(created["id"]))
        return created

    def token(self, symbol: str) -> str:
        for token in self.target.chain(CHAIN_ID).get("tokens") or []:
            if token.get("symbol") == symbol:
                return str(token["address"])
        raise KeyError(symbol)

    @property
    def chain(self) -> Chain:
        return Chain(self.target.rpc_url(CHAIN_ID), CHAIN_ID)

    def fresh_taker(self, *, gas_money: bool) -> Wallet:
        """A new wallet holding 2 USDT (and native coin to pay gas, when it will transact)."""
        demo = self.target.wallets()[-1]  # a demo wallet, else the last given taker wallet
        source = Wallet(str(demo["address"]), str(demo["private_key"]))
        taker = Wallet.create()
        chain = self.chain
        tokens = Venue.of(self.target).chain(CHAIN_ID).tokens.values()
        native = 10**17 if gas_money else 0
        lent = {self.token("USDT"): 2 * SELL_AMOUNT}
        # A loan, given back at the end of the run (conformance/deployment/loans.py).
        loans.record(chain, source, taker, tuple(tokens), lent, native)
        chain.transfer(source, self.token("USDT"), taker.address, 2 * SELL_AMOUNT)
        if native:
            chain.transact(source, taker.address, value=native)
        return taker

    def firm_quote(self, taker: Wallet) -> dict[str, Any]:
        body = {
            "chainId": CHAIN_ID,
            "sellToken": self.token("USDT"),
            "buyToken": self.token("NGNS"),
            "sellAmount": str(SELL_AMOUNT),
            "taker": taker.address,
        }
        resp = self.caller.post("/v2/rfq/request", json=body, headers=self.auth, timeout=75)
        data: dict[str, Any] = assert_data(resp)
        assert data.get("status") == "quoted", f"expected a firm quote (makers online?): {data!r}"
        return data

    def execute(self, taker: Wallet, quote: dict[str, Any]) -> str:
        """Approve takerPays to the reactor and broadcast transactions.swap from the taker; the
        swap's hash once both are mined and succeeded."""
        chain = self.chain
        for name in ("approval", "swap"):
            tx = quote["transactions"][name]
            receipt = chain.transact(taker, tx["to"], bytes.fromhex(tx["data"][2:]))
        return str(receipt["transactionHash"])

    def rfq(self, rfq_id: str) -> dict[str, Any]:
        data: dict[str, Any] = assert_data(self.caller.get(f"/v2/rfq/{rfq_id}", headers=self.auth))
        return data

    def deliveries(self, event_id: str) -> list[dict[str, Any]]:
        assert self.sim is not None, "the delivery log is the simulator's (/_sim)"
        data = self.sim.call("GET", f"webhooks/deliveries?event_id={event_id}")
        deliveries: list[dict[str, Any]] = data["deliveries"]
        return [d for d in deliveries if d["endpoint_id"] in self.endpoints]

    def attempts(self, event_id: str) -> list[dict[str, Any]]:
        (delivery,) = self.deliveries(event_id)
        attempts: list[dict[str, Any]] = delivery["attempts"]
        return attempts


# -- independent checks ---------------------------------------------------------------------


def check_signature(secret: str, got: ReceivedRequest) -> int:
    """Service-Signature is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>, and t is
    within a receiver's usual tolerance of the receiver's own (wall) clock, even after the
    service clock was advanced (docs/decisions.md: t is wall-clock time at sending)."""
    header = got.header("Service-Signature")
    assert header, f"no Service-Signature header: {got.headers!r}"
    fields = dict(part.split("=", 1) for part in header.split(","))
    assert set(fields) == {"t", "v1"}, header
    assert fields["t"].isdigit(), header
    t = int(fields["t"])
    mac = hmac.new(secret.encode("utf-8"), f"{t}.".encode() + got.raw_body, hashlib.sha256)
    assert hmac.compare_digest(mac.hexdigest(), fields["v1"]), "signature does not verify"
    assert abs(time.time() - t) <= TOLERANCE_S, f"t={t} is far from this machine's clock"
    return t


def service_now(sim: SimControl) -> float:
    return parse_iso_utc(sim.clock()["now"]).timestamp()


def check_event(got: ReceivedRequest, event_type: str, rfq_id: str) -> dict[str, Any]:
    assert got.method == "POST"
    content_type = (got.header("Content-Type") or "").split(";")[0].strip()
    assert content_type == "application/json", got.headers
    event: dict[str, Any] = json.loads(got.raw_body)
    assert event["id"] == f"{event_type}:{rfq_id}"
    assert got.header("Service-Event-Id") == event["id"]
    assert event["type"] == event_type
    parse_iso_utc(event["created"])
    assert event["data"]["apiVersion"] == 2
    rfq = event["data"]["rfq"]
    assert rfq["id"] == rfq_id
    assert rfq["chainId"] == CHAIN_ID
    expected = RFQ_FIELDS | (FILL_ONLY_FIELDS if event_type == "rfq.filled" else set())
    assert set(rfq) == expected, f"data.rfq fields: {sorted(rfq)}"
    return event


def attempts_made(partner: WebhookPartner, event_id: str, count: int) -> Callable[[], bool]:
    def probe() -> bool:
        # The sweeper expires the RFQ up to ~250 ms after the clock advance, so at first there
        # may be no delivery yet: that is "not yet", not a failure.
        deliveries = partner.deliveries(event_id)
        return len(deliveries) == 1 and len(deliveries[0]["attempts"]) == count

    return probe


def expire(partner: WebhookPartner) -> tuple[dict[str, Any], str]:
    """A firm quote left to lapse: (quote, rfq id), with the clock moved past expiresAt."""
    quote = partner.firm_quote(partner.fresh_taker(gas_money=False))
    assert partner.sim is not None, "moving the clock needs /_sim"
    partner.sim.advance(61)
    return quote, str(quote["rfqId"])
