"""The rewrites and predicates of the catalogue's mutations (:mod:`conformance.mutants.catalogue`):
what each mutation recognises in an exchange and how it breaks the answer."""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from conformance.mutants.mutations import (
    DOWN,
    RFQ_ID_PATH,
    Exchange,
    FrameRewrite,
    Predicate,
    Rewrite,
    drop_header,
    firm,
    in_quote,
    recode,
    rewrite_data,
    set_status_and_data,
)

RAMP_TRANSFER_PATH = re.compile(r"^/v2/ramp/transfers/[^/]+$")
SUBMIT_PATH = re.compile(r"^/v2/rfq/[^/]+/submit$")
CANCEL_PATH = re.compile(r"^/v2/rfq/[^/]+/cancel$")
_RAMP_ORDER = ("AWAITING_FUNDS", "PROCESSING", "SENDING", "COMPLETED")
FEED_PATHS = ("/tickers", "/pairs", "/historical_trades")


def ramp_backwards() -> Rewrite:
    """Once a transfer was served at a later status, its next reads go back to the first."""
    first: dict[str, str] = {}  # transfer id -> the first status served
    moved: set[str] = set()  # transfers already served once at a later status

    def rewrite(ex: Exchange) -> None:
        body = ex.json()  # ramp bodies are not wrapped in data: {transfer}
        transfer = body.get("transfer") if isinstance(body, dict) else None
        if not isinstance(transfer, dict) or transfer.get("status") not in _RAMP_ORDER:
            return
        key, status = str(transfer.get("id")), str(transfer["status"])
        initial = first.setdefault(key, status)
        if status != initial and key in moved:
            transfer["status"] = initial
            ex.set_json(body)
        elif status != initial:
            moved.add(key)

    return rewrite


def always(ex: Exchange) -> bool:
    return True


def api_error(ex: Exchange) -> bool:
    return ex.status >= 400 and ex.is_api() and ex.status != 429


def keyed(ex: Exchange) -> bool:
    return "Authorization" in ex.request_headers or "X-API-Key" in ex.request_headers


def unknown_key_403(ex: Exchange) -> None:
    if keyed(ex):
        recode(403, "forbidden")(ex)


def claim_404(ex: Exchange) -> bool:
    return bool(RFQ_ID_PATH.match(ex.path)) and ex.status == 404


def ladder(ex: Exchange) -> bool:
    return ex.path == "/v2/rfq/levels" and ex.status == 200


def health(ex: Exchange) -> bool:
    return ex.path in ("/v2/health", "/v1/health")


def exact_input_firm(ex: Exchange) -> bool:
    return firm(ex) and "sellAmount" in (json.loads(ex.request_body or b"{}") or {})


def cancelled(ex: Exchange) -> bool:
    return bool(CANCEL_PATH.match(ex.path)) and ex.status == 200


def cancel_409(ex: Exchange) -> bool:
    return bool(CANCEL_PATH.match(ex.path)) and ex.status == 409


def submit_400(ex: Exchange) -> bool:
    return bool(SUBMIT_PATH.match(ex.path)) and ex.status == 400


def unknown_path(ex: Exchange) -> bool:
    return ex.status == 404 and not ex.path.startswith(("/v2/rfq/", "/v2/ramp/", "/v1/"))


def validation(ex: Exchange) -> bool:
    return (
        ex.status == 400 and ex.path == "/v2/rfq/request" and ex.error_code() == "invalid_request"
    )


def rfq_success(ex: Exchange) -> bool:
    return ex.status < 400 and ex.path.startswith("/v2/rfq/")


def drop_rate_headers(ex: Exchange) -> None:
    for name in ("X-RateLimit-Remaining", "X-RateLimit-Limit", "X-RateLimit-Reset"):
        drop_header(name)(ex)


def success(ex: Exchange) -> bool:
    return ex.status < 400


def trades(ex: Exchange) -> bool:
    return ex.path == "/historical_trades" and ex.status == 200


def tickers(ex: Exchange) -> bool:
    return ex.path == "/tickers" and ex.status == 200


def feed_error(ex: Exchange) -> bool:
    return ex.path in FEED_PATHS and ex.status >= 400


def webhook_list(ex: Exchange) -> bool:
    return ex.method == "GET" and ex.path == "/v1/webhooks" and ex.status == 200


def openapi(ex: Exchange) -> bool:
    return ex.path == "/v2/openapi.json" and ex.status == 200


def providers(ex: Exchange) -> bool:
    return ex.path == "/v2/ramp/providers" and ex.status == 200


def stale_proof(ex: Exchange) -> bool:
    return ex.status == 401 and b"proof_of_control_stale" in ex.body


def invalid_reason(error: dict[str, Any]) -> None:
    error["details"] = {"reason": "proof_of_control_invalid"}


def ramp_read(ex: Exchange) -> bool:
    return ex.method == "GET" and bool(RAMP_TRANSFER_PATH.match(ex.path))


def answer_201(ex: Exchange) -> None:
    ex.status = 201


def answer_200(ex: Exchange) -> None:
    ex.status = 200


def cancel_released(ex: Exchange) -> None:
    set_status_and_data(200, {"rfqId": ex.path.split("/")[3], "status": "released"})(ex)


def text_plain(ex: Exchange) -> None:
    ex.headers["Content-Type"] = "text/plain; charset=utf-8"


def feed_ms(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict):
        for side in ("buy", "sell"):
            for trade in body.get(side) or []:
                trade["trade_timestamp"] = int(trade["trade_timestamp"]) * 1000
        ex.set_json(body)


