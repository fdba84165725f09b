"""Two `rfqsim serve` processes on one set of chains and one Redis: what they share holds
across them, driven at both at once with real parallel requests."""

from __future__ import annotations

import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from eth_account import Account

from conformance.deployment.maker_probe import MakerProbe, stream_url
from rfqsim.pytest_plugin import RfqSim
from simulator.adapters.redis.server import RedisNode
from tests.integration.firm_quotes import CHAIN, firm_request
from tests.integration.serve_process import serve

# One pair of instances for the module (they take seconds to start): on one worker.
pytestmark = pytest.mark.xdist_group("two_instances")


def outcome(answer: tuple[int, dict[str, Any]]) -> str:
    status, body = answer
    if status == 200:
        return str(body["data"]["status"])
    return f"{status} {body['error']['details'].get('reason')}"


@pytest.fixture(scope="module")
def instances(
    tmp_path_factory: pytest.TempPathFactory, redis_node: RedisNode
) -> Iterator[list[RfqSim]]:
    """Two instances with the default seed (so the same demo keys): the second attaches to the
    first one's chains and runs no fleet (the first one's makers answer its auctions through
    their links); both on the module's Redis."""
    with serve(tmp_path_factory.mktemp("one"), "--redis-url", redis_node.url) as one:
        attach = [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in one.info["chains"]]
        with serve(
            tmp_path_factory.mktemp("two"), "--redis-url", redis_node.url, "--no-makers", *attach
        ) as two:
            pair = [RfqSim(one.api_url, one.info), RfqSim(two.api_url, two.info)]
            priced_at(pair[1])
            yield pair


def priced_at(sim: RfqSim) -> None:
    """Until the instance prices chain 97 (the first's makers linked to it, their levels
    there): the event a firm request there needs."""
    deadline = time.monotonic() + 30
    while not any(
        pair["levels"]
        for pair in sim.call("GET", "/v2/rfq/levels", query={"chainId": CHAIN})["pairs"]
    ):
        assert time.monotonic() < deadline, "no maker levels at the second instance in 30 s"
        time.sleep(0.5)  # inside the keyless limit of 60 a minute however long it takes


def test_the_outstanding_cap_holds_across_two_instances(instances: list[RfqSim]) -> None:
    """One key, cap 4, ten firm requests at once, five to each instance: four quotes in all
    and six refusals naming the cap (each instance alone would have quoted four)."""
    assert instances[0].demo_keys["taker-test"] == instances[1].demo_keys["taker-test"]
    with ThreadPoolExecutor(max_workers=10) as pool:
        answers = list(pool.map(firm_request, [instances[i % 2] for i in range(10)]))
    counts = Counter(outcome(a) for a in answers)
    assert counts == Counter({"quoted": 4, "429 outstanding_rfq_cap": 6}), answers
    quotes = [body["data"] for status, body in answers if status == 200]
    # the two draw their ids apart (same seed): no RFQ id names two RFQs
    assert len({quote["rfqId"] for quote in quotes}) == 4
    first_free = min(quote["quote"]["latestOrderDeadline"] for quote in quotes)
    for status, body in answers:
        if status == 429:
            assert body["error"]["details"]["nextSlotFreeAt"] == first_free, body
    # lapsed and released at the first instance, wherever each was made: the slots are free
    for quote in quotes:
        instances[0].call("POST", f"/_sim/rfqs/{quote['rfqId']}/expire")
        instances[0].call("POST", f"/_sim/rfqs/{quote['rfqId']}/release")
    assert outcome(firm_request(instances[1], 2)) == "quoted"


def test_a_taker_balance_is_reserved_once_across_two_instances(
    instances: list[RfqSim],
) -> None:
    """Chain 56, demo wallet 1: two firm requests at once, one at each instance, each for
    three fifths of the wallet's USDC: one quotes, the other is refused insufficient_funds
    naming what the first committed (each instance alone would have accepted its own)."""
    chains = instances[0].call("GET", "/_sim/chains")["chains"]
    wallet = instances[0].demo_wallets[1]["address"]
    held = next(
        w["tokens"]["USDC"]
        for c in chains
        if c["chain_id"] == 56
        for w in c["wallets"]
        if w["address"] == wallet
    )
    amount = int(held) * 3 // 5

    def ask(sim: RfqSim) -> tuple[int, dict[str, Any]]:
        return firm_request(sim, 1, sell_amount=amount, chain=56, key="taker-live")

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(ask, instances))
    assert sorted(outcome(a) for a in answers) == [
        "400 insufficient_funds",
        "quoted",
    ], answers
    (refused,) = [body["error"]["details"] for status, body in answers if status == 400]
    assert refused == {
        "reason": "insufficient_funds",
        "required": str(amount),
        "available": held,
        "committed": str(amount),
    }


