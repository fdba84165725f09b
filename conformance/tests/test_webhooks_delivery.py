"""RFQ events delivered to a real https receiver on loopback: signatures (checked here by an
independent HMAC, not by conformance/webhooks.py), raw bodies, headers, retries on the
simulator clock, a receiver that is down for hours, partner and event-type routing, late-fill
corrections and duplicates.

Events are produced the way an integrator would: a key of a fresh partner requests a firm quote
on chain 97 for a fresh taker wallet (funded from a demo wallet, so allowances left by other
tests cannot interfere with the USDT-like approve), then either the clock is advanced past
expiresAt (``rfq.expired``) or the taker approves and broadcasts ``transactions.swap`` itself
(``rfq.filled``). The receiver's certificate comes from the simulator's local CA
(``POST /_sim/webhooks/certificates``), which the simulator's sender trusts.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from eth_abi.abi import encode as abi_encode
from eth_account import Account

from conformance.client import Client, fresh_loopback_address, is_loopback_url
from conformance.json_rpc import hex_to_int, rpc
from conformance.response_checks import assert_data, parse_iso_utc
from conformance.sim_control import SimControl
from conformance.target import Target
from conformance.webhooks import (
    RfqEventReceiver,
    fetch_certificate,
)
from rfqkit.webhook_receiver import (
    ReceivedRequest,
    WebhookReceiver,
)

pytestmark = pytest.mark.sim_only

CHAIN_ID = 97
SELL_AMOUNT = 10**18  # 1 USDT: above chain 97's 0.01 minimum
GAS_PRICE = 10 * 10**9
GAS = 1_000_000
TOLERANCE_S = 300
WAIT_S = 15.0
RFQ_EVENTS = ["rfq.filled", "rfq.failed", "rfq.expired"]
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
RETRIES_BEFORE_SIX_HOURS = (5, 300, 1800, 7200)  # after the first attempt: attempts 2..5


def wait_for(probe: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.05)


# -- chain: fund a fresh taker and send its transactions -------------------------------------


class Chain:
    def __init__(self, url: str) -> None:
        self.url = url

    def send(self, private_key: str, to: str, data: bytes = b"", value: int = 0) -> str:
        sender = Account.from_key(private_key).address
        nonce = hex_to_int(rpc(self.url, "eth_getTransactionCount", [sender, "pending"]))
        signed = Account.sign_transaction(
            {
                "to": to,
                "value": value,
                "data": "0x" + data.hex(),
                "gas": GAS,
                "gasPrice": GAS_PRICE,
                "nonce": nonce,
                "chainId": CHAIN_ID,
            },
            private_key,
        )
        tx_hash = str(
            rpc(self.url, "eth_sendRawTransaction", ["0x" + signed.raw_transaction.hex()])
        )
        receipt = wait_for(
            lambda: rpc(self.url, "eth_getTransactionReceipt", [tx_hash]), f"receipt of {tx_hash}"
        )
        assert hex_to_int(receipt["status"]) == 1, f"transaction {tx_hash} reverted: {receipt!r}"
        return tx_hash


def _erc20_transfer(to: str, amount: int) -> bytes:
    return bytes.fromhex("a9059cbb") + abi_encode(["address", "uint256"], [to, amount])


@dataclass(frozen=True)
class Taker:
    address: str
    private_key: str


# -- the venue as a fresh partner sees it -----------------------------------------------------


@dataclass
class Partner:
    """One partner record: a key with trade and webhook scopes, its endpoints, its RFQs."""

    target: Target
    sim: SimControl
    caller: Client
    key: dict[str, Any]
    endpoints: list[str]

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key['key']}"}

    def register(self, url: str, event_types: list[str] | None = None) -> dict[str, Any]:
        body = {"url": url, "eventTypes": event_types or RFQ_EVENTS}
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
        return Chain(self.target.rpc_url(CHAIN_ID))

    def fresh_taker(self, *, gas_money: bool) -> Taker:
        """A new wallet holding 2 USDT (and native coin to pay gas, when it will transact)."""
        demo = ((self.target.info or {}).get("demo_wallets") or [])[-1]
        account = Account.create()
        taker = Taker(account.address, "0x" + bytes(account.key).hex())
        chain = self.chain
        chain.send(
            demo["private_key"], self.token("USDT"), _erc20_transfer(taker.address, 2 * SELL_AMOUNT)
        )
        if gas_money:
            chain.send(demo["private_key"], taker.address, value=10**17)
        return taker

    def firm_quote(self, taker: Taker) -> dict[str, Any]:
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

    def execute(self, taker: Taker, quote: dict[str, Any]) -> str:
        """Approve takerPays to the reactor and broadcast transactions.swap from the taker."""
        chain = self.chain
        for name in ("approval", "swap"):
            tx = quote["transactions"][name]
            tx_hash = chain.send(taker.private_key, tx["to"], bytes.fromhex(tx["data"][2:]))
        return tx_hash

    def rfq(self, rfq_id: str) -> dict[str, Any]:
        data: dict[str, Any] = assert_data(self.caller.get(f"/v2/rfq/{rfq_id}", headers=self.auth))
        return data

    def deliveries(self, event_id: str) -> list[dict[str, Any]]:
        data = self.sim.call("GET", f"webhooks/deliveries?event_id={event_id}")
        deliveries: list[dict[str, Any]] = data["deliveries"]
        return [d for d in deliveries if d["endpoint_id"] in self.endpoints]

    def attempts(self, event_id: str) -> list[dict[str, Any]]:
        (delivery,) = self.deliveries(event_id)
        attempts: list[dict[str, Any]] = delivery["attempts"]
        return attempts


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


@pytest.fixture
def make_partner(
    target: Target, sim: SimControl, caller: Client
) -> Iterator[Callable[[], Partner]]:
    made: list[Partner] = []
    sim.call("DELETE", "webhooks/faults")

    def make() -> Partner:
        key = sim.create_key(
            f"conformance-webhook-delivery-{secrets.token_hex(6)}",
            "test",
            ["trades:write", "trades:read", "webhooks:manage"],
            tier="high",
        )
        partner = Partner(target, sim, caller, key, [])
        made.append(partner)
        return partner

    yield make
    sim.call("DELETE", "webhooks/faults")
    for partner in made:
        for endpoint_id in partner.endpoints:
            caller.delete(f"/v1/webhooks/{endpoint_id}", headers=partner.auth)
        sim.call("POST", f"keys/{partner.key['key_id']}/revoke")


@pytest.fixture
def receiver(target: Target) -> Iterator[WebhookReceiver]:
    cert_pem, key_pem, _ = fetch_certificate(target.base_url)
    with WebhookReceiver(cert_pem, key_pem) as running:
        yield running


# -- independent checks ---------------------------------------------------------------------


def check_signature(secret: str, got: ReceivedRequest, service_now: float) -> int:
    """Service-Signature is t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>."""
    header = got.header("Service-Signature")
    assert header, f"no Service-Signature header: {got.headers!r}"
    fields = dict(part.split("=", 1) for part in header.split(","))
    assert set(fields) == {"t", "v1"}, header
    assert fields["t"].isdigit(), header
    t = int(fields["t"])
    mac = hmac.new(secret.encode("utf-8"), f"{t}.".encode() + got.raw_body, hashlib.sha256)
    assert hmac.compare_digest(mac.hexdigest(), fields["v1"]), "signature does not verify"
    assert abs(service_now - t) <= TOLERANCE_S, f"t={t} is far from the service clock"
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


def attempts_made(partner: Partner, event_id: str, count: int) -> Callable[[], bool]:
    def probe() -> bool:
        # The sweeper expires the RFQ up to ~250 ms after the clock advance, so at first there
        # may be no delivery yet: that is "not yet", not a failure.
        deliveries = partner.deliveries(event_id)
        return len(deliveries) == 1 and len(deliveries[0]["attempts"]) == count

    return probe


def expire(partner: Partner) -> tuple[dict[str, Any], str]:
    """A firm quote left to lapse: (quote, rfq id), with the clock moved past expiresAt."""
    quote = partner.firm_quote(partner.fresh_taker(gas_money=False))
    partner.sim.advance(61)
    return quote, str(quote["rfqId"])


# -- tests -----------------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/events/rfq-expired",
    "rfq/events/each-emitted-status-changes",
    "rfq/events/delivery-body-fields",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/signature",
    "rfq/events/receivers-compare-constant-time",
    "rfq/events/outbound-webhooks-partner-feature",
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "rfq/states/quoted-quote-lapses",
    "rfq/versioning/item-1",
)
def test_an_expired_quote_is_delivered_signed_to_the_owning_partner_only(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    owner, stranger = make_partner(), make_partner()
    endpoint = owner.register(receiver.url)
    owner.register(receiver.url + "/filled-only", ["rfq.filled"])
    stranger.register(receiver.url + "/stranger")
    quote, rfq_id = expire(owner)

    (got,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], got, service_now(sim))
    event = check_event(got, "rfq.expired", rfq_id)
    assert got.path == "/webhooks"
    rfq = event["data"]["rfq"]
    assert rfq["sellToken"] == owner.token("USDT")
    assert rfq["buyToken"] == owner.token("NGNS")
    assert rfq["taker"].lower() == quote["quote"]["taker"].lower()
    assert rfq["txHash"] is None
    assert rfq["filledAt"] is None
    assert owner.rfq(rfq_id)["status"] == "expired"
    time.sleep(0.5)  # anything misrouted would have arrived by now
    assert [r.path for r in receiver.requests] == ["/webhooks"], "event reached a wrong endpoint"
    (delivery,) = owner.deliveries(event["id"])
    assert delivery["status"] == "delivered"


@pytest.mark.spec(
    "rfq/events/delivery-rules",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/signature",
    "rfq/events/backoff-schedule-retry-count",
)
def test_a_500_is_retried_five_seconds_later_with_the_same_bytes(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    receiver.respond_with(500)
    _, rfq_id = expire(partner)
    event_id = f"rfq.expired:{rfq_id}"

    (first,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    wait_for(attempts_made(partner, event_id, 1), "the first attempt to be recorded")
    (attempt,) = partner.attempts(event_id)
    assert (attempt["response_status"], attempt["outcome"]) == (500, "failed")
    time.sleep(0.3)
    assert len(receiver.requests) == 1, "retried before the clock moved"

    sim.advance(5)
    first_again, second = receiver.wait_for_requests(2, timeout=WAIT_S)
    assert first_again == first
    assert second.raw_body == first.raw_body, "a retry must carry the same bytes"
    assert second.header("Service-Event-Id") == first.header("Service-Event-Id") == event_id
    check_signature(endpoint["signingSecret"], second, service_now(sim))
    wait_for(lambda: partner.deliveries(event_id)[0]["status"] == "delivered", "delivered")

    (delivery,) = partner.deliveries(event_id)
    redone = sim.call("POST", f"webhooks/deliveries/{delivery['id']}/redeliver")
    assert [a["manual"] for a in redone["attempts"]] == [False, False, True]
    third = receiver.wait_for_requests(3, timeout=WAIT_S)[2]
    assert third.raw_body == first.raw_body
    check_signature(endpoint["signingSecret"], third, service_now(sim))


@pytest.mark.spec(
    "rfq/events/delivery-rules",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/backoff-schedule-retry-count",
)
def test_a_receiver_down_for_six_hours_still_gets_the_event(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    port = receiver.port
    receiver.stop()
    stopped_at = service_now(sim)
    _, rfq_id = expire(partner)
    event_id = f"rfq.expired:{rfq_id}"

    wait_for(attempts_made(partner, event_id, 1), "attempt 1")
    for number, delay in enumerate(RETRIES_BEFORE_SIX_HOURS, start=2):
        sim.advance(delay)
        wait_for(attempts_made(partner, event_id, number), f"attempt {number}")
    attempts = partner.attempts(event_id)
    assert all(a["outcome"] == "failed" and a["response_status"] is None for a in attempts)
    (delivery,) = partner.deliveries(event_id)
    assert delivery["status"] == "pending"
    next_at = parse_iso_utc(delivery["next_attempt_at"]).timestamp()

    # Stay down past six hours in all; the next attempt (5 h after the fifth) is not due yet.
    down_for = service_now(sim) - stopped_at
    sim.advance(math.ceil(6 * 3600 - down_for + 60))
    assert service_now(sim) < next_at
    time.sleep(0.3)
    assert len(partner.attempts(event_id)) == 5

    receiver.restart()
    assert receiver.port == port
    sim.advance(math.ceil(next_at - service_now(sim)) + 1)
    (got,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    assert service_now(sim) - stopped_at >= 6 * 3600
    check_signature(endpoint["signingSecret"], got, service_now(sim))
    check_event(got, "rfq.expired", rfq_id)
    wait_for(lambda: partner.deliveries(event_id)[0]["status"] == "delivered", "delivered")
    assert len(partner.attempts(event_id)) == 6
    assert partner.rfq(rfq_id)["status"] == "expired"


@pytest.mark.spec(
    "rfq/events/rfq-filled",
    "rfq/events/late-supersedes-previousfailreason-appear",
    "rfq/events/amounts-settled-amounts",
    "rfq/states/quoted-or-submitted-settlement-seen-on-chain",
    "rfq/states/reporting-is-optional",
)
def test_a_fill_is_delivered_with_settled_amounts(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    taker = partner.fresh_taker(gas_money=True)
    quote = partner.firm_quote(taker)
    rfq_id = str(quote["rfqId"])
    swap_hash = partner.execute(taker, quote)

    (got,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], got, service_now(sim))
    rfq = check_event(got, "rfq.filled", rfq_id)["data"]["rfq"]
    assert rfq["late"] is False
    assert rfq["supersedes"] is None
    assert rfq["previousFailReason"] is None
    assert rfq["failReason"] is None
    assert str(rfq["txHash"]).lower() == swap_hash.lower()
    parse_iso_utc(rfq["filledAt"])
    assert rfq["sellAmount"] == quote["quote"]["takerPays"]
    assert rfq["buyAmount"] == quote["quote"]["buyAmount"]
    assert rfq["feeAmount"] == quote["quote"]["feeAmount"]
    assert partner.rfq(rfq_id)["status"] == "filled"


@pytest.mark.spec(
    "rfq/events/corrections",
    "rfq/events/late-supersedes-previousfailreason-appear",
    "rfq/events/safe-receiver-keys-rfq-id",
    "rfq/states/failed-or-expired-late-indexed-fill",
    "rfq/states/rule-2",
)
def test_a_late_fill_corrects_the_expired_event(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    taker = partner.fresh_taker(gas_money=True)
    quote = partner.firm_quote(taker)
    rfq_id = str(quote["rfqId"])
    sim.advance(61)  # past expiresAt, before the order deadline (expiresAt + 60 s)
    (expired,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    check_event(expired, "rfq.expired", rfq_id)

    partner.execute(taker, quote)
    _, filled = receiver.wait_for_requests(2, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], filled, service_now(sim))
    rfq = check_event(filled, "rfq.filled", rfq_id)["data"]["rfq"]
    assert rfq["late"] is True
    assert rfq["supersedes"] == "rfq.expired"
    assert rfq["previousFailReason"] is None  # an expiry has no failReason to clear
    assert partner.rfq(rfq_id)["status"] == "filled"

    safe = RfqEventReceiver()
    for got in (expired, filled, expired):  # a redelivered expiry must not undo the fill
        safe.handle(json.loads(got.raw_body))
    assert safe.rfqs[rfq_id].status == "filled"
    # Out of order: the correction first, the stale expiry second.
    reordered = RfqEventReceiver()
    reordered.handle(json.loads(filled.raw_body))
    reordered.handle(json.loads(expired.raw_body))
    assert reordered.rfqs[rfq_id].status == "filled"


@pytest.mark.spec("rfq/events/headers-on-each-delivery")
def test_duplicates_carry_the_same_event_id(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    partner.register(receiver.url)
    sim.call("POST", "webhooks/faults", {"duplicate": True})
    _, rfq_id = expire(partner)
    first, second = receiver.wait_for_requests(2, timeout=WAIT_S)
    assert first.header("Service-Event-Id") == second.header("Service-Event-Id")
    assert first.raw_body == second.raw_body
    safe = RfqEventReceiver()
    assert safe.handle(json.loads(first.raw_body))
    assert not safe.handle(json.loads(second.raw_body))
    assert safe.rfqs[rfq_id].status == "expired"


@pytest.mark.spec(
    "rfq/events/corrections",
    "rfq/events/late-supersedes-previousfailreason-appear",
    "rfq/states/submitted-signed-order-deadline-passes",
    "rfq/states/failed-or-expired-late-indexed-fill",
)
def test_a_late_indexed_fill_corrects_the_failed_event(
    make_partner: Callable[[], Partner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    """The reported hash never lands, so the RFQ fails at the order deadline; meanwhile the
    taker's real swap landed in time but the fill index was unreachable (the fault switch).
    When the index comes back, the fill corrects the failure: late, supersedes rfq.failed,
    previousFailReason not_landed."""
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    taker = partner.fresh_taker(gas_money=True)
    quote = partner.firm_quote(taker)
    rfq_id = str(quote["rfqId"])
    try:
        sim.call("POST", "faults", {"indexer_paused": [CHAIN_ID]})
        never_lands = "0x" + secrets.token_hex(32)
        submitted = partner.caller.post(
            f"/v2/rfq/{rfq_id}/submit", json={"txHash": never_lands}, headers=partner.auth
        )
        assert assert_data(submitted)["status"] == "submitted"
        swap_hash = partner.execute(taker, quote)  # mined before the deadline, not yet indexed
        deadline = parse_iso_utc(quote["quote"]["orderDeadline"]).timestamp()
        sim.advance(max(1, math.ceil(deadline - service_now(sim)) + 1))
        (failed,) = receiver.wait_for_requests(1, timeout=WAIT_S)
        rfq = check_event(failed, "rfq.failed", rfq_id)["data"]["rfq"]
        assert rfq["failReason"] == "not_landed"
        assert partner.rfq(rfq_id)["status"] == "failed"
    finally:
        sim.call("DELETE", "faults")  # the index is back: it catches up from where it stopped
    _, filled = receiver.wait_for_requests(2, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], filled, service_now(sim))
    rfq = check_event(filled, "rfq.filled", rfq_id)["data"]["rfq"]
    assert rfq["late"] is True
    assert rfq["supersedes"] == "rfq.failed"
    assert rfq["previousFailReason"] == "not_landed"
    assert str(rfq["txHash"]).lower() == swap_hash.lower()
    record = partner.rfq(rfq_id)
    assert record["status"] == "filled"
    assert record["failReason"] is None
