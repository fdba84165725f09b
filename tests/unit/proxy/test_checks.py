"""The proxy's checks on exchanges made by hand: a spec-true exchange of each kind passes clean,
and each way of breaking it is found under the rule id it breaks, on the side that broke it."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

import pytest

from conformance.wire.signing import sign_taker_proof
from rfqkit.timestamps import isoformat
from tests.unit.proxy.exchanges import (
    NOW,
    answer_headers,
    error,
    exchange,
    firm_answer,
    firm_request,
    found,
    keyed,
    ladder,
    limited,
    rate_limited_firm,
    record,
    refused_proof,
    request_id,
    watcher,
)


def _firm(answer: dict[str, Any], request: dict[str, Any] | None = None, status: int = 200) -> Any:
    rid = request_id()
    return exchange(
        "POST",
        "/v2/rfq/request",
        status=status,
        request=request or firm_request(),
        request_headers=keyed(),
        body={"data": answer},
        headers=answer_headers(rid, *limited()),
    )


def test_a_spec_true_firm_quote_record_and_ladder_pass_clean() -> None:
    watch, findings, out = watcher()
    assert found(watch, exchange("GET", "/v2/rfq/levels?chainId=97", body={"data": ladder()})) == {}
    firm = firm_answer()
    assert found(watch, _firm(firm)) == {}
    rid = request_id()
    read = exchange(
        "GET",
        f"/v2/rfq/{firm['rfqId']}",
        request_headers=keyed(),
        body={"data": record(firm)},
        headers=answer_headers(rid, *limited()),
    )
    assert found(watch, read) == {}
    assert findings.total == 0, out.getvalue()
    assert findings.exchanges == 3
    # The checks ran: the quote's parts, the ladder's, the record's.
    assert {
        "rfq/resources/firm-quote/quote-fields/orders",
        "rfq/resources/firm-quote/quote-fields/rateray",
        "rfq/resources/price-ladder/every-pair-chain-appears",
        "rfq/resources/rfq-record/signed-order-signature-claim",
        "rfq/limits/quote-ttl",
    } <= findings.exercised


@pytest.mark.parametrize(
    ("break_it", "rule"),
    [
        (
            lambda d: d["quote"].__setitem__("buyAmount", int(d["quote"]["buyAmount"])),
            "rfq/overview/conventions/amounts-base-10-strings-atomic",
        ),
        (lambda d: d.pop("claimToken"), "rfq/resources/firm-quote/claimtoken"),
        (
            lambda d: d["quote"].__setitem__("takerPays", str(int(d["quote"]["takerPays"]) + 1)),
            "rfq/resources/firm-quote/quote-fields/takerpays",
        ),
        (
            lambda d: d["transactions"]["swap"].__setitem__("value", "1"),
            "rfq/resources/firm-quote/unsigned-transaction-shape",
        ),
        (
            lambda d: d["transactions"]["approval"].__setitem__("chainId", 1),
            "rfq/resources/firm-quote/unsigned-transaction-shape",
        ),
        (
            lambda d: d["quote"].__setitem__("expiresAt", "2999-01-01T00:00:00.000Z"),
            "rfq/resources/firm-quote/quote-fields/expiresat",
        ),
        (
            lambda d: d["quote"].__setitem__("rateRay", "1"),
            "rfq/resources/firm-quote/quote-fields/rateray",
        ),
    ],
)
def test_a_broken_firm_quote_is_found_under_its_rule(break_it: Any, rule: str) -> None:
    watch, _, _ = watcher()
    found(watch, exchange("GET", "/v2/rfq/levels?chainId=97", body={"data": ladder()}))
    firm = firm_answer()
    break_it(firm)
    assert found(watch, _firm(firm)).get(rule) == "service"


def test_a_firm_quote_answered_201_breaks_the_request_row() -> None:
    watch, _, _ = watcher()
    assert (
        found(watch, _firm(firm_answer(), status=201)).get("rfq/endpoints/post-v2-rfq-request")
        == "service"
    )


def test_amounts_as_numbers_and_issued_at_in_seconds_are_the_clients() -> None:
    watch, _, out = watcher()
    body = firm_request(sellAmount=10_000_000)
    body["takerProof"] = {"nonce": "0x" + "ab" * 32, "issuedAt": 1_700_000_000, "signature": "0x12"}
    headers, answer = error(400, "invalid_request", details={"issues": [{"path": "sellAmount"}]})
    ex = exchange("POST", "/v2/rfq/request", status=400, request=body, body=answer, headers=headers)
    assert found(watch, ex) == {
        "rfq/overview/conventions/amounts-base-10-strings-atomic": "client",
        "rfq/resources/takerproof/issuedat": "client",
    }
    assert "VIOLATION client rfq/resources/takerproof/issuedat" in out.getvalue()


def test_a_proof_missing_a_field_and_both_sizes_are_the_clients() -> None:
    watch, _, _ = watcher()
    body = firm_request(buyAmount="1")
    body["takerProof"] = {"nonce": "0x" + "ab" * 32, "signature": "0x12"}
    issues = {"issues": [{"path": "takerProof.issuedAt"}]}
    headers, answer = error(400, "invalid_request", details=issues)
    ex = exchange("POST", "/v2/rfq/request", status=400, request=body, body=answer, headers=headers)
    assert found(watch, ex) == {
        "rfq/endpoints/request-body/sending-both-neither-sellamount": "client",
        "rfq/auth/proof-of-control/sent-takerproof-nonce-issuedat": "client",
    }


def test_a_schema_failure_is_refused_400_with_its_issues_never_accepted() -> None:
    watch, _, _ = watcher()
    body = firm_request()
    del body["taker"]
    headers, answer = error(400, "invalid_request")
    ex = exchange("POST", "/v2/rfq/request", status=400, request=body, body=answer, headers=headers)
    assert found(watch, ex) == {
        "rfq/endpoints/request-body/taker": "client",
        "rfq/errors/details-optional-either-issues": "service",
    }
    # Sent as text/plain as well: the service may name that fault by a reason instead.
    headers, answer = error(400, "invalid_request", details={"reason": "unsupported_media_type"})
    plain = exchange(
        "POST",
        "/v2/rfq/request",
        status=400,
        request=body,
        request_headers=[("Content-Type", "text/plain")],
        body=answer,
        headers=headers,
    )
    assert found(watch, plain) == {
        "rfq/endpoints/request-body/taker": "client",
        "rfq/endpoints/all-bodies-json": "client",
    }
    accepted = exchange(
        "POST",
        "/v2/rfq/x/submit",
        request={"txHash": "0x1234"},
        request_headers=keyed(),
        body={"data": {"status": "submitted"}},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, accepted) == {
        "rfq/endpoints/cancel-submit-status/submit-body": "client",
        "rfq/errors/400-invalid_request": "service",
    }


def test_403_is_never_the_answer_to_a_keyless_rfq_read_or_a_malformed_key() -> None:
    watch, _, _ = watcher()
    headers, answer = error(403, "forbidden")
    claim = [("X-Rfq-Claim", "rfqc_x")]
    keyless = exchange(
        "GET", "/v2/rfq/rfq_x", status=403, request_headers=claim, body=answer, headers=headers
    )
    assert found(watch, keyless) == {"rfq/errors/404-not_found": "service"}
    headers, answer = error(403, "forbidden")
    malformed = exchange(
        "GET",
        "/v2/rfq/rfq_x",
        status=403,
        request_headers=[("X-API-Key", "junk")],
        body=answer,
        headers=headers,
    )
    assert found(watch, malformed) == {
        "rfq/auth/api-keys/format-env-_live_-public_prefix": "client",
        "rfq/auth/api-keys/revoked-suspended-unknown-malformed": "service",
    }
    headers, answer = error(405, "method_not_allowed")
    no_allow = exchange("DELETE", "/v2/health", status=405, body=answer, headers=headers)
    assert found(watch, no_allow) == {"rfq/errors/envelope": "service"}


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (
            lambda h, b: [x for x in h if x[0] != "X-Request-Id"],
            "rfq/overview/conventions/every-response-carries-x-request-id",
        ),
        (
            lambda h, b: [
                ("Content-Type", "text/plain") if x[0] == "Content-Type" else x for x in h
            ],
            "rfq/errors/envelope",
        ),
        (
            lambda h, b: (b["error"].__setitem__("request_id", "req_other"), h)[1],
            "rfq/errors/request_id-equals-x-request-id-header",
        ),
        (
            lambda h, b: (b["error"].__setitem__("code", "forbidden"), h)[1],
            "rfq/errors/404-not_found",
        ),
        (lambda h, b: (b.__setitem__("data", {}), h)[1], "rfq/errors/envelope"),
    ],
)
def test_a_broken_error_envelope_is_found(change: Any, rule: str) -> None:
    watch, _, _ = watcher()
    headers, body = error(404, "not_found")
    headers = change(headers, body)
    ex = exchange(
        "GET",
        "/v2/rfq/rfq_unknown",
        status=404,
        request_headers=keyed(),
        body=body,
        headers=headers,
    )
    assert found(watch, ex).get(rule) == "service"


def test_limiter_headers_retry_after_and_a_bad_keys_401() -> None:
    watch, _, _ = watcher()
    firm = firm_answer()
    rid = request_id()
    unlimited = exchange(
        "POST",
        "/v2/rfq/request",
        request=firm_request(),
        request_headers=keyed(),
        body={"data": firm},
        headers=answer_headers(rid),
    )
    assert (
        found(watch, unlimited).get("rfq/limits/rate-limit-headers-responses-handled") == "service"
    )
    headers, body = error(401, "unauthorized")
    bad_key = exchange(
        "GET",
        "/v2/rfq/rfq_x",
        status=401,
        request_headers=keyed(),
        body=body,
        headers=[*headers, *limited()],
    )
    assert found(watch, bad_key) == {"rfq/limits/absent-responses-rejected-earlier": "service"}
    headers, body = error(429, "rate_limited")
    rate_limited = exchange(
        "GET",
        "/v2/rfq/rfq_x",
        status=429,
        request_headers=keyed(),
        body=body,
        headers=[
            *headers,
            ("X-RateLimit-Limit", "60"),
            ("X-RateLimit-Remaining", "0"),
            ("X-RateLimit-Reset", "5"),
        ],
    )
    assert found(watch, rate_limited) == {"rfq/limits/retry-after-set-two-time-window": "service"}
    capped = rate_limited_firm(*limited(), ("Retry-After", "5"))
    assert found(watch, capped) == {"rfq/limits/retry-after-set-two-time-window": "service"}


def test_a_429_at_remaining_zero_needs_retry_after_only_once_the_window_was_spent() -> None:
    """X-RateLimit-Remaining 0 on a firm request's 429 is the limiter's refusal, or the
    outstanding cap's on the request that took the window's last slot (spec 1 "Limits": only
    the limiter's carries Retry-After). The proxy asks for Retry-After only when the window it
    saw before was already spent; a CI run once found a false fault there."""
    watch, _, _ = watcher()
    rule = "rfq/limits/retry-after-set-two-time-window"

    def refused(remaining: str, after: Any = None) -> Any:
        ex = rate_limited_firm(
            ("X-RateLimit-Limit", "60"),
            ("X-RateLimit-Remaining", remaining),
            ("X-RateLimit-Reset", "30"),
        )
        if after is not None:
            ex.started, ex.finished = after.finished + 0.01, after.finished + 0.02
        return ex

    capped = refused("1")  # the outstanding cap, the limiter let it through
    assert rule not in found(watch, capped)
    last_slot = refused("0", after=capped)  # the cap again, on the window's last slot
    assert rule not in found(watch, last_slot)
    spent = refused("0", after=last_slot)  # the limiter's: it must say when to retry
    assert found(watch, spent).get(rule) == "service"


def test_the_record_never_carries_the_claim_token_and_keeps_the_ttl() -> None:
    watch, _, _ = watcher()
    firm = firm_answer()
    found(watch, _firm(firm))
    leaky = record(firm, claimToken=firm["claimToken"])
    ex = exchange(
        "GET",
        f"/v2/rfq/{firm['rfqId']}",
        request_headers=keyed(),
        body={"data": leaky},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, ex) == {"rfq/resources/rfq-record/signed-order-signature-claim": "service"}
    late = firm_answer()
    late["quote"]["expiresAt"] = isoformat(NOW + timedelta(seconds=61))
    found(watch, _firm(late))
    ex = exchange(
        "GET",
        f"/v2/rfq/{late['rfqId']}",
        request_headers=keyed(),
        body={"data": record(firm_answer() | {"rfqId": late["rfqId"]})},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, ex).get("rfq/limits/quote-ttl") == "service"


def test_status_transitions_claims_submits_and_cancels_across_exchanges() -> None:
    watch, _, _ = watcher()
    firm = firm_answer()
    found(watch, _firm(firm))
    rfq = f"/v2/rfq/{firm['rfqId']}"
    claim = [("X-Rfq-Claim", firm["claimToken"])]
    tx = "0x" + "cd" * 32

    def read(status: str, claim_headers: list[tuple[str, str]], code: int = 200) -> dict[str, str]:
        filled = {"filledAt": isoformat(NOW), "txHash": tx} if status == "filled" else {}
        body = (
            {"data": record(firm, status=status, **filled)}
            if code == 200
            else error(404, "not_found")[1]
        )
        headers = answer_headers(request_id(), *limited())
        if code != 200:
            headers = answer_headers(body["error"]["request_id"], *limited())
        return found(
            watch,
            exchange(
                "GET", rfq, status=code, request_headers=claim_headers, body=body, headers=headers
            ),
        )

    assert read("quoted", claim) == {}
    assert read("quoted", [("X-Rfq-Claim", "rfqc_wrong")]) == {
        "rfq/endpoints/cancel-submit-status/ownership": "service"
    }
    assert read("quoted", claim, code=404) == {
        "rfq/auth/claim-token/without-key-only-authorization": "service"
    }
    submitted = exchange(
        "POST",
        f"{rfq}/submit",
        request={"txHash": tx},
        request_headers=claim,
        body={"data": record(firm, status="submitted", txHash=tx)},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, submitted) == {}
    other = exchange(
        "POST",
        f"{rfq}/submit",
        request={"txHash": "0x" + "ef" * 32},
        request_headers=claim,
        body={"data": record(firm, status="submitted", txHash=tx)},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, other) == {"rfq/states/rule-4": "service"}
    cancelled = exchange(
        "POST",
        f"{rfq}/cancel",
        request_headers=claim,
        body={"data": {"rfqId": firm["rfqId"], "status": "released"}},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, cancelled) == {"rfq/states/rule-1": "service"}
    assert read("quoted", claim) == {
        "rfq/states/soliciting-maker-replies-within-reply-budget-to-quoted": "service"
    }
    # Filled: the settled amounts are the quote's, and they stay.
    assert read("filled", claim) == {}
    wrong = record(firm, status="filled", sellAmount="1", filledAt=isoformat(NOW), txHash=tx)
    ex = exchange(
        "GET",
        rfq,
        request_headers=claim,
        body={"data": wrong},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, ex) == {
        "rfq/resources/rfq-record/sellamount-buyamount-feeamount": "service"
    }


def test_a_records_creation_time_is_the_same_on_every_read() -> None:
    """Read twice: the record's createdAt may be spelled to the second in one view, but a
    creation time that moves is the service's finding (the held-back break that passed)."""
    watch, _, out = watcher()
    firm = firm_answer()
    found(watch, _firm(firm))

    def read(created_at: str) -> dict[str, str]:
        ex = exchange(
            "GET",
            f"/v2/rfq/{firm['rfqId']}",
            request_headers=keyed(),
            body={"data": record(firm, createdAt=created_at, replyBy=reply_by)},
            headers=answer_headers(request_id(), *limited()),
        )
        return found(watch, ex)

    reply_by = isoformat(NOW + timedelta(seconds=10))  # after every createdAt read below
    first = isoformat(NOW + timedelta(milliseconds=250))
    assert read(first) == {}
    assert read(first) == {}
    assert read(isoformat(NOW, timespec="seconds")) == {}  # the same second, spelled whole
    assert read(isoformat(NOW + timedelta(seconds=3))) == {
        "rfq/resources/rfq-record/createdat": "service"
    }
    assert f"{firm['rfqId']}: expected the createdAt first read, {first}" in out.getvalue()


def test_a_records_times_come_after_its_creation() -> None:
    """replyBy, submittedAt and filledAt are compared with createdAt on every read; a block's
    whole-second filledAt may read up to a second before a createdAt in milliseconds."""
    watch, _, out = watcher()
    firm = firm_answer()
    found(watch, _firm(firm))

    def read(**changes: Any) -> dict[str, str]:
        ex = exchange(
            "GET",
            f"/v2/rfq/{firm['rfqId']}",
            request_headers=keyed(),
            body={"data": record(firm, **changes)},
            headers=answer_headers(request_id(), *limited()),
        )
        return found(watch, ex)

    created = NOW + timedelta(milliseconds=400)
    assert read(createdAt=isoformat(created)) == {}
    whole_second_fill = isoformat(NOW, timespec="seconds")
    assert read(createdAt=isoformat(created), filledAt=whole_second_fill) == {}
    early = isoformat(created - timedelta(seconds=2))
    assert read(createdAt=isoformat(created), replyBy=early) == {
        "rfq/resources/rfq-record/replyby": "service"
    }
    assert read(createdAt=isoformat(created), submittedAt=early) == {
        "rfq/resources/rfq-record/submittedat-filledat": "service"
    }
    assert f"submittedAt: expected not before createdAt {isoformat(created)}, got {early}" in (
        out.getvalue()
    )


def test_a_trade_read_again_keeps_its_price_and_volumes() -> None:
    """A feed trade is a dedupe key's row: read again (another page, another filter) it shows
    the same price, volumes, time and side; the spelling of a decimal may differ."""
    watch, _, out = watcher()
    transport = [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=2")]
    trade = {
        "trade_id": "0x" + "ab" * 32 + "-0",
        "price": "1550.25",
        "base_volume": "12.5",
        "target_volume": "19378.125",
        "trade_timestamp": 1_767_268_800,
        "type": "sell",
    }

    def read(**changes: Any) -> dict[str, str]:
        ex = exchange(
            "GET",
            "/historical_trades?ticker_id=USDT_NGN",
            body={"buy": [], "sell": [trade | changes]},
            headers=answer_headers(request_id(), *transport),
        )
        return found(watch, ex)

    assert read() == {}
    assert read(price="1550.250") == {}  # the same number
    assert read(price="1551") == {
        "v1/feed/get-historical_trades/trade_id-fills-transaction-hash": "service"
    }
    assert f'{trade["trade_id"]}: expected the price first read, "1550.25", got "1551"' in (
        out.getvalue()
    )


def test_a_claim_token_returned_twice_is_found() -> None:
    watch, _, _ = watcher()
    firm = firm_answer()
    assert found(watch, _firm(firm)) == {}
    again = copy.deepcopy(firm_answer())
    again["claimToken"] = firm["claimToken"]
    assert found(watch, _firm(again)) == {"rfq/auth/claim-token/returned-once-post-v2": "service"}


def test_the_limiter_counts_down_within_a_window() -> None:
    watch, _, _ = watcher()

    def health_of_key(remaining: str, *instance: tuple[str, str]) -> Any:
        ex = exchange(
            "GET",
            "/v2/rfq/rfq_x",
            status=404,
            request_headers=keyed(),
            body=error(404, "not_found")[1],
        )
        rid = ex.json["error"]["request_id"]
        ex.answer(
            404,
            "",
            answer_headers(
                rid,
                ("X-RateLimit-Limit", "60"),
                ("X-RateLimit-Remaining", remaining),
                ("X-RateLimit-Reset", "30"),
                *instance,
            ),
            ex.body,
        )
        return ex

    first, second = health_of_key("40"), health_of_key("40")
    second.started = first.finished + 0.01
    assert found(watch, first) == {}
    assert found(watch, second) == {"rfq/limits/rate-limit-headers-responses-handled": "service"}

    # The limiter is per instance (spec 1 "Limits"): answers naming the instance that served
    # them count down per instance, each instance's window its own.
    at_one, at_two = ("X-Rfqsim-Instance", "0"), ("X-Rfqsim-Instance", "1")
    one = health_of_key("20", at_one)
    two = health_of_key("30", at_two)
    one_again = health_of_key("20", at_one)
    two.started = one.finished + 0.01
    one_again.started = two.finished + 0.01
    assert found(watch, one) == {}
    assert found(watch, two) == {}  # more left than at the other instance: its own window
    assert found(watch, one_again) == {"rfq/limits/rate-limit-headers-responses-handled": "service"}


def test_a_valid_signature_refused_as_invalid_breaks_rule_6() -> None:
    from eth_account import Account

    watch, _, _ = watcher()
    taker = Account.create()
    now_ms = int(NOW.timestamp() * 1000)

    def refused_as_invalid(signer: Any, issued_at_ms: int) -> dict[str, str]:
        proof = sign_taker_proof(signer.key, taker.address, 97, issued_at_ms=issued_at_ms)
        return found(watch, refused_proof(firm_request(taker=taker.address, takerProof=proof)))

    # An hour old but signed by the taker: stale, not invalid.
    assert refused_as_invalid(taker, now_ms - 3_600_000) == {
        "rfq/auth/proof-of-control/rule-6": "service"
    }
    # Signed by another key: invalid it is, and the client is told what it signed wrong.
    other = Account.create()
    assert refused_as_invalid(other, now_ms) == {"rfq/auth/proof-of-control/rule-3": "client"}


def test_a_signature_of_another_key_names_the_address_and_the_data_to_sign() -> None:
    from eth_account import Account

    watch, _, out = watcher()
    taker, other = Account.create(), Account.create()
    issued_at = int(NOW.timestamp() * 1000)
    proof = sign_taker_proof(other.key, taker.address, 97, issued_at_ms=issued_at)
    (finding,) = watch.inspect(
        refused_proof(firm_request(taker=taker.address, takerProof=proof))
    ).found
    assert finding.side == "client"
    assert finding.message == (
        f"takerProof.signature recovers to {other.address}, not the taker {taker.address}: it "
        'must sign domain {name: "Service Taker Control", version: "1", chainId: 97} (no '
        "verifyingContract), type TakerControl(address taker,uint256 chainId,bytes32 nonce,"
        f"uint256 issuedAt), message {{taker: {taker.address}, chainId: 97, nonce: "
        f"{proof['nonce']}, issuedAt: {issued_at}}}"
    )
    assert proof["signature"] not in out.getvalue()  # a proof's signature is never shown
    # A signature of the right size that recovers to nothing at all: said so, with the data.
    unrecoverable = {**proof, "signature": "0x" + "00" * 65}
    request = firm_request(taker=taker.address, takerProof=unrecoverable)
    (finding,) = watch.inspect(refused_proof(request)).found
    assert (finding.rule, finding.side) == ("rfq/auth/proof-of-control/rule-3", "client")
    assert finding.message.startswith(
        "takerProof.signature recovers to no address (65 bytes; expected 65 bytes r, s, v or "
        '64 compact) over domain {name: "Service Taker Control"'
    )


def test_feed_bodies_and_errors() -> None:
    watch, _, _ = watcher()
    transport = [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=2")]
    rid = request_id()
    tickers = [
        {
            "ticker_id": "USDT_NGN",
            "base_currency": "USDT",
            "target_currency": "NGN",
            **dict.fromkeys(
                ("last_price", "bid", "ask", "high", "low", "base_volume", "target_volume"), "1.5"
            ),
        }
    ]
    ok = exchange("GET", "/tickers", body=tickers, headers=answer_headers(rid, *transport))
    assert found(watch, ok) == {}
    wrapped = exchange(
        "GET", "/tickers", body={"data": tickers}, headers=answer_headers(rid, *transport)
    )
    assert found(watch, wrapped) == {
        "v1/feed/get-tickers/response-array-ticker_id-base_currency": "service"
    }
    enveloped = exchange(
        "GET",
        "/pairs",
        status=400,
        body={"error": {"code": "x", "message": "y"}},
        headers=answer_headers(rid, *transport),
    )
    assert found(watch, enveloped) == {
        "v1/errors/rates-feed-errors/body-error-string-400": "service"
    }
    trades = {
        "buy": [
            {
                "trade_id": "0x" + "ab" * 32 + "-0",
                "price": "1",
                "base_volume": "1",
                "target_volume": "1",
                "trade_timestamp": 1_767_000_000_000,
                "type": "buy",
            }
        ],
        "sell": [],
    }
    ms = exchange(
        "GET",
        "/historical_trades?ticker_id=USDT_NGN",
        body=trades,
        headers=answer_headers(rid, *transport),
    )
    assert found(watch, ms) == {"v1/feed/get-historical_trades/response-buy-sell-newest": "service"}


@pytest.mark.parametrize(
    ("change", "rule", "said"),
    [
        (
            {"bid": "1560.2", "ask": "1540.8"},
            "v1/feed/get-tickers/bid-and-ask",
            "USDT_NGN: bid 1560.2 is above ask 1540.8",
        ),
        (
            {"low": "1551", "last_price": "1550", "high": "1552"},
            "v1/feed/get-tickers/last_price-high-and-low",
            "USDT_NGN: expected low <= last_price <= high, got low 1551, last_price 1550, "
            "high 1552",
        ),
    ],
)
def test_a_ticker_whose_own_fields_disagree_is_found(
    change: dict[str, str], rule: str, said: str
) -> None:
    """Two fields of one answer compared, no control needed: sides inverted, a last price
    outside its own day's range."""
    watch, _, out = watcher()
    ticker = {
        "ticker_id": "USDT_NGN",
        "base_currency": "USDT",
        "target_currency": "NGN",
        "last_price": "1550",
        "bid": "1540.8",
        "ask": "1560.2",
        "high": "1552",
        "low": "1549",
        "base_volume": "100",
        "target_volume": "155000",
    }
    transport = [("Access-Control-Allow-Origin", "*"), ("Cache-Control", "public, max-age=2")]
    headers = answer_headers(request_id(), *transport)
    assert found(watch, exchange("GET", "/tickers", body=[ticker], headers=headers)) == {}
    broken = exchange("GET", "/tickers", body=[ticker | change], headers=headers)
    assert found(watch, broken) == {rule: "service"}
    assert said in out.getvalue()
    # A side nobody quotes reads 0, which is below any bid: not a crossing.
    one_sided = exchange("GET", "/tickers", body=[ticker | {"ask": "0"}], headers=headers)
    assert found(watch, one_sided) == {}


def test_a_ramp_transfer_never_moves_backwards() -> None:
    watch, _, _ = watcher()

    def read(status: str) -> dict[str, str]:
        transfer = {
            "id": "rtr_1",
            "providerTransferId": "p_1",
            "provider": "ngnramp",
            "sandbox": True,
            "side": "buy",
            "fiat": "NGN",
            "token": "NGNS",
            "chainId": 97,
            "sourceAmount": "1000.00",
            "targetAmount": "990.00",
            "rateLabel": "r",
            "feeLabel": "f",
            "status": status,
            "providerStatus": status.lower(),
            "retryOfId": None,
            "payIn": {},
            "payOut": {},
            "hasEmail": False,
            "timeline": [
                {"status": status, "providerStatus": status.lower(), "at": isoformat(NOW)}
            ],
            "expiresAt": isoformat(NOW + timedelta(minutes=30)),
            "createdAt": isoformat(NOW),
        }
        ex = exchange(
            "GET",
            "/v2/ramp/transfers/rtr_1",
            request_headers=[("X-Ramp-Claim", "rcl_x")],
            body={"transfer": transfer},
        )
        return found(watch, ex)

    assert read("AWAITING_FUNDS") == {}
    assert read("PROCESSING") == {}
    assert read("AWAITING_FUNDS") == {"ramp/states/transfer-status/rules": "service"}


def test_idempotency_key_replays_byte_for_byte() -> None:
    watch, _, _ = watcher()
    body = {"url": "https://hooks.example/a", "eventTypes": ["rfq.filled"]}
    endpoint = {
        "id": "whe_1",
        "url": body["url"],
        "eventTypes": ["rfq.filled"],
        "status": "active",
        "signingSecret": "whsec_" + "a" * 32,
    }

    def create(answer: dict[str, Any], request: dict[str, Any] = body) -> dict[str, str]:
        headers = [*keyed(), ("Idempotency-Key", "key-1")]
        return found(
            watch,
            exchange(
                "POST",
                "/v1/webhooks",
                status=201,
                request=request,
                request_headers=headers,
                body={"data": answer},
                headers=answer_headers(request_id(), *limited()),
            ),
        )

    assert create(endpoint) == {}
    assert create(endpoint) == {}
    assert create(endpoint | {"id": "whe_2"}) == {"v1/endpoints/every-post-creates-may": "service"}
    assert create(endpoint, {**body, "url": "https://hooks.example/b"}) == {
        "v1/endpoints/every-post-creates-may": "client"
    }


def test_webhook_secrets_are_never_listed_and_urls_are_https() -> None:
    watch, _, _ = watcher()
    listed = [
        {
            "id": "whe_1",
            "url": "https://x",
            "eventTypes": ["rfq.filled"],
            "status": "active",
            "signingSecret": "whsec_" + "0" * 32,
        }
    ]
    ex = exchange(
        "GET",
        "/v1/webhooks",
        request_headers=keyed(),
        body={"data": listed},
        headers=answer_headers(request_id(), *limited()),
    )
    assert found(watch, ex) == {"rfq/endpoints/get-v1-webhooks": "service"}
    headers, answer = error(400, "invalid_request")
    plain = exchange(
        "POST",
        "/v1/webhooks",
        status=400,
        request={"url": "http://x", "eventTypes": ["rfq.filled"]},
        request_headers=keyed(),
        body=answer,
        headers=[*headers, *limited()],
    )
    assert found(watch, plain) == {"rfq/events/endpoint-urls-must-https": "client"}


def test_findings_say_field_expected_and_got_in_json_never_python() -> None:
    """The two findings a new user met as `taker None is not a string` and `eventTypes None is
    not an array`, and a check that could not read its member (a KeyError inside)."""
    watch, _, out = watcher()
    headers, answer = error(400, "invalid_request")
    for path, request in (
        ("/v2/rfq/request", firm_request(taker=None)),
        ("/v1/webhooks", {"url": "https://hooks.example/a", "eventTypes": None}),
    ):
        ex = exchange(
            "POST",
            path,
            status=400,
            request=request,
            request_headers=keyed(),
            body=answer,
            headers=[*headers, *limited()],
        )
        watch.inspect(ex)
    said = out.getvalue()
    assert "taker: expected a string, got null" in said, said
    assert "eventTypes: expected an array of event types, got null" in said, said
    assert "None" not in said
    assert "Error" not in said  # no Python exception names


def test_a_check_that_cannot_read_a_member_says_which_is_missing() -> None:
    from rfqsim.proxy.findings import Inspection

    inspection = Inspection(exchange("GET", "/v2/health"))
    inspection.check("rule-a", lambda: {"a": 1}["taker"])
    inspection.check("rule-b", lambda: None.upper())  # type: ignore[attr-defined]
    inspection.check("rule-c", lambda: int("zz", 16))
    inspection.check("rule-d", lambda: [][0])
    assert [f.message for f in inspection.found] == [
        "missing: taker",
        "a member holds another type of value than the spec gives it",
        "a value is not in the spec's format",
        "an array has fewer items than the rule reads",
    ]


def test_an_unknown_path_answered_400_and_simulator_paths_are_not_checked() -> None:
    watch, findings, _ = watcher()
    headers, body = error(400, "invalid_request")
    ex = exchange("GET", "/v2/nothing-here", status=400, body=body, headers=headers)
    assert found(watch, ex) == {"rfq/errors/404-not_found": "service"}
    sim = exchange("GET", "/_sim/info", body={"anything": 1}, headers=[])
    assert found(watch, sim) == {}
    assert findings.exchanges == 2


def test_a_ladder_served_stale_or_one_way_is_found() -> None:
    watch, _, _ = watcher()
    stale = ladder() | {"asOf": isoformat(NOW - timedelta(seconds=10))}
    assert found(watch, exchange("GET", "/v2/rfq/levels?chainId=97", body={"data": stale})) == {
        "rfq/resources/price-ladder/ladder-cached-about-2": "service"
    }
    one_way = ladder()
    one_way["pairs"] = one_way["pairs"][:1]
    assert found(watch, exchange("GET", "/v2/rfq/levels?chainId=97", body={"data": one_way})) == {
        "rfq/resources/price-ladder/every-pair-chain-appears": "service"
    }
    reversed_points = ladder()
    reversed_points["pairs"][0]["levels"].reverse()
    assert found(
        watch, exchange("GET", "/v2/rfq/levels?chainId=97", body={"data": reversed_points})
    ) == {"rfq/resources/price-ladder/up-nine-indicative-points": "service"}


def test_the_answer_is_read_once_from_its_bytes() -> None:
    watch, _, _ = watcher()
    raw = json.dumps({"data": {"status": "ok", "time": isoformat(NOW)}}).encode()
    ex = exchange("GET", "/v2/health", raw=raw)
    assert found(watch, ex) == {}
    local = json.dumps({"data": {"status": "ok", "time": "2026-01-01T12:00:00+02:00"}}).encode()
    assert found(watch, exchange("GET", "/v2/health", raw=local)) == {
        "rfq/overview/conventions/timestamps-iso-8601-utc-except": "service"
    }


def test_a_v1_swap_whose_unsigned_transaction_sends_value_is_found() -> None:
    watch, _, _ = watcher()

    def created(value: str) -> dict[str, str]:
        tx = {"to": "0x" + "11" * 20, "data": "0x095ea7b3", "chainId": 97}
        swap = {
            "id": "swp_1",
            "status": "QUOTED",
            "transactions": {"approval": tx | {"value": "0"}, "swap": tx | {"value": value}},
        }
        return found(
            watch,
            exchange(
                "POST",
                "/v1/swaps",
                status=201,
                request={
                    "chainId": 97,
                    "sellToken": "0x" + "22" * 20,
                    "buyToken": "0x" + "33" * 20,
                    "sellAmount": "1000000",
                    "taker": "0x" + "44" * 20,
                },
                request_headers=keyed(),
                body={"data": swap},
                headers=answer_headers(request_id(), *limited()),
            ),
        )

    assert created("0") == {}
    assert created("1") == {"v1/resources/unsigned-transaction/address-data-hex-value": "service"}
