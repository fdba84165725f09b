"""What the time-travel integration tests share against a real `rfqsim serve`: calls to its API
(:class:`Api`: data on success, the error envelope when asked for), a firm quote for a demo
wallet, its approval and swap signed locally and sent to the chain, and :class:`PartnerEvents`,
an https endpoint of one partner (certificate from the simulator's local CA) that verifies every
delivery and keeps the events it received."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from conformance.calls.webhooks import fetch_certificate
from conformance.wire.chain import Chain
from conformance.wire.client import Response, request
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import WebhookReceiver
from rfqkit.webhook_signatures import verify_signature

CHAIN_ID = 97
WAIT_S = 30.0  # for a delivery or a status; each wait ends on the state it waits for
RFQ_EVENTS = ["rfq.filled", "rfq.failed", "rfq.expired"]


@dataclass(frozen=True)
class Api:
    url: str
    info: dict[str, Any]

    def send(self, method: str, path: str, body: Any = None, *, key: str | None = None) -> Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        if body is None:
            return request(method, self.url + path, headers=headers)
        return request(method, self.url + path, json=body, headers=headers)

    def data(self, method: str, path: str, body: Any = None, *, key: str | None = None) -> Any:
        resp = self.send(method, path, body, key=key)
        assert 200 <= resp.status < 300, f"{resp.describe()}: {resp.raw[:500]!r}"
        return resp.json()["data"]

    def error(
        self, method: str, path: str, status: int, *, key: str | None = None
    ) -> dict[str, Any]:
        """The error object of an answer that must be `status` in the envelope."""
        resp = self.send(method, path, key=key)
        assert resp.status == status, f"{resp.describe()}: {resp.raw[:500]!r}"
        error: dict[str, Any] = resp.json()["error"]
        assert error["request_id"] == resp.headers.get("X-Request-Id"), error
        return error

    @property
    def chain_info(self) -> dict[str, Any]:
        return dict(next(c for c in self.info["chains"] if c["chain_id"] == CHAIN_ID))

    def token(self, symbol: str) -> str:
        return str(next(t["address"] for t in self.chain_info["tokens"] if t["symbol"] == symbol))

    @property
    def chain(self) -> Chain:
        return Chain(str(self.chain_info["rpc_url"]), CHAIN_ID)

    def demo_wallet(self, index: int) -> Wallet:
        wallet = self.info["demo_wallets"][index]
        return Wallet(str(wallet["address"]), str(wallet["private_key"]))

    def demo_key(self, label: str = "taker-test") -> str:
        return str(next(k["key"] for k in self.info["demo_keys"] if k["label"] == label))

    def quote(self, key: str, taker: Wallet) -> dict[str, Any]:
        """A firm quote: 10 USDC for USDT on chain 97, taken by `taker`."""
        body = {
            "chainId": CHAIN_ID,
            "sellToken": self.token("USDC"),
            "buyToken": self.token("USDT"),
            "sellAmount": "10000000",
            "taker": taker.address,
        }
        data: dict[str, Any] = self.data("POST", "/v2/rfq/request", body, key=key)
        assert data["status"] == "quoted", data
        return data

    def record(self, rfq_id: str, key: str) -> dict[str, Any]:
        record: dict[str, Any] = self.data("GET", f"/v2/rfq/{rfq_id}", key=key)
        return record

    def wait_status(self, rfq_id: str, key: str, status: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        record = self.record(rfq_id, key)
        while record["status"] != status and time.monotonic() < deadline:
            time.sleep(0.1)
            record = self.record(rfq_id, key)
        assert record["status"] == status, record
        return record

    def now(self) -> str:
        return str(self.data("GET", "/_sim/clock")["now"])


def send_tx(chain: Chain, wallet: Wallet, tx: dict[str, Any], *, gas: int | None = None) -> str:
    """Sign one of a quote's transactions as it is and send it; its hash once mined (any
    status)."""
    assert tx["value"] == "0", tx
    tx_hash = chain.send(wallet, tx["to"], bytes.fromhex(tx["data"][2:]), gas=gas)
    chain.wait_receipt(tx_hash)
    return tx_hash


def mined_ok(chain: Chain, tx_hash: str) -> bool:
    return int(chain.wait_receipt(tx_hash)["status"], 16) == 1


def execute(api: Api, wallet: Wallet, quote: dict[str, Any]) -> str:
    """The taker's approval, then the swap, each as the quote built it; the swap's hash."""
    chain = api.chain
    approval = send_tx(chain, wallet, quote["transactions"]["approval"])
    assert mined_ok(chain, approval), approval
    swap = send_tx(chain, wallet, quote["transactions"]["swap"])
    assert mined_ok(chain, swap), swap
    return swap


class PartnerEvents:
    """The RFQ events one partner's https endpoint received, each signature verified."""

    def __init__(self, api: Api, receiver: WebhookReceiver, secret: str) -> None:
        self.api = api
        self.receiver = receiver
        self.secret = secret

    def events(self) -> list[dict[str, Any]]:
        bodies = []
        for got in self.receiver.requests:
            header = got.header("Service-Signature") or ""
            assert verify_signature(self.secret, header, got.raw_body), got
            bodies.append(json.loads(got.raw_body))
        return bodies

    def of(self, rfq_id: str) -> list[dict[str, Any]]:
        """Its events in the order they arrived, deduplicated on the event id."""
        seen: dict[str, dict[str, Any]] = {}
        for event in self.events():
            if event["data"]["rfq"]["id"] == rfq_id:
                seen.setdefault(str(event["id"]), event)
        return list(seen.values())

    def wait(self, event_type: str, rfq_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            found = [e for e in self.of(rfq_id) if e["type"] == event_type]
            if found:
                return found[0]
            assert time.monotonic() < deadline, (event_type, rfq_id, self.events())
            time.sleep(0.05)


@contextmanager
def partner_events(api: Api, key: str) -> Iterator[PartnerEvents]:
    """An https endpoint registered with `key` (webhooks:manage) for every RFQ event; deleted
    on exit."""
    cert_pem, key_pem, _ = fetch_certificate(api.url)
    with WebhookReceiver(cert_pem, key_pem) as receiver:
        endpoint = api.data(
            "POST", "/v1/webhooks", {"url": receiver.url, "eventTypes": RFQ_EVENTS}, key=key
        )
        try:
            yield PartnerEvents(api, receiver, str(endpoint["signingSecret"]))
        finally:
            api.data("DELETE", f"/v1/webhooks/{endpoint['id']}", key=key)
