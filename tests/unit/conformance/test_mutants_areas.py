"""The mutations added for every area (the maker stream, the webhook registry, the ramp, v1):
each rewrite, applied to a sample exchange, changes exactly what it names; and the proxy's
per-frame hook on a WebSocket relayed through it (a loopback echo service, no simulator)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from conformance.mutants import area_rewrites as a
from conformance.mutants.area_catalogue import MAKER_STREAM
from conformance.mutants.catalogue import all_mutations
from conformance.mutants.mutations import CLOSE_POLICY, DOWN, UP, Exchange, Mutation, leave, never
from conformance.mutants.proxy import running_proxy
from conformance.wire.areas import area_of


def exchange(
    path: str,
    status: int,
    body: Any,
    *,
    method: str = "GET",
    query: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    request: Any = None,
) -> Exchange:
    return Exchange(
        method=method,
        path=path,
        query=query or {},
        request_headers=CIMultiDict(headers or {}),
        request_body=b"" if request is None else json.dumps(request).encode(),
        status=status,
        headers=CIMultiDict({"X-Request-Id": "req_1", "Content-Type": "application/json"}),
        body=json.dumps(body).encode(),
    )


def mutations() -> dict[str, Mutation]:
    return {m.name: m for m in all_mutations()}


def applied(name: str, ex: Exchange) -> Exchange:
    mutation = mutations()[name]
    assert mutation.applies(ex), f"{name} does not apply to {ex.method} {ex.path} {ex.status}"
    mutation.apply(ex)
    return ex


# -- the catalogue --------------------------------------------------------------------------


def test_every_area_of_the_issue_has_at_least_five_breaking_mutations() -> None:
    catalogue = all_mutations()
    assert len({m.name for m in catalogue}) == len(catalogue), "mutation names are unique"
    per_area: dict[str, int] = {}
    for m in catalogue:
        if not m.equivalent:
            area = m.area or area_of(m.modules[0])
            per_area[area] = per_area.get(area, 0) + 1
    for area in ("v1", "ramp", "webhooks", MAKER_STREAM):
        assert per_area.get(area, 0) >= 5, (area, per_area)
    stream = [m for m in catalogue if m.area == MAKER_STREAM]
    assert {m.modules for m in stream} == {("test_maker_stream_protocol.py",)}


def test_http_mutations_leave_frames_alone_and_frame_mutations_leave_exchanges_alone() -> None:
    catalogue = mutations()
    assert catalogue["drop_request_id"].rewrite_frame is None
    closing = catalogue["stream_maker_closed_at_once"]
    assert closing.rewrite_frame is not None
    health = exchange("/v2/health", 200, {"data": {"status": "ok"}})
    assert not closing.applies(health)
    before = health.body
    leave(health)
    assert health.body == before
    assert not never(health)


def test_close_at_once_closes_on_the_services_first_frame_only() -> None:
    rewrite = a.close_at_once()
    assert rewrite(UP, '{"type": "pong"}') == '{"type": "pong"}'
    assert rewrite(DOWN, '{"type": "welcome"}') is None


# -- the maker stream's handshake -------------------------------------------------------------


def refusal(status: int, code: str, headers: dict[str, str] | None = None) -> Exchange:
    body = {"error": {"code": code, "message": "no", "request_id": "req_1"}}
    return exchange(a.STREAM_PATH, status, body, headers=headers)


def test_stream_refusals_are_recoded_only_on_the_stream() -> None:
    keyless = applied("stream_unauthenticated_403", refusal(401, "unauthorized"))
    assert (keyless.status, keyless.error_code()) == (403, "forbidden")
    taker = applied("stream_taker_key_401", refusal(403, "forbidden"))
    assert (taker.status, taker.error_code()) == (401, "unauthorized")
    elsewhere = exchange("/v2/rfq/levels", 401, {"error": {"code": "unauthorized"}})
    assert not mutations()["stream_unauthenticated_403"].applies(elsewhere)
    opened = exchange(a.STREAM_PATH, 200, {})
    assert not mutations()["stream_refusal_text_plain"].applies(opened)


def test_stream_refusal_as_plain_text_keeps_its_status() -> None:
    plain = applied("stream_refusal_text_plain", refusal(403, "forbidden"))
    assert plain.status == 403
    assert plain.headers["Content-Type"].startswith("text/plain")
    assert plain.body == b"Forbidden"
    assert plain.headers["X-Request-Id"] == "req_1"


def test_stream_refusal_without_request_id_drops_only_that_header() -> None:
    bare = applied("stream_refusal_without_request_id", refusal(401, "unauthorized"))
    assert "X-Request-Id" not in bare.headers
    assert bare.error_code() == "unauthorized"


def test_rate_limit_headers_are_added_to_a_keyed_401_of_the_stream_only() -> None:
    mutation = mutations()["stream_ratelimit_headers_on_401"]
    assert not mutation.applies(refusal(401, "unauthorized"))  # no key presented
    keyed = refusal(401, "unauthorized", {"X-API-Key": "nonsense"})
    applied("stream_ratelimit_headers_on_401", keyed)
    assert keyed.headers["X-RateLimit-Limit"] == "60"


# -- the webhook registry ------------------------------------------------------------------


def endpoint(endpoint_id: str, secret: str | None = "whsec_" + "a" * 32) -> dict[str, Any]:
    made = {
        "id": endpoint_id,
        "url": "https://example.com/h",
        "eventTypes": ["rfq.expired"],
        "status": "active",
    }
    return made if secret is None else {**made, "signingSecret": secret}


def test_created_200_changes_the_status_only() -> None:
    created = exchange("/v1/webhooks", 201, {"data": endpoint("whe_1")}, method="POST")
    applied("webhook_created_200", created)
    assert created.status == 200
    assert created.data() == endpoint("whe_1")


def test_the_shown_secret_is_another_one_the_same_for_each_endpoint_every_time() -> None:
    mutation = mutations()["webhook_secret_not_the_signing_one"]
    shown = []
    for endpoint_id in ("whe_1", "whe_1", "whe_2"):
        created = exchange("/v1/webhooks", 201, {"data": endpoint(endpoint_id)}, method="POST")
        assert mutation.applies(created)
        mutation.apply(created)
        data = created.data()
        assert {k: v for k, v in data.items() if k != "signingSecret"} == endpoint(
            endpoint_id, None
        )
        shown.append(data["signingSecret"])
    assert shown[0] == shown[1] != shown[2]
    assert all(s.startswith("whsec_") and s != "whsec_" + "a" * 32 for s in shown)


def test_list_rows_show_the_default_types() -> None:
    listed = exchange("/v1/webhooks", 200, {"data": [endpoint("whe_1", None)]})
    applied("webhook_list_row_disagrees", listed)
    (row,) = listed.data()
    assert row == {
        **endpoint("whe_1", None),
        "eventTypes": ["rfq.filled", "rfq.failed", "rfq.expired"],
    }


def test_an_unknown_endpoints_delete_is_answered_deleted() -> None:
    missing = exchange("/v1/webhooks/whe_9", 404, {"error": {"code": "not_found"}}, method="DELETE")
    applied("webhook_delete_unknown_200", missing)
    assert (missing.status, missing.data()) == (200, {"id": "whe_9", "deleted": True})
    known = exchange("/v1/webhooks/whe_9", 200, {"data": {}}, method="DELETE")
    assert not mutations()["webhook_delete_unknown_200"].applies(known)


def test_an_http_url_is_answered_registered() -> None:
    asked = {"url": "http://example.com/h", "eventTypes": ["rfq.filled"]}
    error = {"error": {"code": "invalid_request", "details": {"reason": "https_required"}}}
    refused = exchange("/v1/webhooks", 400, error, method="POST", request=asked)
    applied("webhook_http_url_accepted", refused)
    made = refused.data()
    assert refused.status == 201
    assert (made["url"], made["eventTypes"], made["status"]) == (
        asked["url"],
        ["rfq.filled"],
        "active",
    )
    assert made["id"].startswith("whe_")
    other = exchange("/v1/webhooks", 400, {"error": {"code": "invalid_request"}}, method="POST")
    assert not mutations()["webhook_http_url_accepted"].applies(other)


# -- ramp transfers -------------------------------------------------------------------------

CREATED_AT = "2026-01-01T00:00:00.000Z"


def transfer(transfer_id: str = "rtr_1", account: str = "0123456789") -> dict[str, Any]:
    return {
        "id": transfer_id,
        "status": "AWAITING_FUNDS",
        "sourceAmount": "500",
        "targetAmount": "480.00",
        "createdAt": CREATED_AT,
        "payOut": {"accountNumber": account, "accountName": "ADA"},
    }


def test_created_at_moves_on_every_view_of_a_transfer() -> None:
    read = exchange("/v2/ramp/transfers/rtr_1", 200, {"transfer": transfer()})
    applied("ramp_created_at_moves", read)
    assert read.json()["transfer"]["createdAt"] != CREATED_AT
    assert {**read.json()["transfer"], "createdAt": CREATED_AT} == transfer()
    page = {"transfers": [transfer("rtr_1"), transfer("rtr_2")], "nextCursor": None}
    listed = exchange("/v2/ramp/transfers/list", 200, page, method="POST")
    applied("ramp_created_at_moves", listed)
    assert all(t["createdAt"] != CREATED_AT for t in listed.json()["transfers"])
    assert listed.json()["nextCursor"] is None


def test_a_replay_gets_the_first_claim_token() -> None:
    mutation = mutations()["ramp_replay_same_claim_token"]
    tokens = []
    for token in ("rclm_first", "rclm_second"):
        created = exchange(
            "/v2/ramp/transfers", 201, {"transfer": transfer(), "claimToken": token}, method="POST"
        )
        assert mutation.applies(created)
        mutation.apply(created)
        tokens.append(created.json()["claimToken"])
        assert created.json()["transfer"] == transfer()
    assert tokens == ["rclm_first", "rclm_first"]
    other = exchange(
        "/v2/ramp/transfers", 201, {"transfer": transfer("rtr_2"), "claimToken": "t"}, method="POST"
    )
    mutation.apply(other)
    assert other.json()["claimToken"] == "t"


def test_the_wallet_view_is_priced_again() -> None:
    masked = exchange(
        "/v2/ramp/transfers/rtr_1", 200, {"transfer": transfer()}, query={"wallet": "0xab"}
    )
    applied("ramp_wallet_view_requoted", masked)
    assert masked.json()["transfer"] == {**transfer(), "targetAmount": "484.80"}
    full = exchange("/v2/ramp/transfers/rtr_1", 200, {"transfer": transfer()})
    assert not mutations()["ramp_wallet_view_requoted"].applies(full)


def test_masked_views_show_the_account_the_full_view_showed() -> None:
    mutation = mutations()["ramp_masked_account_in_full"]
    full = exchange("/v2/ramp/transfers", 201, {"transfer": transfer()}, method="POST")
    masked = exchange("/v2/ramp/transfers/rtr_1", 200, {"transfer": transfer(account="6789")})
    support = exchange(
        "/v2/ramp/support/transfer",
        200,
        {"transfer": transfer(account="******6789")},
        method="POST",
    )
    for ex in (full, masked, support):
        assert mutation.applies(ex)
        mutation.apply(ex)
        assert ex.json()["transfer"] == transfer()


def test_the_list_is_oldest_first() -> None:
    page = {"transfers": [transfer("rtr_2"), transfer("rtr_1")], "nextCursor": "c"}
    listed = applied(
        "ramp_list_oldest_first", exchange("/v2/ramp/transfers/list", 200, page, method="POST")
    )
    assert [t["id"] for t in listed.json()["transfers"]] == ["rtr_1", "rtr_2"]
    assert listed.json()["nextCursor"] == "c"


def test_a_wrong_claim_token_is_403_but_a_missing_one_stays_404() -> None:
    error = {"error": {"code": "not_found"}}
    wrong = exchange("/v2/ramp/transfers/rtr_1", 404, error, headers={"X-Ramp-Claim": "x"})
    applied("ramp_wrong_claim_403", wrong)
    assert (wrong.status, wrong.error_code()) == (403, "forbidden")
    bare = exchange("/v2/ramp/transfers/rtr_1", 404, error)
    assert not mutations()["ramp_wrong_claim_403"].applies(bare)


# -- v1 -------------------------------------------------------------------------------------


def order(order_id: str, status: str = "ACTIVE") -> dict[str, Any]:
    return {
        "id": order_id,
        "sellAmount": "1500",
        "buyAmount": "1",
        "rateRay": "15",
        "executionRateRay": "7",
        "status": status,
        "statusVerified": True,
        "txHash": "0xab" if status == "FILLED" else None,
        "filledAt": CREATED_AT if status == "FILLED" else None,
    }


def test_v1_bad_key_401_becomes_403_only_on_v1() -> None:
    bad = exchange("/v1/corridors", 401, {"error": {"code": "unauthorized"}})
    applied("v1_bad_key_403", bad)
    assert (bad.status, bad.error_code()) == (403, "forbidden")
    v2 = exchange("/v2/rfq/rfq_1", 401, {"error": {"code": "unauthorized"}})
    assert not mutations()["v1_bad_key_403"].applies(v2)


def test_limit_order_predicates_tell_records_from_quote_and_prepare() -> None:
    assert a.limit_order_record(exchange("/v1/limit-orders/lo_1", 200, {"data": order("lo_1")}))
    for path in ("/v1/limit-orders/quote", "/v1/limit-orders/prepare", "/v1/limit-orders"):
        assert not a.limit_order_record(exchange(path, 200, {"data": {}})), path
    assert a.limit_order_list(exchange("/v1/limit-orders", 200, {"data": []}))


def test_the_list_is_reversed_and_its_rows_swap_their_amounts() -> None:
    rows = [order("lo_2"), order("lo_1")]
    reversed_ = applied(
        "v1_limit_orders_oldest_first", exchange("/v1/limit-orders", 200, {"data": rows})
    )
    assert reversed_.data() == [order("lo_1"), order("lo_2")]
    swapped = applied("v1_list_row_disagrees", exchange("/v1/limit-orders", 200, {"data": rows}))
    assert swapped.data() == [{**row, "sellAmount": "1", "buyAmount": "1500"} for row in rows]
    record = exchange("/v1/limit-orders/lo_1", 200, {"data": order("lo_1")})
    assert not mutations()["v1_list_row_disagrees"].applies(record)


def test_a_records_two_rates_are_exchanged() -> None:
    record = applied(
        "v1_record_rates_swapped", exchange("/v1/limit-orders/lo_1", 200, {"data": order("lo_1")})
    )
    assert record.data() == {**order("lo_1"), "rateRay": "7", "executionRateRay": "15"}


def test_only_a_filled_order_loses_its_settlement() -> None:
    rows = [order("lo_1", "FILLED"), order("lo_2")]
    listed = applied(
        "v1_filled_without_settlement", exchange("/v1/limit-orders", 200, {"data": rows})
    )
    assert listed.data() == [{**rows[0], "txHash": None, "filledAt": None}, rows[1]]


def test_expired_and_cancelled_read_active_and_the_rest_as_they_were() -> None:
    rows = [order("lo_1", "EXPIRED"), order("lo_2", "CANCELLED"), order("lo_3", "FILLED")]
    rows[0]["statusVerified"] = False
    listed = applied(
        "v1_status_not_derived_live", exchange("/v1/limit-orders", 200, {"data": rows})
    )
    assert listed.data() == [order("lo_1"), order("lo_2"), order("lo_3", "FILLED")]


def test_a_created_swaps_swap_transaction_carries_value() -> None:
    swap = {"id": "sw_1", "transactions": {"approval": {"value": "0"}, "swap": {"value": "0"}}}
    created = applied(
        "v1_swap_value_nonzero", exchange("/v1/swaps", 201, {"data": swap}, method="POST")
    )
    assert created.data()["transactions"] == {"approval": {"value": "0"}, "swap": {"value": "1"}}
    nothing = exchange("/v1/swaps", 200, {"data": {"fillable": False}}, method="POST")
    assert not mutations()["v1_swap_value_nonzero"].applies(nothing)


def test_a_conflicting_submit_is_taken_over() -> None:
    conflict = exchange(
        "/v1/swaps/sw_1/submit",
        409,
        {"error": {"code": "conflict"}},
        method="POST",
        request={"txHash": "0x" + "cd" * 32},
    )
    applied("v1_submit_other_hash_200", conflict)
    assert conflict.status == 200
    assert conflict.data() == {"id": "sw_1", "status": "SUBMITTED", "txHash": "0x" + "cd" * 32}


def test_a_replay_under_an_idempotency_key_shows_a_new_secret_the_first_answer_is_kept() -> None:
    mutation = mutations()["v1_replay_made_again"]
    answers = []
    for idem in ("k1", "k1", "k2"):
        created = exchange(
            "/v1/webhooks",
            201,
            {"data": endpoint("whe_1")},
            method="POST",
            headers={"Idempotency-Key": idem},
        )
        assert mutation.applies(created)
        mutation.apply(created)
        answers.append(created.data())
    assert answers[0] == answers[2] == endpoint("whe_1")
    assert answers[1]["signingSecret"] != endpoint("whe_1")["signingSecret"]
    assert {k: v for k, v in answers[1].items() if k != "signingSecret"} == endpoint("whe_1", None)
    plain = exchange("/v1/webhooks", 201, {"data": endpoint("whe_1")}, method="POST")
    assert not mutation.applies(plain)


# -- the proxy's per-frame hook ---------------------------------------------------------------


class EchoService:
    """A loopback WebSocket service on a thread of its own: says ``hello`` on connecting, then
    answers each text frame with ``echo:<text>``; what it received is kept in ``received``."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str("hello")
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.received.append(message.data)
                await ws.send_str("echo:" + message.data)
        return ws

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_get("/stream", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        return f"http://{host}:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> EchoService:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def echo() -> Iterator[EchoService]:
    with EchoService() as service:
        yield service


def frame_mutation(rewrite: Any) -> Mutation:
    return Mutation("frames", "a statement", never, leave, ("test_x.py",), rewrite_frame=rewrite)


async def converse(url: str, say: list[str], hear: int) -> tuple[list[str], aiohttp.WSMessage]:
    """Connects, sends each of ``say`` after the first frame heard, and reads until ``hear``
    text frames came or the connection closed; the frames and the last message read."""
    heard: list[str] = []
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url.replace("http", "ws", 1) + "/stream") as ws,
    ):
        async with asyncio.timeout(10):
            message = await ws.receive()
            while message.type == aiohttp.WSMsgType.TEXT:
                heard.append(message.data)
                if len(heard) == 1:
                    for text in say:
                        await ws.send_str(text)
                if len(heard) == hear:
                    break
                message = await ws.receive()
    return heard, message


