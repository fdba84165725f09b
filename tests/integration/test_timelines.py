"""Timelines against a real `rfqsim serve` (real Anvil, the real maker fleet, an integrator's
maker bot over the real maker stream): every answer a maker can give appears in its RFQ's
timeline with its reason, the frames of the maker stream name their RFQ, and the history stays
bounded whatever the traffic."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from eth_account import Account

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers
from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client
from contracts.orders import RfqOrder, sign_order
from makers.client import MakerClient
from makers.quoting import quote_message
from rfqkit.maker_protocol import Decline, MakerQuote, Rfq
from rfqsim.pytest_plugin import RfqSim, RfqSimError
from tests.integration.firm_quotes import execute
from tests.integration.serve_process import serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("timelines")]

CHAIN = 97
WAIT_S = 30.0  # for what the simulator does by itself (a late answer, an event)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RfqSim]:
    with serve(tmp_path_factory.mktemp("timelines")) as served:
        yield RfqSim(served.api_url, served.info)


@pytest.fixture
def clean(sim: RfqSim) -> RfqSim:
    sim.reset()
    return sim


def wallet_of(sim: RfqSim, name: str) -> str:
    return str(next(w["address"] for w in sim.info["maker_wallets"] if w["name"] == name))


def exact_input(sim: RfqSim, whole: int = 10, **extra: Any) -> dict[str, Any]:
    return {
        "chainId": CHAIN,
        "sellToken": sim.token(CHAIN, "USDC"),
        "buyToken": sim.token(CHAIN, "USDT"),
        "sellAmount": str(whole * 10 ** decimals(sim, "USDC")),
        "taker": sim.demo_wallets[0]["address"],
        **extra,
    }


def decimals(sim: RfqSim, symbol: str) -> int:
    return int(next(t for t in sim.chain(CHAIN)["tokens"] if t["symbol"] == symbol)["decimals"])


async def firm(sim: RfqSim, body: dict[str, Any], key: str = "taker-test") -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {sim.demo_keys[key]}"}
    async with (
        aiohttp.ClientSession(base_url=sim.base_url, headers=headers) as session,
        session.post("/v2/rfq/request", json=body) as response,
    ):
        assert response.status == 200, await response.text()
        return dict((await response.json())["data"])


async def timeline_until(
    sim: RfqSim, rfq_id: str, done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The RFQ's timeline once `done` holds for it (what the simulator does after answering)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        timeline = dict(await asyncio.to_thread(sim.call, "GET", f"/_sim/rfqs/{rfq_id}"))
        if done(timeline) or time.monotonic() > deadline:
            assert done(timeline), timeline
            return timeline
        await asyncio.sleep(0.05)


def answers(timeline: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every `answered` step by maker name (wallet for a maker without one), oldest first."""
    out: dict[str, list[dict[str, Any]]] = {}
    for step in timeline["steps"]:
        if step["kind"] == "answered":
            out.setdefault(step["maker_name"] or step["maker"], []).append(step)
    return out


def final(timeline: dict[str, Any], maker: str) -> dict[str, Any]:
    return answers(timeline)[maker][-1]


async def test_quoted_declined_silent_and_late_appear_with_the_selection(clean: RfqSim) -> None:
    clean.set_maker("bravo", behaviour="decline")
    clean.set_maker("charlie", behaviour="silent")
    clean.set_maker("delta", behaviour="late", latency={"kind": "fixed", "ms": 10})
    quote = await firm(clean, exact_input(clean))
    assert quote["status"] == "quoted"
    timeline = await timeline_until(
        clean, quote["rfqId"], lambda t: final(t, "delta")["outcome"] == "late"
    )
    assert timeline["status"] == "quoted"
    assert {m["name"] for m in timeline["makers"]} == {"alpha", "bravo", "charlie", "delta"}
    assert final(timeline, "alpha")["outcome"] == "quoted"
    assert final(timeline, "bravo")["outcome"] == "declined"
    assert final(timeline, "bravo")["reason"] == "liquidity"
    assert [a["outcome"] for a in answers(timeline)["charlie"]] == ["silent"]
    # delta: silent when the budget ran out, then its answer arrived after it
    delta = answers(timeline)["delta"]
    assert [a["outcome"] for a in delta] == ["silent", "late"]
    budget = timeline["summary"]["reply_budget_ms"]
    assert delta[1]["latency_ms"] > budget
    assert all(a["latency_ms"] < budget for a in answers(timeline)["alpha"])
    (selected,) = [s for s in timeline["steps"] if s["kind"] == "selected"]
    assert selected["mode"] == "single"
    assert [w["name"] for w in selected["winners"]] == ["alpha"]
    assert {loser["name"]: loser["why"] for loser in selected["losers"]} == {
        "bravo": "declined",
        "charlie": "silent",
        "delta": "silent",
    }
    (responded,) = [s for s in timeline["steps"] if s["kind"] == "responded"]
    assert responded["status"] == "quoted"
    assert responded["expires_at"] == quote["quote"]["expiresAt"]
    kinds = [s["kind"] for s in timeline["steps"]]
    assert kinds[0] == "received"
    assert kinds.index("selected") < kinds.index("responded")
    # The maker stream's frames of this RFQ, quotes and declines included, name it.
    frames = clean.call("GET", "/_sim/maker-messages", query={"rfq_id": quote["rfqId"]})
    seen = {(f["maker_name"], f["direction"], f["message"]["type"]) for f in frames["messages"]}
    assert {
        ("alpha", "out", "rfq"),
        ("alpha", "in", "quote"),
        ("bravo", "in", "decline"),
        ("bravo", "out", "rfq"),
        ("delta", "in", "quote"),
    } <= seen
    assert all(f["rfq_id"] == quote["rfqId"] for f in frames["messages"])


