"""The rewrites and predicates of the catalogue's mutations (:mod:`conformance.mutants.catalogue`):
what each mutation recognises in an exchange and how it breaks the answer."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from conformance.mutants.mutations import (
    RFQ_ID_PATH,
    Exchange,
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