def test_without_a_frame_rewrite_frames_pass_unchanged(echo: EchoService) -> None:
    with running_proxy(echo.url, None) as proxy:
        heard, _ = asyncio.run(converse(proxy.url, ["ping"], 2))
    assert heard == ["hello", "echo:ping"]
    assert echo.received == ["ping"]


def test_each_text_frame_goes_through_the_rewrite_in_its_direction(echo: EchoService) -> None:
    def rewrite(direction: str, text: str) -> str:
        return text.upper() if direction == DOWN else text + "!"

    with running_proxy(echo.url, frame_mutation(rewrite)) as proxy:
        heard, _ = asyncio.run(converse(proxy.url, ["ping", "pong"], 3))
    assert echo.received == ["ping!", "pong!"]  # up: as the client sent them, rewritten
    assert heard == ["HELLO", "ECHO:PING!", "ECHO:PONG!"]  # down: as the service sent them


def test_a_rewrite_answering_none_closes_the_connection_as_a_policy_violation(
    echo: EchoService,
) -> None:
    with running_proxy(echo.url, frame_mutation(a.close_at_once())) as proxy:
        heard, last = asyncio.run(converse(proxy.url, [], 1))
    assert heard == [], "the service's first frame is never relayed"
    assert last.type == aiohttp.WSMsgType.CLOSE
    assert last.data == CLOSE_POLICY
