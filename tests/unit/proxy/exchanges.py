"""Exchanges as the proxy records them, made by hand for the checks' unit tests: a spec-true
answer of each kind (a firm quote with real signed orders, a no-quote, a record, a ladder, ...)
that a test then breaks one way."""

from __future__ import annotations

import io
import itertools
import json
import secrets
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

from eth_account import Account

from conformance.checks.assertions import rate_ray
from conformance.wire.chain import calldata, erc20_approve
from conformance.wire.client import Headers
from contracts.orders import RfqOrder, encode_order, sign_order
from rfqkit.timestamps import isoformat
from rfqsim.proxy.documents import Documents
from rfqsim.proxy.exchange import ProxiedExchange
from rfqsim.proxy.findings import Findings
from rfqsim.proxy.state import State
from rfqsim.proxy.watcher import Watcher

CHAIN = 97
USDC = "0xB14C073053658adc035d145Ab4fa94Dac6CDE1B0"  # 6 decimals
USDT = "0x15B7e9B593E7332284070494F55FCD4dDe8c78BF"  # 18 decimals
TAKER = "0x8f49B351160Eb48606dC0114761aaB526c18782D"
REACTOR = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
PERMIT2 = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
KEY = "tx_test_6ae2edaf29e7.X7j-oebgi6fxuM9RKuWBNDA-zhbeRA0s_35baqF6d1s"
NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
MAKER = Account.create()


def request_id() -> str:
    return "req_" + secrets.token_hex(12)


