"""Per-object time controls against a real `rfqsim serve` (docs/decisions.md TT1-TT3): each
outcome and the webhook event it sends, with real transactions on Anvil. `expire` lapses one
quote (rfq.expired) and leaves the caller's other live quote and the clock alone; the swap
mined afterwards is the late fill. `give-up` fails a submitted RFQ `not_landed` or `reverted`
(rfq.failed), refuses a transaction that landed (409) and an unreadable chain (502), and a fill
after it is the late correction. `release` gives back an ended RFQ's outstanding slot."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from conformance.calls.rfq_calls import random_tx_hash
from tests.integration.rfq_world import (
    CHAIN_ID,
    Api,
    PartnerEvents,
    execute,
    mined_ok,
    partner_events,
    send_tx,
)
from tests.integration.serve_process import serve

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class World:
    api: Api
    key: str  # a key of the partner whose endpoint `events` is
    events: PartnerEvents


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with serve(tmp_path_factory.mktemp("time-controls")) as served:
        api = Api(served.api_url, served.info)
        key = api.data(
            "POST",
            "/_sim/keys",
            {
                "partner": "time-travel",
                "environment": "test",
                "scopes": ["trades:write", "trades:read", "webhooks:manage"],
            },
        )["key"]
        with partner_events(api, key) as events:
            yield World(api, key, events)


def control(world: World, rfq_id: str, action: str) -> dict[str, object]:
    record: dict[str, object] = world.api.data("POST", f"/_sim/rfqs/{rfq_id}/{action}")
    return record


def test_expire_lapses_one_quote_and_a_swap_after_it_is_the_late_fill(world: World) -> None:
    api, key = world.api, world.key
    taker = api.demo_wallet(0)
    other = api.quote(key, taker)  # the caller's other live quote: nothing may touch it
    target = api.quote(key, taker)
    rfq_id = target["rfqId"]
    # Still live: give-up and release are for other states.
    error = api.error("POST", f"/_sim/rfqs/{rfq_id}/give-up", 409)
    assert (error["code"], error["details"]) == (
        "conflict",
        {"reason": "not_submitted", "status": "quoted"},
    )
    error = api.error("POST", f"/_sim/rfqs/{rfq_id}/release", 409)
    assert error["details"] == {"reason": "still_live", "status": "quoted"}

    before = api.now()
    lapsed = control(world, rfq_id, "expire")
    assert (lapsed["rfqId"], lapsed["status"]) == (rfq_id, "expired")
    assert str(lapsed["expiresAt"]) <= api.now()
    assert str(lapsed["expiresAt"]) >= before[:19]  # now, to the whole second
    assert api.record(rfq_id, key) == lapsed
    event = world.events.wait("rfq.expired", rfq_id)
    assert (event["id"], event["data"]["rfq"]["failReason"]) == (f"rfq.expired:{rfq_id}", None)
    # Nothing else moved: the service clock and the other quote.
    assert api.data("GET", "/_sim/clock")["offset_seconds"] == 0
    untouched = api.record(other["rfqId"], key)
    assert (untouched["status"], untouched["expiresAt"]) == ("quoted", other["quote"]["expiresAt"])
    # Submit now answers as for any lapsed quote.
    submit = api.send("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": random_tx_hash()}, key=key)
    assert submit.status == 409, submit.describe()
    assert submit.json()["error"]["details"] == {"reason": "not_submittable", "status": "expired"}

    # The signed orders are untouched: the swap lands before their deadline, a late fill.
    tx_hash = execute(api, taker, target)
    filled = api.wait_status(rfq_id, key, "filled")
    assert (filled["txHash"], filled["expiresAt"]) == (tx_hash, lapsed["expiresAt"])
    assert str(filled["filledAt"]) >= str(filled["expiresAt"]), filled
    late = world.events.wait("rfq.filled", rfq_id)["data"]["rfq"]
    assert (late["late"], late["supersedes"], late["txHash"]) == (True, "rfq.expired", tx_hash)
    assert [e["type"] for e in world.events.of(rfq_id)] == ["rfq.expired", "rfq.filled"]
    error = api.error("POST", f"/_sim/rfqs/{rfq_id}/expire", 409)
    assert error["details"] == {"reason": "not_quoted", "status": "filled"}
    # The other quote lapses at its own expiresAt, if the test outlives it, never earlier.
    for event in world.events.of(other["rfqId"]):
        assert event["created"] >= other["quote"]["expiresAt"], event


def test_give_up_fails_a_transaction_that_never_lands_and_release_frees_its_slot(
    world: World,
) -> None:
    api = world.api
    # A key of its own, so its outstanding slots are this test's alone.
    key = api.data(
        "POST",
        "/_sim/keys",
        {"partner": "time-travel", "environment": "test", "scopes": ["trades:write"]},
    )["key"]
    quote = api.quote(key, api.demo_wallet(1))
    rfq_id = quote["rfqId"]
    never_lands = random_tx_hash()
    api.data("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": never_lands}, key=key)
    failed = control(world, rfq_id, "give-up")
    assert (failed["status"], failed["failReason"], failed["txHash"]) == (
        "failed",
        "not_landed",
        never_lands,
    )
    event = world.events.wait("rfq.failed", rfq_id)["data"]["rfq"]
    assert (event["failReason"], event["txHash"]) == ("not_landed", never_lands)
    error = api.error("POST", f"/_sim/rfqs/{rfq_id}/give-up", 409)
    assert error["details"] == {"reason": "not_submitted", "status": "failed"}

    # The failed RFQ holds its slot until latestOrderDeadline, unless given back.
    api.data("PUT", "/_sim/limits", {"outstanding_default": 1})
    try:
        body = {
            "chainId": CHAIN_ID,
            "sellToken": api.token("USDC"),
            "buyToken": api.token("USDT"),
            "sellAmount": "10000000",
            "taker": api.demo_wallet(1).address,
        }
        over = api.send("POST", "/v2/rfq/request", body, key=key)
        assert over.status == 429, over.describe()
        assert over.json()["error"]["details"]["reason"] == "outstanding_rfq_cap"
        released = control(world, rfq_id, "release")
        assert released == failed
        assert api.quote(key, api.demo_wallet(1))["status"] == "quoted"
    finally:
        api.data("PUT", "/_sim/limits", {"outstanding_default": 4})


def test_give_up_fails_a_reverted_swap_and_the_swap_sent_again_corrects_it(
    world: World,
) -> None:
    api, key = world.api, world.key
    taker = api.demo_wallet(2)
    quote = api.quote(key, taker)
    rfq_id = quote["rfqId"]
    chain = api.chain
    assert chain.allowance(api.token("USDC"), taker.address, quote["quote"]["reactor"]) == 0
    # The swap without the approval reverts on chain (sent with a fixed gas limit: an
    # estimate would refuse it).
    reverted = send_tx(chain, taker, quote["transactions"]["swap"], gas=600_000)
    assert not mined_ok(chain, reverted)
    api.data("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": reverted}, key=key)
    failed = control(world, rfq_id, "give-up")
    assert (failed["status"], failed["failReason"]) == ("failed", "reverted")
    assert world.events.wait("rfq.failed", rfq_id)["data"]["rfq"]["failReason"] == "reverted"

    tx_hash = execute(api, taker, quote)  # approval, then the same swap: it lands now
    assert api.wait_status(rfq_id, key, "filled")["txHash"] == tx_hash
    late = world.events.wait("rfq.filled", rfq_id)["data"]["rfq"]
    assert (late["late"], late["supersedes"], late["previousFailReason"]) == (
        True,
        "rfq.failed",
        "reverted",
    )


def test_give_up_refuses_a_swap_that_landed_and_a_chain_it_cannot_read(world: World) -> None:
    api, key = world.api, world.key
    taker = api.demo_wallet(0)
    quote = api.quote(key, taker)
    rfq_id = quote["rfqId"]
    api.data("POST", "/_sim/faults", {"indexer_paused": [CHAIN_ID]})
    try:
        tx_hash = execute(api, taker, quote)  # mined; its fill is not indexed while paused
        api.data("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": tx_hash}, key=key)
        error = api.error("POST", f"/_sim/rfqs/{rfq_id}/give-up", 409)
        assert error["details"] == {"reason": "transaction_landed", "status": "submitted"}
        api.data(
            "POST", "/_sim/faults", {"indexer_paused": [CHAIN_ID], "chain_unreachable": [CHAIN_ID]}
        )
        error = api.error("POST", f"/_sim/rfqs/{rfq_id}/give-up", 502)
        assert (error["code"], error["details"]) == (
            "upstream_error",
            {"reason": "chain_unreachable", "chainIds": [CHAIN_ID]},
        )
        assert api.record(rfq_id, key)["status"] == "submitted"
    finally:
        api.data("DELETE", "/_sim/faults")
    filled = api.wait_status(rfq_id, key, "filled")
    assert filled["txHash"] == tx_hash
    event = world.events.wait("rfq.filled", rfq_id)["data"]["rfq"]
    assert (event["late"], event["supersedes"]) == (False, None)
    # rfq.failed would have been published before the fill it could not survive.
    assert [e["type"] for e in world.events.of(rfq_id)] == ["rfq.filled"]


def test_an_unknown_rfq_is_404_for_every_control(world: World) -> None:
    for action in ("expire", "give-up", "release"):
        error = world.api.error("POST", f"/_sim/rfqs/rfq_000000000000000000000000/{action}", 404)
        assert (error["code"], error["details"]) == ("not_found", {"reason": "unknown_rfq"})
