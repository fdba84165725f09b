"""The rewrites and predicates of the mutations that break the maker stream, the webhook
registry, the ramp's transfers and the v1 API (:mod:`conformance.mutants.catalogue`); the
others are in :mod:`conformance.mutants.rewrites`."""

from __future__ import annotations

import json
import re
import secrets
from decimal import Decimal
from typing import Any

from conformance.mutants.mutations import (
    DOWN,
    Exchange,
    FrameRewrite,
    Predicate,
    Rewrite,
    rewrite_data,
    set_status_and_data,
)
from conformance.mutants.rewrites import created_moves, keyed, ramp_read

# -- the maker stream (WSS /v2/maker/stream): its handshake answers and its frames ----------

STREAM_PATH = "/v2/maker/stream"


def stream_refused(status: int | None = None) -> Predicate:
    """The stream's handshake refused (a plain HTTP answer, before any upgrade)."""
    return lambda ex: (
        ex.path == STREAM_PATH and (ex.status == status if status is not None else ex.status >= 400)
    )


def stream_keyed_401(ex: Exchange) -> bool:
    return stream_refused(401)(ex) and keyed(ex)


def plain_refusal(ex: Exchange) -> None:
    """A WebSocket library's own refusal: the status kept, the body a plain sentence."""
    ex.headers["Content-Type"] = "text/plain; charset=utf-8"
    ex.body = b"Unauthorized" if ex.status == 401 else b"Forbidden"


def close_at_once() -> FrameRewrite:
    """The service closes a stream it upgraded before it says anything (a scope check after the
    upgrade that refuses what it just let in): the first frame it sends is never relayed."""

    def rewrite(direction: str, text: str) -> str | None:
        return None if direction == DOWN else text

    return rewrite


# -- the webhook registry (/v1/webhooks) ----------------------------------------------------

WEBHOOK_ID_PATH = re.compile(r"^/v1/webhooks/[^/]+$")


def webhook_created(ex: Exchange) -> bool:
    return ex.method == "POST" and ex.path == "/v1/webhooks" and ex.status == 201


def webhook_delete_404(ex: Exchange) -> bool:
    return ex.method == "DELETE" and bool(WEBHOOK_ID_PATH.match(ex.path)) and ex.status == 404


def https_refused(ex: Exchange) -> bool:
    return (
        ex.method == "POST"
        and ex.path == "/v1/webhooks"
        and ex.status == 400
        and b"https_required" in ex.body
    )


def other_secret() -> Rewrite:
    """The creation answer shows a secret that is not the one deliveries are signed with (one
    made twice, the second stored): the same wrong secret for each endpoint on every answer."""
    shown: dict[str, str] = {}  # endpoint id -> the secret shown for it

    def rewrite(ex: Exchange) -> None:
        def change(endpoint: dict[str, Any]) -> None:
            key = str(endpoint.get("id"))
            endpoint["signingSecret"] = shown.setdefault(key, "whsec_" + secrets.token_hex(16))

        rewrite_data(change)(ex)

    return rewrite


def webhook_rows_default_types(ex: Exchange) -> None:
    """Each listed endpoint shows the RFQ events as its types, not the ones it was made with
    (a list serializer filling in the default subscription)."""
    body = ex.json()
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        for endpoint in body["data"]:
            endpoint["eventTypes"] = ["rfq.filled", "rfq.failed", "rfq.expired"]
        ex.set_json(body)


def deleted_anyway(ex: Exchange) -> None:
    """An unknown endpoint's DELETE answered as if it had been deleted."""
    set_status_and_data(200, {"id": ex.path.rsplit("/", 1)[-1], "deleted": True})(ex)


def http_endpoint_made(ex: Exchange) -> None:
    """A URL that is not https registered: 201 with the endpoint it asked for."""
    asked = json.loads(ex.request_body or b"{}")
    endpoint = {
        "id": "whe_" + secrets.token_hex(12),
        "url": asked.get("url"),
        "eventTypes": asked.get("eventTypes"),
        "status": "active",
        "signingSecret": "whsec_" + secrets.token_hex(16),
    }
    set_status_and_data(201, endpoint)(ex)


# -- ramp transfers -------------------------------------------------------------------------