async def test_bad_signature_and_underfunded_quotes_are_rejected_with_their_reason(
    clean: RfqSim,
) -> None:
    clean.set_maker("alpha", behaviour="bad_signature")
    quote = await firm(clean, exact_input(clean))
    timeline = await timeline_until(clean, quote["rfqId"], lambda t: "alpha" in answers(t))
    alpha = final(timeline, "alpha")
    assert (alpha["outcome"], alpha["reason"]) == ("rejected", "bad_signature")
    assert "signature" in alpha["detail"]
    assert "alpha" not in [w["name"] for w in timeline["summary"]["winners"]]

    clean.set_maker("alpha", behaviour="normal")
    clean.set_maker("bravo", behaviour="underfunded")
    # More USDT than bravo holds (1,000,000), less than it pretends to (ten times that).
    big = {
        **exact_input(clean),
        "sellAmount": None,
        "buyAmount": str(1_500_000 * 10 ** decimals(clean, "USDT")),
    }
    no_quote = await firm(clean, big)
    timeline = await timeline_until(clean, no_quote["rfqId"], lambda t: "bravo" in answers(t))
    bravo = answers(timeline)["bravo"][0]
    assert (bravo["outcome"], bravo["reason"]) == ("rejected", "underfunded")
    assert timeline["status"] == "no_quote"
    assert (
        clean.call("GET", "/_sim/rfqs", query={"status": "no_quote"})["items"][0]["id"]
        == (no_quote["rfqId"])
    )


async def integrator_bot(
    sim: RfqSim, answer: Callable[[Rfq, str], MakerQuote | Decline | None]
) -> tuple[MakerClient, str]:
    """An integrator's maker bot with its own wallet and credential, answering with `answer`."""
    account = Account.create()
    created = sim.call(
        "POST",
        "/_sim/keys",
        {
            "partner": "demo",
            "environment": "test",
            "scopes": ["maker:stream"],
            "maker_wallet": account.address,
        },
    )

    async def on_rfq(rfq: Rfq) -> MakerQuote | Decline | None:
        return answer(rfq, account.key.hex())

    client = MakerClient(sim.base_url, created["key"], on_rfq=on_rfq, name="bot")
    await client.start()
    return client, account.address


