"""Reset, snapshots and the request journal against a real `rfqsim serve` (real Anvil, real
makers, real HTTP): what an integrator's suite relies on between its tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from eth_account import Account

from rfqkit import json_rpc
from rfqsim.pytest_plugin import RfqSim, RfqSimError
from tests.integration.serve_process import serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("state-control")]

CHAIN = 97


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RfqSim]:
    with serve(tmp_path_factory.mktemp("state-control")) as served:
        yield RfqSim(served.api_url, served.info)


@pytest.fixture
def clean(sim: RfqSim) -> RfqSim:
    sim.reset()
    return sim


def quote_body(sim: RfqSim, wallet: int = 0) -> dict[str, Any]:
    return {
        "chainId": CHAIN,
        "sellToken": sim.token(CHAIN, "USDC"),
        "buyToken": sim.token(CHAIN, "USDT"),
        "sellAmount": "10000000",
        "taker": sim.demo_wallets[wallet]["address"],
    }


def keyed(sim: RfqSim) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        base_url=sim.base_url,
        headers={"Authorization": f"Bearer {sim.demo_keys['taker-test']}"},
    )


async def quote(session: aiohttp.ClientSession, sim: RfqSim) -> dict[str, Any]:
    async with session.post("/v2/rfq/request", json=quote_body(sim)) as response:
        assert response.status == 200, await response.text()
        return dict((await response.json())["data"])


async def status_of(session: aiohttp.ClientSession, rfq_id: str) -> int:
    async with session.get(f"/v2/rfq/{rfq_id}") as response:
        return response.status


async def test_reset_forgets_rfqs_keys_webhooks_and_the_clock(clean: RfqSim) -> None:
    async with keyed(clean) as session:
        firm = await quote(session, clean)
        created = clean.call(
            "POST",
            "/_sim/keys",
            {"partner": "demo", "environment": "test", "scopes": ["trades:read"]},
        )
        hook = {"url": "https://hooks.example.test/a", "eventTypes": ["rfq.filled"]}
        async with session.post("/v1/webhooks", json=hook) as response:
            assert response.status == 201
        clean.advance_clock(600)
        result = clean.reset()
        assert result["interrupted_requests"] == 0
        assert await status_of(session, firm["rfqId"]) == 404
        async with session.get("/v1/webhooks") as response:
            assert (await response.json())["data"] == []
    keys = clean.call("GET", "/_sim/keys")
    assert created["key_id"] not in {k["key_id"] for k in keys["keys"]}
    assert clean.call("GET", "/_sim/clock")["offset_seconds"] == 0


def service_second(sim: RfqSim) -> int:
    """The service clock's whole second now (what the expire control makes `expiresAt`)."""
    now = datetime.fromisoformat(str(sim.call("GET", "/_sim/clock")["now"]).replace("Z", "+00"))
    return int(now.timestamp())


async def test_after_a_reset_no_block_is_stamped_before_the_service_clock(clean: RfqSim) -> None:
    # Anvil's evm_revert puts the node's time back to the baseline's block: with the baseline
    # two seconds old, a block mined after the reset would be stamped two seconds before the
    # service clock (a late fill reading filledAt before expiresAt, decision F25).
    baseline = int((await rpc(clean, "eth_getBlockByNumber", ["latest", False]))["timestamp"], 16)
    deadline = time.monotonic() + 10
    while service_second(clean) < baseline + 2:  # the baseline grows old, as between tests
        assert time.monotonic() < deadline, "the service clock does not move"
        await asyncio.sleep(0.1)
    clean.reset()
    before = service_second(clean)
    await rpc(clean, "evm_mine", [])
    block = await rpc(clean, "eth_getBlockByNumber", ["latest", False])
    assert int(block["timestamp"], 16) >= before, (block["timestamp"], before)


async def book_offers(session: aiohttp.ClientSession, query: dict[str, Any]) -> list[Any]:
    """The v1 order book's offers once the fleet's resting orders are there."""
    deadline = time.monotonic() + 30
    while True:
        async with session.get("/v1/order-book", params=query) as response:
            assert response.status == 200, await response.text()
            offers = list((await response.json())["data"]["offers"])
        if offers or time.monotonic() > deadline:
            assert offers, "no resting orders from the fleet within 30 s"
            return offers
        await asyncio.sleep(1)  # the key's 60 requests a minute are shared with the test