def feed_wrapped(ex: Exchange) -> None:
    ex.set_json({"data": ex.json()})


def feed_oldest_first(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict):
        for side in ("buy", "sell"):
            body[side] = list(reversed(body.get(side) or []))
        ex.set_json(body)


def tickers_sides_inverted(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, list):
        for ticker in body:
            if isinstance(ticker, dict) and "bid" in ticker and "ask" in ticker:
                ticker["bid"], ticker["ask"] = ticker["ask"], ticker["bid"]
        ex.set_json(body)


def created_moves(data: dict[str, Any]) -> None:
    """A record's createdAt as of the read (each read a later instant): immutable in the spec."""
    if "createdAt" in data:
        now = datetime.now(UTC)
        data["createdAt"] = now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def levels_reversed(data: dict[str, Any]) -> None:
    for pair in data.get("pairs") or []:
        pair["levels"] = list(reversed(pair.get("levels") or []))


def levels_stale(data: dict[str, Any]) -> None:
    data["asOf"] = "2020-01-01T00:00:00.000Z"


def drop_reverse_pairs(data: dict[str, Any]) -> None:
    seen: set[frozenset[str]] = set()
    kept = []
    for pair in data.get("pairs") or []:
        key = frozenset((pair["sellToken"].lower(), pair["buyToken"].lower()))
        if key not in seen:
            seen.add(key)
            kept.append(pair)
    data["pairs"] = kept


def webhook_secret_listed(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        for endpoint in body["data"]:
            endpoint["signingSecret"] = "whsec_" + "0" * 32
        ex.set_json(body)


def openapi_no_errors(ex: Exchange) -> None:
    body = ex.json()
    if isinstance(body, dict):
        for item in (body.get("paths") or {}).values():
            for op in item.values():
                if isinstance(op, dict) and isinstance(op.get("responses"), dict):
                    for code in [c for c in op["responses"] if c[:1] in "45"]:
                        del op["responses"][code]
        ex.set_json(body)


def health_time_local(data: dict[str, Any]) -> None:
    data["time"] = str(data.get("time", "")).replace("Z", "").replace("+00:00", "") + "+02:00"


def ip_backstop_headers(ex: Exchange) -> None:
    ex.headers["X-RateLimit-Limit"] = "60"
    ex.headers["X-RateLimit-Remaining"] = "0"
    ex.headers["X-RateLimit-Reset"] = "60"


def rate_remaining_constant(ex: Exchange) -> None:
    if "X-RateLimit-Remaining" in ex.headers:
        ex.headers["X-RateLimit-Remaining"] = ex.headers.get("X-RateLimit-Limit", "60")


def request_id_mismatch(error: dict[str, Any]) -> None:
    error["request_id"] = "req_" + "0" * 24


def claim_in_record(data: dict[str, Any]) -> None:
    data["claimToken"] = "rfqc_leaked"


def not_base10(data: dict[str, Any]) -> None:
    data["quote"]["buyAmount"] = int(data["quote"]["buyAmount"])


def expires_late(data: dict[str, Any]) -> None:
    data["quote"]["expiresAt"] = "2999-01-01T00:00:00.000Z"


def swap_value(data: dict[str, Any]) -> None:
    data["transactions"]["swap"]["value"] = "1"


def approval_wrong_chain(data: dict[str, Any]) -> None:
    data["transactions"]["approval"]["chainId"] = 1


def no_claim_token(data: dict[str, Any]) -> None:
    data.pop("claimToken", None)


def uppercase_status(data: dict[str, Any]) -> None:
    data["status"] = str(data.get("status", "")).upper()


def cancel_status(data: dict[str, Any]) -> None:
    data["status"] = "cancelled"


def drop_issues(error: dict[str, Any]) -> None:
    error.pop("details", None)


def fee_outside(data: dict[str, Any]) -> None:
    quote = data["quote"]
    quote["takerPays"] = str(int(quote["takerPays"]) - int(quote.get("feeAmount") or 0) - 1)


def no_quote_reason(data: dict[str, Any]) -> None:
    data["reason"] = "no_liquidity"


def providers_unwrapped(ex: Exchange) -> None:
    """{providers: [...]} answered as a bare array."""
    body = ex.json()
    if isinstance(body, dict) and "providers" in body:
        ex.set_json(body["providers"])


def feed_error_envelope(ex: Exchange) -> None:
    ex.set_json({"error": {"code": "invalid_request", "message": "bad"}})


def no_quote_400(ex: Exchange) -> None:
    ex.status = 400
    request_id = ex.headers.get("X-Request-Id")
    ex.set_json(
        {"error": {"code": "invalid_request", "message": "no quote", "request_id": request_id}}
    )


def taker_pays_over_cap(ex: Exchange) -> None:
    cap = int(json.loads(ex.request_body)["sellAmount"])
    rewrite_data(in_quote(lambda q: q.__setitem__("takerPays", str(cap + 1))))(ex)


_ADDRESS = re.compile(r'"0x[0-9a-fA-F]{40}"')


def lowercase_addresses(ex: Exchange) -> None:
    """Every address in a JSON answer lowercased (the spec allows it)."""
    ex.body = _ADDRESS.sub(lambda m: m.group(0).lower(), ex.body.decode()).encode()


def extra_field(data: dict[str, Any]) -> None:
    """A field the spec does not name, added to a success body (the spec allows it)."""
    data["servedBy"] = "mutation-proxy"


def json_answer(ex: Exchange) -> bool:
    return ex.is_api() and ex.status == 200


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
