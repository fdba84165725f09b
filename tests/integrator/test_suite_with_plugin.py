"""An integrator's test suite, written against the pytest plugin (rfqsim/pytest_plugin.py) the
way docs/testing-with-rfqsim.md tells an integrator to: the `rfqsim` fixture hands each test a
simulator reset to its start-up state; the tests call the API with their own HTTP client
(aiohttp) and their own signing (eth-account), not with rfqsim's code.

Twenty tests, each from a clean reset, one session simulator (bench/state.py measures this
suite against restarts). Several of them would fail if the reset left anything behind: each
starts by checking what the one before it may have changed (balances, webhooks, faults,
clock, journal)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from eth_abi.abi import decode, encode
from eth_account import Account
from eth_utils.abi import function_signature_to_4byte_selector

from rfqkit import json_rpc
from rfqsim.pytest_plugin import RfqSim

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("rfqsim-plugin")]

CHAIN = 97
USDC_10 = "10000000"  # 10 USDC (6 decimals)
WAIT_S = 30.0


@pytest.fixture
async def http(rfqsim: RfqSim) -> AsyncIterator[aiohttp.ClientSession]:
    key = rfqsim.demo_keys["taker-test"]
    async with aiohttp.ClientSession(
        base_url=rfqsim.base_url, headers={"Authorization": f"Bearer {key}"}
    ) as session:
        yield session


def quote_body(rfqsim: RfqSim, *, sell_amount: str = USDC_10) -> dict[str, Any]:
    return {
        "chainId": CHAIN,
        "sellToken": rfqsim.token(CHAIN, "USDC"),
        "buyToken": rfqsim.token(CHAIN, "USDT"),
        "sellAmount": sell_amount,
        "taker": rfqsim.demo_wallets[0]["address"],
    }


async def rpc(rfqsim: RfqSim, method: str, params: list[Any]) -> Any:
    return await asyncio.to_thread(json_rpc.rpc, rfqsim.rpc_urls[CHAIN], method, params)


async def balance_of(rfqsim: RfqSim, token: str, owner: str) -> int:
    data = function_signature_to_4byte_selector("balanceOf(address)") + encode(["address"], [owner])
    out = await rpc(rfqsim, "eth_call", [{"to": token, "data": "0x" + data.hex()}, "latest"])
    value: int = decode(["uint256"], bytes.fromhex(out[2:]))[0]
    return value


async def send(rfqsim: RfqSim, private_key: str, tx: dict[str, Any]) -> dict[str, Any]:
    sender = Account.from_key(private_key)
    nonce = int(await rpc(rfqsim, "eth_getTransactionCount", [sender.address, "pending"]), 16)
    gas_price = int(await rpc(rfqsim, "eth_gasPrice", []), 16)
    signed = sender.sign_transaction(
        {
            "chainId": CHAIN,
            "nonce": nonce,
            "to": tx["to"],
            "data": tx["data"],
            "value": int(tx["value"]),
            "gas": 600_000,
            "gasPrice": gas_price,
        }
    )
    tx_hash = await rpc(rfqsim, "eth_sendRawTransaction", ["0x" + signed.raw_transaction.hex()])
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        receipt = await rpc(rfqsim, "eth_getTransactionReceipt", [tx_hash])
        if receipt is not None:
            assert receipt["status"] == "0x1", receipt
            return dict(receipt)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no receipt for {tx_hash}")


async def firm_quote(http: aiohttp.ClientSession, body: dict[str, Any]) -> dict[str, Any]:
    async with http.post("/v2/rfq/request", json=body) as response:
        assert response.status == 200, await response.text()
        return dict((await response.json())["data"])


async def wait_status(http: aiohttp.ClientSession, rfq_id: str, wanted: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    record: dict[str, Any] = {}
    while time.monotonic() < deadline:
        async with http.get(f"/v2/rfq/{rfq_id}") as response:
            record = (await response.json())["data"]
        if record["status"] == wanted:
            return record
        await asyncio.sleep(0.05)
    raise AssertionError(f"{rfq_id} never became {wanted}: {record}")


async def test_health_answers(http: aiohttp.ClientSession) -> None:
    async with http.get("/v2/health") as response:
        assert response.status == 200
        assert (await response.json())["data"]["status"] == "ok"


async def test_a_firm_quote_for_the_demo_taker(rfqsim: RfqSim, http: aiohttp.ClientSession) -> None:
    quote = await firm_quote(http, quote_body(rfqsim))
    assert quote["status"] == "quoted"
    assert quote["transactions"]["swap"]["chainId"] == CHAIN


async def test_the_swap_settles_and_the_record_turns_filled(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    taker = rfqsim.demo_wallets[0]
    usdt = rfqsim.token(CHAIN, "USDT")
    before = await balance_of(rfqsim, usdt, taker["address"])
    quote = await firm_quote(http, quote_body(rfqsim))
    await send(rfqsim, taker["private_key"], quote["transactions"]["approval"])
    await send(rfqsim, taker["private_key"], quote["transactions"]["swap"])
    record = await wait_status(http, quote["rfqId"], "filled")
    assert await balance_of(rfqsim, usdt, taker["address"]) == before + int(record["buyAmount"])


async def test_balances_start_where_start_up_left_them(rfqsim: RfqSim) -> None:
    # The swap test before this one (same worker, same simulator) moved these; reset put
    # the chain back: every demo wallet holds the funded amount again.
    funded = rfqsim.info["funding"]["token_whole_units"] * 10**6
    taker = rfqsim.demo_wallets[0]["address"]
    assert await balance_of(rfqsim, rfqsim.token(CHAIN, "USDC"), taker) == funded


async def test_more_than_the_taker_holds_is_refused(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    async with http.post("/v2/rfq/request", json=quote_body(rfqsim, sell_amount="9" * 30)) as r:
        assert r.status == 400
        assert (await r.json())["error"]["details"]["reason"] == "insufficient_funds"


async def test_silent_makers_mean_no_quote(rfqsim: RfqSim, http: aiohttp.ClientSession) -> None:
    for maker in ("alpha", "bravo", "charlie", "delta"):
        async with http.patch(f"/_sim/makers/{maker}", json={"behaviour": "silent"}) as response:
            assert response.status == 200
    quote = await firm_quote(http, quote_body(rfqsim))
    assert quote["status"] == "no_quote"


async def test_makers_quote_again_after_the_reset(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    # The test before silenced every maker; the reset restarted them with their start-up
    # configuration.
    async with http.get("/_sim/makers") as response:
        fleet = (await response.json())["data"]["fleet"]
    assert {m["name"]: m["behaviour"] for m in fleet} == {
        "alpha": "normal",
        "bravo": "normal",
        "charlie": "normal",
        "delta": "flaky",  # the default fleet's flaky maker
    }
    assert (await firm_quote(http, quote_body(rfqsim)))["status"] == "quoted"


async def test_a_paused_venue_answers_503(rfqsim: RfqSim, http: aiohttp.ClientSession) -> None:
    async with http.post("/_sim/faults", json={"venue_paused": True}) as response:
        assert response.status == 200
    async with http.post("/v2/rfq/request", json=quote_body(rfqsim)) as response:
        assert response.status == 503
        assert (await response.json())["error"]["code"] == "venue_unavailable"


async def test_faults_are_clear_at_the_start(http: aiohttp.ClientSession) -> None:
    async with http.get("/_sim/faults") as response:
        faults = (await response.json())["data"]
    assert faults == {
        "chain_unreachable": [],
        "venue_paused": False,
        "internal_errors": 0,
        "indexer_paused": [],
    }


async def test_an_unexecuted_quote_expires_when_the_clock_moves(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    quote = await firm_quote(http, quote_body(rfqsim))
    rfqsim.advance_clock(3600)
    record = await wait_status(http, quote["rfqId"], "expired")
    assert record["rfqId"] == quote["rfqId"]


async def test_the_clock_starts_with_no_offset(http: aiohttp.ClientSession) -> None:
    async with http.get("/_sim/clock") as response:
        assert (await response.json())["data"]["offset_seconds"] == 0


async def test_a_registered_webhook_is_listed(http: aiohttp.ClientSession) -> None:
    body = {"url": "https://hooks.example.test/rfq", "eventTypes": ["rfq.filled"]}
    async with http.post("/v1/webhooks", json=body) as response:
        assert response.status == 201, await response.text()
    async with http.get("/v1/webhooks") as response:
        listed = (await response.json())["data"]
    assert [e["url"] for e in listed] == ["https://hooks.example.test/rfq"]


async def test_no_webhook_is_registered_at_the_start(http: aiohttp.ClientSession) -> None:
    async with http.get("/v1/webhooks") as response:
        assert (await response.json())["data"] == []


async def test_the_journal_shows_the_exact_request_sent(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    body = quote_body(rfqsim)
    async with http.post("/v2/rfq/request", json=body) as response:
        request_id = response.headers["X-Request-Id"]
    [entry] = rfqsim.requests(request_id=request_id)
    assert entry["method"] == "POST"
    assert entry["path"] == "/v2/rfq/request"
    assert entry["request"]["body"] == body
    assert entry["key_prefix"] == rfqsim.demo_keys["taker-test"].split(".")[0]
    assert rfqsim.demo_keys["taker-test"] not in json.dumps(entry)  # the secret is not kept


async def test_the_journal_starts_empty(rfqsim: RfqSim) -> None:
    # The reset emptied it; the fixture's reset call is the one request recorded since.
    assert [e["path"] for e in rfqsim.requests()] == ["/_sim/reset"]


async def test_a_bad_body_is_400_with_issues(http: aiohttp.ClientSession) -> None:
    async with http.post("/v2/rfq/request", json={"chainId": CHAIN, "bogus": 1}) as response:
        assert response.status == 400
        issues = (await response.json())["error"]["details"]["issues"]
    assert any(issue["field"] == "bogus" for issue in issues)


async def test_an_unknown_rfq_is_404(http: aiohttp.ClientSession) -> None:
    async with http.get("/v2/rfq/rfq_000000000000000000000000") as response:
        assert response.status == 404


async def test_the_ladder_has_levels(http: aiohttp.ClientSession) -> None:
    async with http.get("/v2/rfq/levels", params={"chainId": str(CHAIN)}) as response:
        assert response.status == 200
        ladder = (await response.json())["data"]
    assert ladder


async def test_a_keyless_taker_proves_control_and_reads_with_the_claim(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    taker = Account.from_key(rfqsim.demo_wallets[1]["private_key"])
    async with http.get("/_sim/clock") as response:
        now_ms = int(time.time() * 1000 + (await response.json())["data"]["offset_seconds"] * 1000)
    nonce = "0x" + secrets.token_hex(32)
    signed = taker.sign_typed_data(
        domain_data={"name": "Service Taker Control", "version": "1", "chainId": CHAIN},
        message_types={
            "TakerControl": [
                {"name": "taker", "type": "address"},
                {"name": "chainId", "type": "uint256"},
                {"name": "nonce", "type": "bytes32"},
                {"name": "issuedAt", "type": "uint256"},
            ]
        },
        message_data={"taker": taker.address, "chainId": CHAIN, "nonce": nonce, "issuedAt": now_ms},
    )
    body = {
        **quote_body(rfqsim),
        "taker": taker.address,
        "takerProof": {
            "nonce": nonce,
            "issuedAt": now_ms,
            "signature": "0x" + bytes(signed.signature).hex(),
        },
    }
    async with aiohttp.ClientSession(base_url=rfqsim.base_url) as keyless:
        async with keyless.post("/v2/rfq/request", json=body) as response:
            assert response.status == 200, await response.text()
            quote = (await response.json())["data"]
        headers = {"X-Rfq-Claim": quote["claimToken"]}
        async with keyless.get(f"/v2/rfq/{quote['rfqId']}", headers=headers) as response:
            assert response.status == 200
            assert (await response.json())["data"]["rfqId"] == quote["rfqId"]


async def test_a_scenario_pauses_the_venue_on_the_clock(
    rfqsim: RfqSim, http: aiohttp.ClientSession
) -> None:
    rfqsim.start_scenario(
        "version: 1\nname: pause-soon\nschedule:\n  - at: 1m\n    faults: {venue_paused: true}\n"
    )
    assert (await firm_quote(http, quote_body(rfqsim)))["status"] == "quoted"
    rfqsim.advance_clock(60)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        async with http.get("/_sim/faults") as response:
            if (await response.json())["data"]["venue_paused"]:
                break
        await asyncio.sleep(0.02)
    async with http.post("/v2/rfq/request", json=quote_body(rfqsim)) as response:
        assert response.status == 503