def status_with(sim: RfqSim, key: str, path: str = "/v2/rfq/rfq_000000000000000000000000") -> int:
    request = urllib.request.Request(
        f"{sim.base_url}{path}", headers={"Authorization": f"Bearer {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as answered:
        return int(answered.code)


def eventually(probe: Callable[[], object], expected: object) -> None:
    """`probe()` equals `expected` within 10 s (the other instance hears a change within
    milliseconds), polled: the change has no event this side can wait on."""
    for _ in range(500):
        if probe() == expected:
            return
        time.sleep(0.02)
    assert probe() == expected


def test_a_key_made_or_suspended_at_one_instance_holds_at_the_other_at_once(
    instances: list[RfqSim],
) -> None:
    one, two = instances

    def keys(sim: RfqSim) -> list[dict[str, Any]]:
        return sorted(sim.call("GET", "/_sim/keys")["keys"], key=lambda k: str(k["key_id"]))

    # both know the same keys and partners: their demo keys, each one's makers' keys
    eventually(lambda: keys(one) == keys(two), True)
    assert len({k["partner_id"] for k in keys(one) if k["partner"] == "demo"}) == 1
    made = one.call(
        "POST", "/_sim/keys", {"environment": "test", "scopes": ["trades:read"], "name": "shared"}
    )
    assert status_with(two, made["key"]) == 404  # known there: the RFQ is what is missing
    # a status changed at one instance holds at the other's next request, whichever of the
    # two the change was sent to
    for at in (one, two, one) * 20:
        key = at.call("POST", "/_sim/keys", {"environment": "test", "scopes": ["trades:read"]})
        at.call("POST", f"/_sim/keys/{key['key_id']}/suspend")
        assert [status_with(sim, key["key"]) for sim in (two, one)] == [401, 401]
        at.call("POST", f"/_sim/keys/{key['key_id']}/activate")
        assert [status_with(sim, key["key"]) for sim in (two, one)] == [404, 404]
    one.call("POST", f"/_sim/keys/{made['key_id']}/revoke")
    assert status_with(two, made["key"]) == 401
    limits = one.call("GET", "/_sim/limits")
    one.call("PUT", "/_sim/limits", {**limits, "outstanding_default": 5})
    assert two.call("GET", "/_sim/limits")["outstanding_default"] == 5
    one.call("PUT", "/_sim/limits", limits)
    assert two.call("GET", "/_sim/limits") == limits


def v1(sim: RfqSim, method: str, path: str, body: object = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{sim.base_url}{path}",
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={
            "Authorization": f"Bearer {sim.demo_keys['taker-test']}",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as answered:
        return int(answered.code), json.loads(answered.read())


def registered(sim: RfqSim, url: str, event_type: str) -> str:
    """A webhook endpoint of the demo partner for one event type: its id."""
    status, made = v1(sim, "POST", "/v1/webhooks", {"url": url, "eventTypes": [event_type]})
    assert status == 201, made
    return str(made["data"]["id"])


def test_a_webhook_endpoint_made_at_one_instance_is_the_others_too(
    instances: list[RfqSim],
) -> None:
    one, two = instances
    endpoint_id = registered(one, "https://hooks.example/rfq", "rfq.filled")

    def listed(sim: RfqSim) -> list[str]:
        return [e["id"] for e in v1(sim, "GET", "/v1/webhooks")[1]["data"]]

    eventually(lambda: endpoint_id in listed(two), True)
    assert v1(two, "DELETE", f"/v1/webhooks/{endpoint_id}")[0] == 200
    eventually(lambda: endpoint_id in listed(one), False)


def test_an_rfq_made_at_one_instance_is_read_and_cancelled_at_the_other(
    instances: list[RfqSim],
) -> None:
    """The record stays where it was made; a GET, a cancel and its timeline at the other
    instance are served there, answered as the maker of the record answers them."""
    one, two = instances
    status, made = firm_request(two, 2)
    assert status == 200, made
    rfq_id, claim = made["data"]["rfqId"], made["data"]["claimToken"]

    def ask(sim: RfqSim, method: str, path: str, **headers: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{sim.base_url}{path}", method=method, headers={"X-Rfq-Claim": claim, **headers}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return int(response.status), json.loads(response.read())
        except urllib.error.HTTPError as answered:
            return int(answered.code), json.loads(answered.read())

    status, read = ask(one, "GET", f"/v2/rfq/{rfq_id}")
    assert (status, read["data"]["status"], read["data"]["rfqId"]) == (200, "quoted", rfq_id)
    assert read["data"] == ask(two, "GET", f"/v2/rfq/{rfq_id}")[1]["data"]
    # a hop secret that is not the venue's: served where it landed, never sent on
    assert ask(one, "GET", f"/v2/rfq/{rfq_id}", **{"X-Rfqsim-Hop": "guess"})[0] == 404
    assert ask(one, "POST", f"/v2/rfq/{rfq_id}/cancel")[1]["data"] == {
        "rfqId": rfq_id,
        "status": "released",
    }
    assert ask(two, "GET", f"/v2/rfq/{rfq_id}")[1]["data"] == read["data"]  # still quoted
    steps = [s["kind"] for s in one.call("GET", f"/_sim/rfqs/{rfq_id}")["steps"]]
    assert steps == [s["kind"] for s in two.call("GET", f"/_sim/rfqs/{rfq_id}")["steps"]]
    assert "cancelled" in steps, steps  # the cancel at the first, in the second's timeline
    # the other instance never held it: its own store does not have it
    assert ask(one, "GET", "/v2/rfq/rfq_000000000000000000000000")[0] == 404


def test_a_maker_connected_to_one_instance_answers_the_others_auctions(
    instances: list[RfqSim],
) -> None:
    """A maker bot of the test's own connected to the second instance is asked by a firm
    request at the first (restricted to its wallet), and its decline reaches that auction."""
    one, two = instances
    wallet = Account.create().address
    key = one.call(
        "POST",
        "/_sim/keys",
        {
            "environment": "test",
            "scopes": ["maker:stream"],
            "name": "linked maker",
            "maker_wallet": wallet,
        },
    )["key"]
    with MakerProbe(stream_url(two.base_url), key, reply="decline") as maker:
        # welcomed once the other instance can ask it: the first one had welcomed the link
        linked = one.call(
            "GET", "/_sim/maker-messages", query={"maker": wallet, "direction": "out"}
        )["messages"]
        assert [m["message"]["type"] for m in linked] == ["welcome"], linked
        status, body = firm_request(one, 1, restricted=[wallet])
        assert status == 200, body
        rfq_id = body["data"]["rfqId"]
        assert [seen.message["rfqId"] for seen in maker.rfqs_for(rfq_id)] == [rfq_id]
    assert body["data"]["status"] == "no_quote", body
    answers = [
        step
        for step in one.call("GET", f"/_sim/rfqs/{rfq_id}")["steps"]
        if step["kind"] == "answered"
    ]
    assert len(answers) == 1, answers
    assert "declin" in json.dumps(answers[0]), answers  # its decline, routed back


def test_what_the_first_instance_holds_is_served_there_from_either(
    instances: list[RfqSim],
) -> None:
    """A v1 swap made at the second instance is the first one's (the v1 book is held there):
    read at once at either; a fault set at the second holds at both, and cleared at the first
    leaves both."""
    one, two = instances
    query = {
        "chainId": CHAIN,
        "sellToken": two.token(CHAIN, "USDC"),
        "buyToken": two.token(CHAIN, "NGNS"),
    }
    book = "/v1/order-book?" + urllib.parse.urlencode(query)
    deadline = time.monotonic() + 30
    while not v1(two, "GET", book)[1]["data"]["offers"]:  # the fleets' resting orders
        assert time.monotonic() < deadline, "no resting orders within 30 s"
        time.sleep(1)  # the key's 60 requests a minute are the test's too
    body = {**query, "sellAmount": str(1000 * 10**6), "taker": two.demo_wallets[1]["address"]}
    status, made = v1(two, "POST", "/v1/swaps", body)
    assert status == 201, made
    swap_id = made["data"]["id"]
    assert v1(one, "GET", f"/v1/swaps/{swap_id}")[1]["data"]["id"] == swap_id
    assert one.call("GET", f"/_sim/swaps/{swap_id}")["id"] == swap_id
    two.call("POST", "/_sim/faults", {"venue_paused": True})
    try:
        for sim in instances:
            status, refused = firm_request(sim)
            assert (status, refused["error"]["code"]) == (503, "venue_unavailable"), refused
    finally:
        one.call("DELETE", "/_sim/faults")
    for sim in instances:
        assert firm_request(sim)[0] == 200
    # "the next request answers 500" is one request of the venue, whichever instance it reaches
    two.call("POST", "/_sim/faults", {"internal_errors": 1})
    statuses = [status_with(sim, sim.demo_keys["taker-test"], "/v1/corridors") for sim in instances]
    statuses += [
        status_with(sim, sim.demo_keys["taker-test"], "/v1/corridors") for sim in instances
    ]
    assert sorted(statuses) == [200, 200, 200, 500], statuses
    assert one.call("GET", "/_sim/faults")["internal_errors"] == 0


def test_an_event_of_the_second_instance_is_delivered_by_the_first(
    instances: list[RfqSim],
) -> None:
    """The venue's webhook worker is the first instance's: an RFQ of the second expires, and
    its event is in the first one's deliveries (the receiver is unreachable: one delivery,
    retrying, is what is asserted)."""
    one, two = instances
    endpoint_id = registered(one, "https://hooks.example/expired", "rfq.expired")
    try:
        status, quoted = firm_request(two, 1, chain=56, key="taker-live")  # its own cap
        assert status == 200, quoted
        rfq_id = quoted["data"]["rfqId"]
        two.call("POST", f"/_sim/rfqs/{rfq_id}/expire")

        def delivered() -> list[str]:
            every = one.call("GET", "/_sim/webhooks/deliveries")["deliveries"]
            return [d["endpoint_id"] for d in every if d["event_id"] == f"rfq.expired:{rfq_id}"]

        eventually(delivered, [endpoint_id])
    finally:
        assert v1(one, "DELETE", f"/v1/webhooks/{endpoint_id}")[0] == 200


def test_the_rfq_list_is_the_venue_s_whichever_instance_holds_each(
    instances: list[RfqSim],
) -> None:
    """/_sim/rfqs at either instance lists the RFQs both hold, newest first, and pages through
    them by its cursor without losing or repeating one."""
    one, two = instances
    limits = one.call("GET", "/_sim/limits")
    one.call("PUT", "/_sim/limits", {**limits, "outstanding_default": 20})  # earlier tests' live
    since = one.call("GET", "/_sim/clock")["now"]  # earlier tests' RFQs are left out
    made = []
    try:
        for sim in (one, two, two):
            status, body = firm_request(sim, 2, chain=56, key="taker-live")
            assert status == 200, body
            made.append(body["data"]["rfqId"])
    finally:
        one.call("PUT", "/_sim/limits", limits)
    newest_first = list(reversed(made))
    pair = f"{one.token(56, 'USDC')}/{one.token(56, 'USDT')}".lower()
    mine = {"taker": one.demo_wallets[2]["address"], "pair": pair, "since": since}
    for sim in (one, two):
        listed = sim.call("GET", "/_sim/rfqs", query=mine)
        assert [item["id"] for item in listed["items"]] == newest_first
        assert listed["next_cursor"] is None
    paged: list[str] = []
    query: dict[str, Any] = {**mine, "limit": 1}
    for _ in range(len(made) + 1):  # bounded: one page per RFQ, and none more
        page = two.call("GET", "/_sim/rfqs", query=query)
        paged += [item["id"] for item in page["items"]]
        if page["next_cursor"] is None:
            break
        query["cursor"] = page["next_cursor"]
    assert paged == newest_first


def test_each_instance_lists_both(instances: list[RfqSim]) -> None:
    one, two = instances
    listed = [
        {"id": i["id"], "pid": i["pid"], "api_url": i["api_url"]}
        for i in one.call("GET", "/_sim/info")["instances"]
    ]
    assert listed == [
        {"id": n, "pid": sim.info["pid"], "api_url": sim.base_url}
        for n, sim in enumerate(instances)
    ]
    assert two.call("GET", "/_sim/info")["instances"] == listed
    assert two.info["instances"] == listed  # the second's ready file: both were up by then


def test_a_reset_or_restore_at_either_instance_reaches_the_records_of_both(
    instances: list[RfqSim],
) -> None:
    """Snapshot, restore and reset sent to either instance act on the RFQs each one holds
    (the chains once, at the first)."""
    one, two = instances
    key = one.demo_keys["taker-test"]
    limits = one.call("GET", "/_sim/limits")
    one.call("PUT", "/_sim/limits", {**limits, "outstanding_default": 20})  # the reset undoes it

    def made_at(sim: RfqSim) -> str:
        status, made = firm_request(sim, 1)
        assert status == 200, made
        return str(made["data"]["rfqId"])

    def found(*rfq_ids: str) -> list[list[int]]:
        return [[status_with(sim, key, f"/v2/rfq/{r}") for sim in (one, two)] for r in rfq_ids]

    before = [made_at(one), made_at(two)]
    two.call("POST", "/_sim/snapshots", {"name": "venue"})  # sent on to the first, repeated
    after = made_at(two)
    assert found(*before, after) == [[200, 200]] * 3
    one.call("POST", "/_sim/snapshots/venue/restore")
    assert found(*before, after) == [[200, 200], [200, 200], [404, 404]]
    two.call("POST", "/_sim/reset")
    assert found(*before) == [[404, 404]] * 2
    assert two.call("GET", "/_sim/limits") == limits
    two.call("DELETE", "/_sim/snapshots/venue")
    assert one.call("GET", "/_sim/snapshots")["snapshots"] == []
    priced_at(two)  # the first's makers, restarted by the reset, linked to the second again
    made_at(two)


def test_the_venue_journal_has_what_either_instance_served(instances: list[RfqSim]) -> None:
    """One journal for the venue, the first instance's: a request the second served is listed
    at either (its answer names the instance) and sent live on the console's stream opened
    through the second; a request sent on is listed once."""
    one, two = instances
    marker = f"probe={secrets.token_hex(6)}"
    stream = urllib.request.urlopen(f"{two.base_url}/_sim/stream?topics=requests", timeout=30)
    try:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.headers["X-Rfqsim-Instance"] == "0"  # served by the first
        assert status_with(two, "", f"/v2/health?{marker}") == 200
        while marker not in stream.readline().decode():  # bounded by the socket's timeout
            pass
    finally:
        stream.close()
    for sim in (one, two):
        listed = sim.call("GET", "/_sim/requests", query={"path": "/v2/health"})["requests"]
        (entry,) = [e for e in listed if marker in e["query"]]
        assert ["X-Rfqsim-Instance", "1"] in entry["response"]["headers"], entry
    status, made = firm_request(two, 1)
    assert status == 200, made
    rfq_id = made["data"]["rfqId"]
    # Since the RFQ was made: ids repeat after a reset (one seeded source), so an earlier
    # test's requests for the same path may be listed too.
    since = one.call("GET", "/_sim/requests", query={"path": "/v2/rfq/request"})["requests"][0]
    assert status_with(one, one.demo_keys["taker-test"], f"/v2/rfq/{rfq_id}") == 200
    query = {"path": f"/v2/rfq/{rfq_id}", "since": since["at"]}
    listed = one.call("GET", "/_sim/requests", query=query)["requests"]
    assert len(listed) == 1, listed  # served by the second, received by the first


def streamed_rfqs(stream: Any, within_s: float = 30) -> Iterator[dict[str, Any]]:
    """The RFQ items of a live stream's `rfqs` events, as they come, for at most `within_s`
    (the stream's keepalives come every 15 s: the socket's timeout alone bounds nothing)."""
    event, deadline = "", time.monotonic() + within_s
    while line := stream.readline().decode():
        assert time.monotonic() < deadline, "no such item on the stream in time"
        if line.startswith("event: "):
            event = line.removeprefix("event: ").strip()
        elif line.startswith("data: ") and event == "rfqs":
            yield from json.loads(line.removeprefix("data: "))["items"]


def test_the_console_s_stream_shows_rfqs_held_at_either_instance(
    instances: list[RfqSim],
) -> None:
    """The stream is read at the first instance; an RFQ made at the second is sent live on
    it, from its first step to its quote, as the second lists it."""
    one, two = instances
    stream = urllib.request.urlopen(f"{one.base_url}/_sim/stream?topics=rfqs", timeout=30)
    try:
        assert stream.headers["X-Rfqsim-Instance"] == "0"
        while not stream.readline().startswith(b"event: hello"):
            pass  # from the hello on, every change reaches the reader
        status, made = firm_request(two, 1)
        assert status == 200, made
        rfq_id = made["data"]["rfqId"]
        items = streamed_rfqs(stream)
        statuses = [next(item for item in items if item["id"] == rfq_id)]
        while statuses[-1]["status"] != "quoted":  # each step as it is recorded there
            statuses.append(next(item for item in items if item["id"] == rfq_id))
        (listed,) = [
            item
            for item in two.call("GET", "/_sim/rfqs", query={"limit": 50})["items"]
            if item["id"] == rfq_id
        ]
        assert {k: statuses[-1][k] for k in ("created_at", "status", "makers")} == {
            k: listed[k] for k in ("created_at", "status", "makers")
        }
    finally:
        stream.close()


def test_an_advance_at_one_instance_moves_the_clock_of_both(instances: list[RfqSim]) -> None:
    """Last in the module: the clock only moves forward."""
    one, two = instances
    before = two.call("GET", "/_sim/clock")["offset_seconds"]
    one.advance_clock(60)
    eventually(lambda: two.call("GET", "/_sim/clock")["offset_seconds"], before + 60)
    two.advance_clock(30)  # and back: the offsets add up
    eventually(lambda: one.call("GET", "/_sim/clock")["offset_seconds"], before + 90)