async def test_reset_forgets_v1_swaps_a_snapshot_keeps_them_and_the_book_is_rebuilt(
    clean: RfqSim,
) -> None:
    query = {
        "chainId": CHAIN,
        "sellToken": clean.token(CHAIN, "USDC"),
        "buyToken": clean.token(CHAIN, "NGNS"),
    }
    body = {**query, "sellAmount": str(1000 * 10**6), "taker": Account.create().address}
    async with keyed(clean) as session:
        await book_offers(session, query)
        async with session.post("/v1/swaps", json=body) as response:
            assert response.status == 201, await response.text()
            swap_id = (await response.json())["data"]["id"]
        clean.snapshot("v1-swap")
        clean.reset()
        async with session.get(f"/v1/swaps/{swap_id}") as response:
            assert response.status == 404, await response.text()
        # A snapshot holds the book and the swaps: restored, the swap is there again.
        clean.restore("v1-swap")
        clean.call("DELETE", "/_sim/snapshots/v1-swap")  # snapshots outlive resets
        async with session.get(f"/v1/swaps/{swap_id}") as response:
            assert response.status == 200, await response.text()
        clean.reset()
        # The fleet rests its orders again on the reverted chain, and they compose a swap (with
        # the same id as the first: the seeded random source is back at its start-up state).
        await book_offers(session, query)
        async with session.post("/v1/swaps", json=body) as response:
            assert response.status == 201, await response.text()
            again = (await response.json())["data"]
        assert (again["id"], again["status"]) == (swap_id, "QUOTED")


async def test_reset_can_keep_the_webhook_registry(clean: RfqSim) -> None:
    async with keyed(clean) as session:
        hook = {"url": "https://hooks.example.test/kept", "eventTypes": ["rfq.filled"]}
        async with session.post("/v1/webhooks", json=hook) as response:
            assert response.status == 201
        firm = await quote(session, clean)
        result = clean.reset(keep=("webhooks",))
        assert result["kept"] == ["webhooks.registry"]
        async with session.get("/v1/webhooks") as response:
            assert [e["url"] for e in (await response.json())["data"]] == [hook["url"]]
        assert await status_of(session, firm["rfqId"]) == 404


async def test_reset_under_parallel_traffic_never_leaves_half_a_state(clean: RfqSim) -> None:
    """Forty clients hammer quotes and reads while resets run; every answer is a success or the
    transient 503 state_reset, never a 500, and nothing created before the last reset is
    readable after it."""
    statuses: list[int] = []
    created: list[str] = []
    stop = asyncio.Event()
    answered = asyncio.Condition()  # notified after every answer

    async def answers(count: int) -> None:
        async with answered:
            await asyncio.wait_for(answered.wait_for(lambda: len(statuses) >= count), 60)

    async def client() -> None:
        async with keyed(clean) as session:
            while not stop.is_set():
                async with session.post("/v2/rfq/request", json=quote_body(clean)) as response:
                    body = await response.json()
                    statuses.append(response.status)
                    async with answered:
                        answered.notify_all()
                    if response.status == 503:
                        assert body["error"]["details"]["reason"] in ("state_reset",), body
                        assert response.headers["Retry-After"] == "1"
                    elif response.status == 200 and body["data"]["status"] == "quoted":
                        created.append(body["data"]["rfqId"])

    tasks = [asyncio.create_task(client()) for _ in range(40)]
    try:
        for _ in range(3):
            await answers(len(statuses) + 20)  # traffic is flowing before each reset
            await asyncio.to_thread(clean.reset)
            await answers(len(statuses) + 20)  # and after it
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    assert set(statuses) <= {200, 429, 503}, sorted(set(statuses))
    assert statuses.count(200) > 0
    before_last = list(created)
    await asyncio.to_thread(clean.reset)
    async with keyed(clean) as session:
        found = [await status_of(session, rfq_id) for rfq_id in before_last[-20:]]
    assert set(found) == {404}