def answer_headers(request_id_value: str, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    return [
        ("Content-Type", "application/json; charset=utf-8"),
        ("Date", format_datetime(NOW, usegmt=True)),
        ("X-Request-Id", request_id_value),
        *extra,
    ]


_SPENT = itertools.count(1)


def limited() -> tuple[tuple[str, str], ...]:
    """The limiter's headers of one more request in the same window (Remaining counts down)."""
    remaining = max(0, 10_000 - next(_SPENT))
    return (
        ("X-RateLimit-Limit", "10000"),
        ("X-RateLimit-Remaining", str(remaining)),
        ("X-RateLimit-Reset", "60"),
    )


def exchange(
    method: str,
    target: str,
    *,
    status: int = 200,
    body: Any = None,
    request: Any = None,
    request_headers: list[tuple[str, str]] | None = None,
    headers: list[tuple[str, str]] | None = None,
    raw: bytes | None = None,
) -> ProxiedExchange:
    """One exchange; ``body`` is the answer's JSON (``raw`` its bytes as they are)."""
    path, _, query = target.partition("?")
    sent = list(request_headers or [])
    if request is not None and not any(k.lower() == "content-type" for k, _ in sent):
        sent.append(("Content-Type", "application/json"))
    ex = ProxiedExchange(
        method=method,
        path=path,
        query_string=query,
        request_headers=Headers(sent),
        request_body=json.dumps(request).encode() if request is not None else b"",
        client_ip="127.0.0.1",
        wall=NOW.timestamp(),
    )
    rid = request_id()
    if raw is None:
        raw = json.dumps(body).encode() if body is not None else b""
    ex.answer(status, "", headers if headers is not None else answer_headers(rid), raw)
    return ex


def error(
    status: int, code: str, *, request_id_value: str | None = None, **extra: Any
) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    rid = request_id_value or request_id()
    envelope: dict[str, Any] = {"code": code, "message": "refused", "request_id": rid, **extra}
    return answer_headers(rid), {"error": envelope}


def keyed() -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {KEY}"), ("Content-Type", "application/json")]


def firm_request(**changes: Any) -> dict[str, Any]:
    body = {
        "chainId": CHAIN,
        "sellToken": USDC,
        "buyToken": USDT,
        "sellAmount": "10000000",
        "taker": TAKER,
    }
    body.update(changes)
    return body


def rate_limited_firm(*extra: tuple[str, str]) -> ProxiedExchange:
    """A keyed firm request answered 429 ``rate_limited``, with ``extra`` headers."""
    headers, body = error(429, "rate_limited")
    return exchange(
        "POST",
        "/v2/rfq/request",
        status=429,
        request=firm_request(),
        request_headers=keyed(),
        body=body,
        headers=[*headers, *extra],
    )


def refused_proof(request: dict[str, Any]) -> ProxiedExchange:
    """A keyless firm request the service refused 401 ``proof_of_control_invalid``."""
    headers, answer = error(401, "unauthorized", details={"reason": "proof_of_control_invalid"})
    return exchange(
        "POST",
        "/v2/rfq/request",
        status=401,
        request=request,
        body=answer,
        headers=[*headers, *limited()],
    )


def firm_answer(sell_amount: int = 10_000_000) -> dict[str, Any]:
    """A ``quoted`` answer for :func:`firm_request`: one maker order signed for real, its
    transactions built as the spec says (approve takerPays to the reactor, execute the order)."""
    fee = sell_amount * 5 // 10_005  # the order's output plus 5 bps of it is the whole input
    output = sell_amount - fee
    bought = output * 10**12 * 999 // 1000
    deadline = NOW + timedelta(seconds=90)
    order = RfqOrder(
        reactor=REACTOR,
        maker=MAKER.address,
        taker=TAKER,
        inputToken=USDT,
        inputAmount=bought,
        outputToken=USDC,
        outputAmount=output,
        feeAmount=fee,
        nonce=secrets.randbits(64),
        deadline=int(deadline.timestamp()),
    )
    encoded = "0x" + encode_order(order).hex()
    signature = "0x" + sign_order(MAKER.key, order, CHAIN, PERMIT2).hex()
    taker_pays = output + fee
    swap = calldata(
        "execute((bytes,bytes))",
        ["(bytes,bytes)"],
        [(encode_order(order), bytes.fromhex(signature[2:]))],
    )
    quote = {
        "sellAmount": str(sell_amount),
        "buyAmount": str(bought),
        "feeAmount": str(fee),
        "takerPays": str(taker_pays),
        "rateRay": str(rate_ray(taker_pays, 6, bought, 18)),
        "expiresAt": isoformat(NOW + timedelta(seconds=60)),
        "orderDeadline": isoformat(deadline),
        "latestOrderDeadline": isoformat(deadline),
        "reactor": REACTOR,
        "spender": REACTOR,
        "taker": TAKER,
        "encodedOrder": encoded,
        "signature": signature,
        "orders": [
            {
                "encodedOrder": encoded,
                "signature": signature,
                "sellAmount": str(taker_pays),
                "buyAmount": str(bought),
                "feeAmount": str(fee),
                "maker": MAKER.address,
            }
        ],
    }
    return {
        "rfqId": "rfq_" + secrets.token_hex(12),
        "claimToken": "rfqc_" + secrets.token_urlsafe(32),
        "status": "quoted",
        "quote": quote,
        "transactions": {
            "approval": {
                "to": USDC,
                "data": "0x" + erc20_approve(REACTOR, taker_pays).hex(),
                "value": "0",
                "chainId": CHAIN,
            },
            "swap": {"to": REACTOR, "data": "0x" + swap.hex(), "value": "0", "chainId": CHAIN},
        },
        "routing": routing(),
    }


def routing() -> dict[str, Any]:
    return {
        "preferenceApplied": False,
        "restrictionApplied": False,
        "fallbackUsed": False,
        "targetMakerWallets": [],
        "preferredQuotesReceived": 0,
        "openMarketQuotesReceived": 1,
    }


def record(firm: dict[str, Any], status: str = "quoted", **changes: Any) -> dict[str, Any]:
    """GET /v2/rfq/{id} of the RFQ ``firm`` answered."""
    quote = firm["quote"]
    body: dict[str, Any] = {
        "rfqId": firm["rfqId"],
        "status": status,
        "chainId": CHAIN,
        "sellToken": USDC,
        "buyToken": USDT,
        "sellAmount": quote["takerPays"],
        "buyAmount": quote["buyAmount"],
        "feeAmount": quote["feeAmount"],
        "taker": TAKER,
        "quoteTtlMs": 60000,
        "replyBy": isoformat(NOW + timedelta(milliseconds=750)),
        "expiresAt": quote["expiresAt"],
        "noQuoteReason": None,
        "txHash": None,
        "submittedAt": None,
        "filledAt": None,
        "failReason": None,
        "routing": routing(),
        "createdAt": isoformat(NOW),
    }
    body.update(changes)
    return body


def ladder() -> dict[str, Any]:
    def pair(sell: str, buy: str, sell_decimals: int, buy_decimals: int) -> dict[str, Any]:
        unit = 10**sell_decimals
        out = 10**buy_decimals
        return {
            "sellToken": sell,
            "buyToken": buy,
            "sellDecimals": sell_decimals,
            "buyDecimals": buy_decimals,
            "minSellAmount": str(unit // 100),
            "maxSellAmount": str(100 * unit),
            "levels": [
                {"sellAmount": str(n * unit), "buyAmount": str(n * out * 999 // 1000)}
                for n in (1, 10, 100)
            ],
        }

    return {
        "chainId": CHAIN,
        "asOf": isoformat(NOW),
        "pairs": [pair(USDC, USDT, 6, 18), pair(USDT, USDC, 18, 6)],
    }


def watcher() -> tuple[Watcher, Findings, io.StringIO]:
    out = io.StringIO()
    findings = Findings(out)
    return Watcher(findings, Documents(), State()), findings, out


def found(watch: Watcher, ex: ProxiedExchange) -> dict[str, str]:
    """The rules found on ``ex`` and the side of each."""
    return {f.rule: f.side for f in watch.inspect(ex).found}
