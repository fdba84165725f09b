"""The ramp transfer routes over real loopback HTTP on the app without chains or provider:
rendering of stored transfers (views, payIn/payOut shapes), read 404s, the inbound provider
webhook's signature and body checks, and /_sim/outbox filters and clearing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from simulator.api.http.appkeys import CLOCK
from simulator.services.ramp.model import TransferRecord
from simulator.services.ramp.store import claim_hash
from simulator.services.ramp.webhooks import sign
from tests.unit.services.ramp_harness import Client, client_app, ramp_of, serve_ramp

WALLET = "0x" + "ab" * 20


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with serve_ramp() as test_client:
        yield test_client


def stored(client: Client, **changes: Any) -> TransferRecord:
    now = client_app(client)[CLOCK].time()
    record = TransferRecord(
        id="rtr_http_1",
        provider="ngnramp",
        provider_transfer_id="trf_http_1",
        sandbox=False,
        side="buy",
        fiat="NGN",
        token="NGNS",
        chain_id=97,
        wallet=WALLET,
        intent_key="intent-key-http-1",
        source_amount="10000.00",
        target_amount="9750.500000",
        rate_label="1 NGN = 0.995 NGNS",
        fee_label="199.5 NGNS",
        status="AWAITING_FUNDS",
        provider_status="awaiting_funds",
        pay_in={
            "type": "temporary_bank_account",
            "recipient_details": {
                "bank_name": "Providus",
                "account_number": "5699252753",
                "account_name": "NGNRAMP CHECKOUT - ADA OBI",
            },
            "expires_at": "2030-01-01T00:30:00.000Z",
            "extraProviderField": "dropped",
        },
        pay_out={"type": "address", "network": "bnb-testnet", "address": WALLET},
        email="ada@example.com",
        customer_id="cus_1",
        recipient_id=None,
        expires_at=now + 1800,
        created_at=now,
        state_at=now,
    )
    record = replace(record, **changes)
    record.record_timeline(record.created_at)
    record.claim_hashes.add(claim_hash("rcl_token"))
    ramp_of(client).transfers.store.add(record)
    return record


async def test_full_and_wallet_views_render_the_spec_shapes(client: Client) -> None:
    record = stored(client)
    resp = await client.get(
        f"/v2/ramp/transfers/{record.id}", headers={"X-Ramp-Claim": "rcl_token"}
    )
    assert resp.status == 200
    body = await resp.json()
    assert set(body) == {"transfer"}  # RA1: not wrapped in data
    transfer = body["transfer"]
    assert transfer["payIn"]["recipient_details"]["account_number"] == "5699252753"
    assert "extraProviderField" not in transfer["payIn"]
    assert "blockchain_hash" not in transfer["payOut"]
    assert transfer["retryOfId"] is None
    assert transfer["timeline"][0]["at"].endswith("Z")
    record.status, record.provider_status = "COMPLETED", "completed"
    record.pay_out["blockchain_hash"] = "0x" + "12" * 32
    resp = await client.get(
        f"/v2/ramp/transfers/{record.id}", params={"wallet": WALLET.upper().replace("0X", "0x")}
    )
    assert resp.status == 200
    assert (await resp.json())["transfer"]["payOut"]["blockchain_hash"] == "0x" + "12" * 32


async def test_a_retry_renders_its_balance_pay_in(client: Client) -> None:
    record = stored(
        client,
        id="rtr_http_2",
        provider_transfer_id="trf_http_2",
        pay_in={"type": "balance"},
        retry_of_id="rtr_http_1",
    )
    resp = await client.get(
        f"/v2/ramp/transfers/{record.id}", headers={"X-Ramp-Claim": "rcl_token"}
    )
    assert resp.status == 200
    transfer = (await resp.json())["transfer"]
    assert transfer["payIn"] == {"type": "balance"}
    assert transfer["retryOfId"] == "rtr_http_1"


@pytest.mark.parametrize(
    ("path", "kwargs", "status"),
    [
        ("/v2/ramp/transfers/rtr_http_1", {}, 404),
        ("/v2/ramp/transfers/rtr_http_1", {"headers": {"X-Ramp-Claim": "rcl_other"}}, 404),
        ("/v2/ramp/transfers/rtr_http_1", {"params": {"wallet": "0x" + "cd" * 20}}, 404),
        ("/v2/ramp/transfers/rtr_none", {"headers": {"X-Ramp-Claim": "rcl_token"}}, 404),
        ("/v2/ramp/transfers/rtr_http_1", {"params": {"wallet": "0x12"}}, 400),
        ("/v2/ramp/transfers/rtr_http_1", {"params": {"colour": "blue"}}, 400),
    ],
)
async def test_reads_that_are_refused(
    client: Client, path: str, kwargs: dict[str, Any], status: int
) -> None:
    stored(client)
    resp = await client.get(path, **kwargs)
    assert resp.status == status
    assert (await resp.json())["error"]["code"] == (
        "not_found" if status == 404 else "invalid_request"
    )


def _webhook(transfer: dict[str, Any], event_id: str = "evt_http_1") -> bytes:
    return json.dumps(
        {"id": event_id, "type": "transfer.updated", "created": "x", "data": {"transfer": transfer}}
    ).encode()


def _provider_transfer(record: TransferRecord, status: str) -> dict[str, Any]:
    return {
        "id": record.provider_transfer_id,
        "reference": record.id,
        "side": record.side,
        "chainId": record.chain_id,
        "sandbox": False,
        "fiat": "NGN",
        "token": "NGNS",
        "sourceAmount": record.source_amount,
        "targetAmount": record.target_amount,
        "rateLabel": record.rate_label,
        "feeLabel": record.fee_label,
        "status": status,
        "statusHistory": [],
        "payIn": record.pay_in,
        "payOut": record.pay_out,
        "customerId": "cus_1",
        "recipientId": None,
        "retryOf": None,
        "expiresAt": "2030-01-01T00:30:00.000Z",
        "createdAt": "2030-01-01T00:00:00.000Z",
        "updatedAt": "2030-01-01T00:00:01.000Z",
    }


async def test_provider_webhook_signature_body_and_application(client: Client) -> None:
    record = stored(client)
    secret = ramp_of(client).webhook_secret
    body = _webhook(_provider_transfer(record, "funds_received"))
    url = "/_provider/ngnramp/webhooks"
    for header in (None, "t=1,v1=" + "0" * 64, sign("whsec_wrong_secret_value_00", 1, body)):
        headers = {"X-Provider-Signature": header} if header else {}
        resp = await client.post(url, data=body, headers=headers)
        assert resp.status == 401
        assert (await resp.json())["error"]["details"]["reason"] == "invalid_signature"
    assert record.status == "AWAITING_FUNDS"
    resp = await client.post(
        "/_provider/other/webhooks",
        data=body,
        headers={"X-Provider-Signature": sign(secret, 1, body)},
    )
    assert resp.status == 404
    broken = b'{"id":"evt_http_bad","type":"transfer.updated","data":{"transfer":{"id":1}}}'
    resp = await client.post(
        url, data=broken, headers={"X-Provider-Signature": sign(secret, 1, broken)}
    )
    assert resp.status == 400
    resp = await client.post(
        url, data=body, headers={"X-Provider-Signature": sign(secret, 1, body)}
    )
    assert resp.status == 200
    assert await resp.json() == {"received": True, "eventId": "evt_http_1", "outcome": "applied"}
    assert (record.status, record.provider_status) == ("PROCESSING", "funds_received")
    resp = await client.post(
        url, data=body, headers={"X-Provider-Signature": sign(secret, 2, body)}
    )
    assert (await resp.json())["outcome"] == "duplicate"
    stale = _webhook(_provider_transfer(record, "awaiting_funds"), "evt_http_2")
    resp = await client.post(
        url, data=stale, headers={"X-Provider-Signature": sign(secret, 3, stale)}
    )
    assert (await resp.json())["outcome"] == "ignored"
    document = await (await client.get("/v2/openapi.json")).json()
    assert not [p for p in document["paths"] if p.startswith("/_provider")]


async def test_outbox_filters_and_clears(client: Client) -> None:
    ramp = ramp_of(client)
    first = stored(client)
    second = stored(
        client, id="rtr_http_3", provider_transfer_id="trf_http_3", email="Bo@Example.com"
    )
    ramp.emails.instructions(first, "rcl_a")
    ramp.emails.instructions(second, "rcl_b")
    resp = await client.get("/_sim/outbox")
    emails = (await resp.json())["data"]["emails"]
    assert [e["transferId"] for e in emails] == [first.id, second.id]
    assert emails[0]["kind"] == "instructions"
    assert emails[0]["smtp"] == "not_configured"
    assert "#claim=rcl_a" in emails[0]["body"]
    by_to = await (await client.get("/_sim/outbox", params={"to": "bo@example.com"})).json()
    assert [e["transferId"] for e in by_to["data"]["emails"]] == [second.id]
    by_id = await (await client.get("/_sim/outbox", params={"transferId": first.id})).json()
    assert [e["to"] for e in by_id["data"]["emails"]] == ["ada@example.com"]
    cleared = await client.delete("/_sim/outbox")
    assert (await cleared.json())["data"] == {"deleted": 2}
    assert (await (await client.get("/_sim/outbox")).json())["data"]["emails"] == []


async def test_the_transfer_read_documents_both_credentials(client: Client) -> None:
    # X-Ramp-Claim gives the full view; `?wallet=` alone, with no credential at all, the
    # masked one (RA52): the document offers the claim scheme or nothing (`{}`).
    document = await (await client.get("/v2/openapi.json")).json()
    operation = document["paths"]["/v2/ramp/transfers/{transfer_id}"]["get"]
    assert operation["security"] == [{"rampClaim": []}, {}]
    record = stored(client)
    ramp_of(client).transfers.store.add(record)
    resp = await client.get(f"/v2/ramp/transfers/{record.id}", params={"wallet": WALLET})
    assert resp.status == 200
    assert (await resp.json())["transfer"]["id"] == record.id