def signed(rfq: Rfq, key: str, *, fee_extra: int = 0, expires_ms: int | None = None) -> MakerQuote:
    assert rfq.maker_receives is not None
    assert rfq.fee_amount is not None
    expires = rfq.max_expires_at_ms if expires_ms is None else expires_ms
    order = RfqOrder(
        reactor=rfq.reactor,
        maker=Account.from_key(key).address,
        taker=rfq.taker,
        inputToken=rfq.buy_token,
        inputAmount=rfq.maker_receives,  # one for one: only the checks matter here
        outputToken=rfq.sell_token,
        outputAmount=rfq.maker_receives,
        feeAmount=rfq.fee_amount + fee_extra,
        nonce=int(time.time_ns()),
        deadline=-(-expires // 1000) + 60,
    )
    signature = sign_order(key, order, rfq.chain_id, rfq.signature_transfer)
    return quote_message(rfq.quote_id, expires, order, signature)


async def test_an_integrators_bot_sees_terms_and_short_expiry_rejections(clean: RfqSim) -> None:
    mode: dict[str, str] = {"now": "terms"}

    def answer(rfq: Rfq, key: str) -> MakerQuote:
        if mode["now"] == "terms":
            return signed(rfq, key, fee_extra=1)
        return signed(rfq, key, expires_ms=rfq.min_expires_at_ms - 1_000)

    bot, wallet = await integrator_bot(clean, answer)
    try:
        outcomes = []
        for now in ("terms", "expiry_too_short"):
            mode["now"] = now
            quote = await firm(clean, exact_input(clean, restrictedLiquidityWallets=[wallet]))
            assert quote["status"] == "no_quote"
            timeline = await timeline_until(clean, quote["rfqId"], lambda t: wallet in answers(t))
            step = final(timeline, wallet)
            assert step["maker_name"] is None  # not one of the fleet: its wallet stands
            outcomes.append((step["outcome"], step["reason"]))
            listed = clean.call("GET", "/_sim/rfqs", query={"maker": wallet})["items"][0]
            assert listed["id"] == quote["rfqId"]
            assert listed["makers"] == [{"wallet": wallet, "name": None}]
        assert outcomes == [("rejected", "terms"), ("rejected", "expiry_too_short")]
    finally:
        await bot.close()


async def test_a_filled_rfq_shows_its_fill_status_and_event(clean: RfqSim) -> None:
    quote = await firm(clean, exact_input(clean))
    await asyncio.to_thread(execute, clean, quote)
    timeline = await timeline_until(clean, quote["rfqId"], lambda t: t["status"] == "filled")
    kinds = [s["kind"] for s in timeline["steps"]]
    assert "fill" in kinds
    (fill,) = [s for s in timeline["steps"] if s["kind"] == "fill"]
    assert fill["maker_name"] in ("alpha", "bravo", "charlie", "delta")
    assert fill["tx_hash"].startswith("0x")
    assert fill["block"] > 0
    statuses = [s["status"] for s in timeline["steps"] if s["kind"] == "status"]
    assert statuses[-1] == "filled"
    events = [s for s in timeline["steps"] if s["kind"] == "event"]
    assert [e["type"] for e in events] == ["rfq.filled"]


async def test_reset_clears_the_timelines_and_a_snapshot_keeps_them(clean: RfqSim) -> None:
    quote = await firm(clean, exact_input(clean))
    clean.snapshot("timelines")
    try:
        clean.reset()
        assert clean.call("GET", "/_sim/rfqs")["items"] == []
        with pytest.raises(RfqSimError) as missing:
            clean.call("GET", f"/_sim/rfqs/{quote['rfqId']}")
        assert missing.value.status == 404
        clean.restore("timelines")
        restored = clean.call("GET", f"/_sim/rfqs/{quote['rfqId']}")
        assert restored["status"] == "quoted"
        assert any(s["kind"] == "selected" for s in restored["steps"])
    finally:
        clean.call("DELETE", "/_sim/snapshots/timelines")


def test_memory_keeps_the_newest_and_lists_page_through_the_history_file(
    tmp_path: Path,
) -> None:
    """Memory holds the last N timelines whatever the traffic (N small here); the older ones
    are moved to the history database by the sweep and stay listed, filtered and readable;
    a cursor pages through all of them, newest first, each once."""
    env = {**os.environ, "RFQSIM_TIMELINES__KEPT": "25"}
    with serve(tmp_path, env=env) as served:
        sim = RfqSim(served.api_url, served.info)
        for name in ("alpha", "bravo", "charlie", "delta"):
            sim.set_maker(name, behaviour="decline")  # no_quote at once: no slot stays held
        key = sim.call(
            "POST",
            "/_sim/keys",
            {
                "partner": "demo",
                "environment": "test",
                "scopes": ["trades:write"],
                "tier": "unlimited",
            },
        )["key"]
        other_taker = sim.demo_wallets[1]["address"]

        async def load() -> list[str]:
            headers = {"Authorization": f"Bearer {key}"}
            async with aiohttp.ClientSession(base_url=sim.base_url, headers=headers) as session:

                async def one(body: dict[str, Any]) -> str:
                    async with session.post("/v2/rfq/request", json=body) as response:
                        assert response.status == 200, await response.text()
                        return str((await response.json())["data"]["rfqId"])

                ids = [await one(exact_input(sim, taker=other_taker))]  # the oldest
                for _ in range(8):  # 80 more, ten at a time
                    ids += await asyncio.gather(*(one(exact_input(sim)) for _ in range(10)))
                return ids

        ids = asyncio.run(load())
        sim.call("POST", "/_sim/clock/advance", {"seconds": 11})  # a sweep: to the file
        listed = sim.call("GET", "/_sim/rfqs", query={"limit": 1000})
        assert listed["kept"] == 25
        everything = [item["id"] for item in listed["items"]]
        assert sorted(everything) == sorted(ids)
        assert everything[-1] == ids[0]
        created = [item["created_at"] for item in listed["items"]]
        assert created == sorted(created, reverse=True)  # newest first
        assert listed["next_cursor"] is None
        paged: list[str] = []
        cursor = None
        while True:
            query: dict[str, Any] = {"limit": 30, **({"cursor": cursor} if cursor else {})}
            page = sim.call("GET", "/_sim/rfqs", query=query)
            paged += [item["id"] for item in page["items"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert paged == everything  # each once, in the same order
        oldest = sim.call("GET", f"/_sim/rfqs/{ids[0]}")  # long out of memory
        assert (oldest["id"], oldest["status"]) == (ids[0], "no_quote")
        assert any(step["kind"] == "received" for step in oldest["steps"])
        mine = sim.call("GET", "/_sim/rfqs", query={"taker": other_taker.lower()})
        assert [item["id"] for item in mine["items"]] == [ids[0]]
        pair = f"{sim.token(CHAIN, 'USDC')}/{sim.token(CHAIN, 'USDT')}"
        assert (
            len(sim.call("GET", "/_sim/rfqs", query={"pair": pair, "limit": 1000})["items"]) == 81
        )
        reverse = f"{sim.token(CHAIN, 'USDT')}/{sim.token(CHAIN, 'USDC')}"
        assert sim.call("GET", "/_sim/rfqs", query={"pair": reverse})["items"] == []
        with pytest.raises(RfqSimError) as bad:
            sim.call("GET", "/_sim/rfqs", query={"cursor": "not-a-cursor"})
        assert bad.value.status == 400


async def test_a_v1_swap_and_the_orders_it_holds_have_timelines(clean: RfqSim) -> None:
    query: dict[str, str | int] = {
        "chainId": CHAIN,
        "sellToken": clean.token(CHAIN, "USDC"),
        "buyToken": clean.token(CHAIN, "NGNS"),
    }
    taker = Account.create().address
    headers = {"Authorization": f"Bearer {clean.demo_keys['taker-test']}"}
    async with aiohttp.ClientSession(base_url=clean.base_url, headers=headers) as session:
        deadline = time.monotonic() + WAIT_S
        while True:  # the fleet's resting orders, once its book makers have placed them
            async with session.get("/v1/order-book", params=query) as response:
                assert response.status == 200, await response.text()
                offers = (await response.json())["data"]["offers"]
            if offers or time.monotonic() > deadline:
                assert offers
                break
            await asyncio.sleep(1)  # the key's 60 requests a minute are shared with the test
        body = {**query, "sellAmount": str(1000 * 10**6), "taker": taker}
        async with session.post("/v1/swaps", json=body) as response:
            assert response.status == 201, await response.text()
            swap = (await response.json())["data"]
    timeline = clean.call("GET", f"/_sim/swaps/{swap['id']}")
    assert timeline["status"] == "QUOTED"
    assert timeline["summary"]["taker"] == taker
    (built,) = [s for s in timeline["steps"] if s["kind"] == "built"]
    order_ids = [order_id for order_id, _ in built["orders"]]
    assert order_ids
    assert {m["name"] for m in timeline["makers"]} <= {"bravo", "charlie"}
    order = clean.call("GET", f"/_sim/limit-orders/{order_ids[0]}")
    assert order["status"] == "ACTIVE"
    placed = next(s for s in order["steps"] if s["kind"] == "placed")
    assert placed["maker_name"] in ("bravo", "charlie")
    (held,) = [s for s in order["steps"] if s["kind"] == "held"]
    assert (held["swap_id"], held["taker"]) == (swap["id"], taker)
    listed = clean.call("GET", "/_sim/swaps", query={"taker": taker.lower()})["items"]
    assert [item["id"] for item in listed] == [swap["id"]]
    by_maker = clean.call("GET", "/_sim/limit-orders", query={"maker": placed["maker_name"]})
    assert order_ids[0] in {item["id"] for item in by_maker["items"]}


async def test_a_ramp_transfer_shows_its_provider_states(clean: RfqSim) -> None:
    client = Client(clean.base_url)
    ramp = Ramp(client, SimControl(client))
    wallet = fresh_wallet()
    ramp.registered(wallet)
    transfers = Transfers(ramp)
    created = transfers.create(transfers.body(wallet, "sell", "500"))
    transfer_id = created.transfer["id"]
    timeline = clean.call("GET", f"/_sim/transfers/{transfer_id}")
    assert timeline["status"] == "AWAITING_FUNDS"
    assert timeline["steps"][0]["kind"] == "created"
    assert timeline["summary"]["side"] == "sell"
    transfers.pay_in(transfer_id)
    deadline = time.monotonic() + WAIT_S
    while True:  # the provider's status webhook arrives by itself
        timeline = clean.call("GET", f"/_sim/transfers/{transfer_id}")
        moved = [s for s in timeline["steps"] if s["kind"] == "status"]
        if moved or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert moved, timeline
    assert moved[0]["status"] != "AWAITING_FUNDS"
    provider = [s for s in timeline["steps"] if s["kind"] == "provider"]
    assert any(p["outcome"] == "applied" and p["source"] for p in provider)
    assert timeline["status"] == moved[-1]["status"]