RAMP_CREATE_PATHS = re.compile(r"^/v2/ramp/transfers(/[^/]+/retry-payout)?$")


def ramp_created(ex: Exchange) -> bool:
    return ex.method == "POST" and bool(RAMP_CREATE_PATHS.match(ex.path)) and ex.status == 201


def ramp_transfer_answer(ex: Exchange) -> bool:
    """Any answer carrying a transfer: created, read (in full or masked), listed, looked up."""
    return ex.status in (200, 201) and (
        ex.path.startswith("/v2/ramp/transfers") or ex.path == "/v2/ramp/support/transfer"
    )


def ramp_wallet_read(ex: Exchange) -> bool:
    """GET /v2/ramp/transfers/{id}?wallet=: the masked view, on behalf of a wallet."""
    return ramp_read(ex) and ex.status == 200 and "wallet" in ex.query


def ramp_list(ex: Exchange) -> bool:
    return ex.method == "POST" and ex.path == "/v2/ramp/transfers/list" and ex.status == 200


def ramp_wrong_claim(ex: Exchange) -> bool:
    return ramp_read(ex) and ex.status == 404 and "X-Ramp-Claim" in ex.request_headers


def _transfers_of(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        return []
    found = [body["transfer"]] if isinstance(body.get("transfer"), dict) else []
    return found + [t for t in body.get("transfers") or [] if isinstance(t, dict)]


def ramp_created_moves(ex: Exchange) -> None:
    """Each answer's createdAt is the instant of the answer (a transfer's creation time moves
    from read to read, and a replay shows another)."""
    body = ex.json()
    transfers = _transfers_of(body)
    for transfer in transfers:
        created_moves(transfer)
    if transfers:
        ex.set_json(body)


def first_claim_token() -> Rewrite:
    """A replay per intentKey answered with the first answer's claim token, not a fresh one
    (the first response cached and served again)."""
    first: dict[str, str] = {}  # transfer id -> the claim token its first answer carried

    def rewrite(ex: Exchange) -> None:
        body = ex.json()
        if not isinstance(body, dict) or not isinstance(body.get("transfer"), dict):
            return
        token = first.setdefault(str(body["transfer"].get("id")), str(body.get("claimToken")))
        if body.get("claimToken") != token:
            body["claimToken"] = token
            ex.set_json(body)

    return rewrite


def wallet_view_requoted(ex: Exchange) -> None:
    """The wallet's (masked) view prices the transfer again at the current rate: its
    targetAmount is no longer the one the transfer was made with."""
    body = ex.json()
    transfers = [t for t in _transfers_of(body) if "targetAmount" in t]
    for transfer in transfers:
        moved = Decimal(str(transfer["targetAmount"])) * Decimal("1.01")
        transfer["targetAmount"] = str(moved.quantize(Decimal("0.01")))
    if transfers:
        ex.set_json(body)


def ramp_list_reversed(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict) and isinstance(body.get("transfers"), list):
        body["transfers"] = list(reversed(body["transfers"]))
        ex.set_json(body)


def account_in_full() -> Rewrite:
    """Masked views (the wallet's read, the list, the support lookup) show the payout account
    number in full, as the full view (creation, the claim token's read) showed it."""
    full: dict[str, str] = {}  # transfer id -> the account number its full view showed

    def rewrite(ex: Exchange) -> None:
        body = ex.json()
        changed = False
        for transfer in _transfers_of(body):
            pay_out = transfer.get("payOut")
            number = pay_out.get("accountNumber") if isinstance(pay_out, dict) else None
            if not isinstance(pay_out, dict) or not isinstance(number, str):
                continue
            known = full.setdefault(str(transfer.get("id")), number)
            if len(number) > len(known):  # a full view after a masked one
                full[str(transfer.get("id"))] = number
            elif number != known:
                pay_out["accountNumber"] = known
                changed = True
        if changed:
            ex.set_json(body)

    return rewrite


# -- v1 -------------------------------------------------------------------------------------

LIMIT_ORDER_PATH = re.compile(r"^/v1/limit-orders/(?!quote$|prepare$)[^/]+$")
V1_SUBMIT_PATH = re.compile(r"^/v1/swaps/[^/]+/submit$")


def v1_unauthorized(ex: Exchange) -> bool:
    return ex.path.startswith("/v1/") and ex.status == 401


def limit_order_read(ex: Exchange) -> bool:
    """A limit order as read: its record, or the wallet's list of them."""
    return (
        ex.method == "GET"
        and ex.status == 200
        and (ex.path == "/v1/limit-orders" or bool(LIMIT_ORDER_PATH.match(ex.path)))
    )


def limit_order_record(ex: Exchange) -> bool:
    return ex.method == "GET" and ex.status == 200 and bool(LIMIT_ORDER_PATH.match(ex.path))


def limit_order_list(ex: Exchange) -> bool:
    return ex.method == "GET" and ex.status == 200 and ex.path == "/v1/limit-orders"


def swap_created(ex: Exchange) -> bool:
    return ex.method == "POST" and ex.path == "/v1/swaps" and ex.status == 201


def v1_submit_409(ex: Exchange) -> bool:
    return ex.method == "POST" and bool(V1_SUBMIT_PATH.match(ex.path)) and ex.status == 409


def _orders_of(ex: Exchange) -> tuple[Any, list[dict[str, Any]]]:
    body = ex.json()
    data = body.get("data") if isinstance(body, dict) else None
    rows = data if isinstance(data, list) else [data]
    return body, [row for row in rows if isinstance(row, dict)]


def v1_list_reversed(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        body["data"] = list(reversed(body["data"]))
        ex.set_json(body)


def v1_rows_amounts_swapped(ex: Exchange) -> None:
    """The list shows each order's amounts the other way round (the book's orientation), while
    its record names them as the order did."""
    body, rows = _orders_of(ex)
    for row in rows:
        row["sellAmount"], row["buyAmount"] = row.get("buyAmount"), row.get("sellAmount")
    if rows:
        ex.set_json(body)


def v1_rates_swapped(ex: Exchange) -> None:
    """rateRay (the book rate) and executionRateRay (the maker frame) exchanged."""
    body, rows = _orders_of(ex)
    for row in rows:
        if "rateRay" in row and "executionRateRay" in row:
            row["rateRay"], row["executionRateRay"] = row["executionRateRay"], row["rateRay"]
    if rows:
        ex.set_json(body)


def v1_fill_unreconciled(ex: Exchange) -> None:
    """A FILLED order read without the settlement that makes it one: txHash and filledAt null."""
    body, rows = _orders_of(ex)
    for row in rows:
        if row.get("status") == "FILLED":
            row["txHash"], row["filledAt"] = None, None
    if rows:
        ex.set_json(body)


def v1_stored_status(ex: Exchange) -> None:
    """The status as stored at placing, not derived at read time: an order past its deadline or
    whose nonce the chain shows spent still reads ACTIVE (verified)."""
    body, rows = _orders_of(ex)
    for row in rows:
        if row.get("status") in ("EXPIRED", "CANCELLED"):
            row["status"], row["statusVerified"] = "ACTIVE", True
    if rows:
        ex.set_json(body)


def v1_swap_value(data: dict[str, Any]) -> None:
    swap = (data.get("transactions") or {}).get("swap")
    if isinstance(swap, dict):
        swap["value"] = "1"


def v1_submit_accepted(ex: Exchange) -> None:
    """A different txHash for a swap already submitted taken over (200, the new hash kept)."""
    tx_hash = json.loads(ex.request_body or b"{}").get("txHash")
    swap_id = ex.path.split("/")[3]
    set_status_and_data(200, {"id": swap_id, "status": "SUBMITTED", "txHash": tx_hash})(ex)


def idempotent_replay(ex: Exchange) -> bool:
    return (
        ex.method == "POST"
        and ex.path == "/v1/webhooks"
        and ex.status == 201
        and "Idempotency-Key" in ex.request_headers
    )


def replay_made_again() -> Rewrite:
    """A retry under an Idempotency-Key already used is answered by building the answer again,
    not replaying it: the endpoint is the same, its signing secret a new one."""
    seen: set[str] = set()

    def rewrite(ex: Exchange) -> None:
        key = ex.request_headers["Idempotency-Key"]
        if key not in seen:
            seen.add(key)
            return
        fresh = "whsec_" + secrets.token_hex(16)
        rewrite_data(lambda data: data.__setitem__("signingSecret", fresh))(ex)

    return rewrite