async def test_a_snapshot_brings_back_records_and_chain_state_together(clean: RfqSim) -> None:
    async with keyed(clean) as session:
        firm = await quote(session, clean)
        sent = await pay_usdt(clean, SINK, 123)  # on chain, before the snapshot
        snapshot = clean.snapshot("one-quote")
        assert snapshot["chains"] == [56, 97]
        clean.reset()
        assert await status_of(session, firm["rfqId"]) == 404
        assert await usdt_of(clean, SINK) == 0
        assert await rpc(clean, "eth_getTransactionReceipt", [sent]) is None
        result = clean.restore("one-quote")
        assert result["interrupted_requests"] == 0
        assert await status_of(session, firm["rfqId"]) == 200
        assert await usdt_of(clean, SINK) == 123
        assert (await rpc(clean, "eth_getTransactionReceipt", [sent]))["status"] == "0x1"
        # The snapshot stays: restoring twice works.
        clean.reset()
        clean.restore("one-quote")
        assert await status_of(session, firm["rfqId"]) == 200
    listed = clean.call("GET", "/_sim/snapshots")["snapshots"]
    assert [s["name"] for s in listed] == ["one-quote"]
    assert clean.call("DELETE", "/_sim/snapshots/one-quote") == {
        "name": "one-quote",
        "deleted": True,
    }


SINK = "0x00000000000000000000000000000000000c0ffe"


async def rpc(sim: RfqSim, method: str, params: list[Any]) -> Any:
    return await asyncio.to_thread(json_rpc.rpc, sim.rpc_urls[CHAIN], method, params)


async def usdt_of(sim: RfqSim, owner: str) -> int:
    data = "0x70a08231" + owner[2:].lower().rjust(64, "0")
    out = await rpc(sim, "eth_call", [{"to": sim.token(CHAIN, "USDT"), "data": data}, "latest"])
    return int(out, 16)


async def pay_usdt(sim: RfqSim, to: str, units: int) -> str:
    """A USDT transfer from demo wallet 1, mined; returns its hash."""
    wallet = Account.from_key(sim.demo_wallets[1]["private_key"])
    data = "0xa9059cbb" + to[2:].lower().rjust(64, "0") + hex(units)[2:].rjust(64, "0")
    nonce = int(await rpc(sim, "eth_getTransactionCount", [wallet.address, "pending"]), 16)
    signed = wallet.sign_transaction(
        {
            "chainId": CHAIN,
            "nonce": nonce,
            "to": sim.token(CHAIN, "USDT"),
            "data": data,
            "value": 0,
            "gas": 200_000,
            "gasPrice": int(await rpc(sim, "eth_gasPrice", []), 16),
        }
    )
    tx_hash = str(await rpc(sim, "eth_sendRawTransaction", ["0x" + signed.raw_transaction.hex()]))
    deadline = time.monotonic() + 30
    while (receipt := await rpc(sim, "eth_getTransactionReceipt", [tx_hash])) is None:
        assert time.monotonic() < deadline, f"{tx_hash} was never mined"
        await asyncio.sleep(0.01)
    assert receipt["status"] == "0x1"
    return tx_hash


def test_snapshot_errors_are_envelopes(clean: RfqSim) -> None:
    with pytest.raises(RfqSimError) as unknown:
        clean.restore("never-taken")
    assert unknown.value.status == 404
    assert unknown.value.body["error"]["details"]["reason"] == "unknown_snapshot"
    with pytest.raises(RfqSimError) as bad_name:
        clean.snapshot("../etc")
    assert bad_name.value.status == 400
    assert bad_name.value.body["error"]["details"]["issues"][0]["field"] == "name"
    clean.snapshot("twice")
    with pytest.raises(RfqSimError) as duplicate:
        clean.snapshot("twice")
    assert duplicate.value.status == 409
    clean.call("DELETE", "/_sim/snapshots/twice")
    with pytest.raises(RfqSimError) as bad_keep:
        clean.call("POST", "/_sim/reset", {"keep": ["everything"]})
    assert bad_keep.value.status == 400


async def test_the_journal_shows_requests_and_maker_messages(clean: RfqSim) -> None:
    async with keyed(clean) as session:
        async with session.post("/v2/rfq/request", json=quote_body(clean)) as response:
            request_id = response.headers["X-Request-Id"]
            firm = (await response.json())["data"]
        async with session.get("/v2/rfq/levels", params={"chainId": "97"}) as response:
            assert response.status == 200
    [entry] = clean.requests(request_id=request_id)
    assert entry["status"] == 200
    assert entry["request"]["body"] == quote_body(clean)
    # The claim token in the answer is redacted; the rest of the answer is there.
    assert entry["response"]["body"]["data"]["rfqId"] == firm["rfqId"]
    assert firm["claimToken"] not in str(entry)
    assert [e["path"] for e in clean.requests(path="/v2/rfq/*", method="GET")] == ["/v2/rfq/levels"]
    maker = firm["quote"]["orders"][0]["maker"]
    frames = clean.call("GET", "/_sim/maker-messages", query={"maker": maker})["messages"]
    kinds = {(f["direction"], f["message"]["type"]) for f in frames}
    assert ("out", "rfq") in kinds
    assert ("in", "quote") in kinds
    named = next(
        m["name"] for m in clean.call("GET", "/_sim/makers")["fleet"] if m["wallet"] == maker
    )
    by_name = clean.call("GET", "/_sim/maker-messages", query={"maker": named, "direction": "in"})
    assert by_name["messages"]
    assert {f["wallet"] for f in by_name["messages"]} == {maker}
    assert {f["direction"] for f in by_name["messages"]} == {"in"}
    later = clean.call("GET", "/_sim/requests", query={"since": "2999-01-01T00:00:00Z"})
    assert later["requests"] == []
    assert clean.call("DELETE", "/_sim/requests")["cleared"] >= 2
    assert clean.requests(request_id=request_id) == []


async def test_bad_journal_filters_are_400(clean: RfqSim) -> None:
    with pytest.raises(RfqSimError) as bad:
        clean.requests(status="teapot")
    assert bad.value.status == 400
    assert bad.value.body["error"]["details"]["issues"][0]["field"] == "status"
    with pytest.raises(RfqSimError) as naive:  # a time without its zone is ambiguous
        clean.requests(since="2026-01-01T00:00:00")
    assert naive.value.body["error"]["details"]["issues"][0]["field"] == "since"


def test_the_example_scenarios_load_and_run(clean: RfqSim) -> None:
    for path in sorted(Path("scenarios").glob("*.yaml")):
        started = clean.start_scenario(path.resolve())
        assert started["name"] == path.stem
        assert started["errors"] == []
    # The last one (venue-pause) set a balance at once and pauses the venue at +1 min.
    clean.advance_clock(60)
    assert wait_for(lambda: clean.call("GET", "/_sim/faults")["venue_paused"])
    assert clean.call("GET", "/_sim/scenarios")["steps_done"] == 1
    clean.reset()
    assert clean.call("GET", "/_sim/scenarios")["name"] is None
    assert clean.call("GET", "/_sim/faults")["venue_paused"] is False


def wait_for(probe: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_a_bad_scenario_is_400_naming_the_path(clean: RfqSim) -> None:
    text = (
        "version: 1\nname: broken\nmakers:\n  zulu: {behaviour: silent}\n"
        "schedule:\n  - at: tomorrow\n    faults: {venue_paused: true}\n"
        "  - at: 30s\n    colour: blue\n"
    )
    with pytest.raises(RfqSimError) as bad:
        clean.start_scenario(text)
    assert bad.value.status == 400
    fields = {i["field"] for i in bad.value.body["error"]["details"]["issues"]}
    assert fields == {"schedule.0.at", "schedule.1.colour"}
    with pytest.raises(RfqSimError) as unknown_maker:
        clean.start_scenario("version: 1\nname: ghost\nmakers:\n  zulu: {behaviour: silent}\n")
    assert unknown_maker.value.status == 400
    [issue] = unknown_maker.value.body["error"]["details"]["issues"]
    assert issue["field"] == "makers.zulu"
    with pytest.raises(RfqSimError) as not_yaml:
        clean.start_scenario("version: [1\n")
    assert not_yaml.value.status == 400
    assert "line" in not_yaml.value.body["error"]["details"]["issues"][0]["message"]
