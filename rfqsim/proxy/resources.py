"""The service's answers checked as the spec's resources, operation by operation: a firm quote
against the request's own terms (the suite's ``assert_quote_*``), a no-quote, a preview, the RFQ
record and its secrets, cancel and submit answers, the ladder, webhook endpoints, the feed's
bodies, the ramp's providers and transfers, v1 statuses, and the v2 description. The checks are
the conformance suite's; each runs under the rule id of the spec line it checks.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from conformance.calls import feed
from conformance.calls.ramp import assert_providers
from conformance.calls.ramp_transfers import check_transfer
from conformance.checks.assertions import (
    QuoteTerms,
    assert_quote_amounts,
    assert_quote_approval,
    assert_quote_claim_token,
    assert_quote_deadlines,
    assert_quote_expiry,
    assert_quote_fields,
    assert_quote_meets_request,
    assert_quote_orders,
    assert_quote_rate,
    assert_quote_swap,
    assert_quote_totals,
    assert_quote_transactions,
    iso_seconds,
)
from conformance.checks.resource_checks import (
    RFQ_STATUSES,
    assert_created_endpoint,
    assert_ladder_depth,
    assert_ladder_directions,
    assert_ladder_fields,
    assert_ladder_points,
    assert_listed_endpoint,
    assert_no_quote,
    assert_no_quote_reason,
    assert_preview,
    assert_record_fields,
    assert_record_reply_by,
    assert_record_secrets,
    assert_record_settled_times,
    assert_record_status,
    assert_reserved_consistent,
    assert_swap_transactions_send_no_value,
)
from conformance.wire.json_walk import fields
from conformance.wire.openapi_checks import (
    error_responses_without_envelope,
    operations_without_error_response,
)
from conformance.wire.wording import shown
from contracts.orders import RfqOrder
from rfqsim.proxy import spec
from rfqsim.proxy.expect import expect_all_in, expect_equal, expect_in, expect_true
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.spec import SpecOperation

# Spec 3: limit order and swap statuses.
LIMIT_ORDER_STATUSES = frozenset({"ACTIVE", "FILLED", "CANCELLED", "EXPIRED", "SUPERSEDED"})
SWAP_STATUSES = frozenset({"QUOTED", "SUBMITTED", "FILLED", "EXPIRED", "CANCELLED"})
LADDER_STALE_S = 2.0 + 0.25 + 1.0  # "cached about 2 s" + the suite's tolerance + Date's second
TX_HASH_LENGTH = 66
QUOTE_TTL_S = 60.001  # spec 1 "Limits": 60 s cap; the suite's --ttl-tolerance-ms default, 1
# Rule ids, by what they check.
FIRM = {
    "fields": "rfq/resources/firm-quote/quote",
    "claim": "rfq/resources/firm-quote/claimtoken",
    "amounts": "rfq/overview/conventions/amounts-base-10-strings-atomic",
    "orders": "rfq/resources/firm-quote/quote-fields/orders",
    "totals": "rfq/resources/firm-quote/quote-fields/takerpays",
    "request": "rfq/resources/firm-quote/quote-fields/takerpays",
    "rate": "rfq/resources/firm-quote/quote-fields/rateray",
    "deadlines": "rfq/resources/firm-quote/quote-fields/orderdeadline",
    "expiry": "rfq/resources/firm-quote/quote-fields/expiresat",
    "transactions": "rfq/resources/firm-quote/unsigned-transaction-shape",
    "approval": "rfq/resources/firm-quote/transactions-approval-approves-takerpays-sell",
    "swap": "rfq/resources/firm-quote/transactions-swap-only-transaction-broadcast",
}
REQUEST_ANSWER = "rfq/endpoints/post-v2-rfq-request"
NO_QUOTE = "rfq/resources/no-quote/fields"
RESERVED = "rfq/resources/no-quote/reserveduntil-retryafterms-appear-only"
PREVIEW = "rfq/resources/preview/fields"
RECORD = "rfq/endpoints/get-v2-rfq-id"
RECORD_STATUS = "rfq/resources/rfq-record/status"
RECORD_ID = "rfq/resources/rfq-record/rfqid"
RECORD_TX_HASH = "rfq/resources/rfq-record/txhash"
RECORD_REPLY_BY = "rfq/resources/rfq-record/replyby"
RECORD_SETTLED_TIMES = "rfq/resources/rfq-record/submittedat-filledat"
RECORD_SECRETS = "rfq/resources/rfq-record/signed-order-signature-claim"
QUOTE_TTL = "rfq/limits/quote-ttl"
SUBMIT_ANSWER = "rfq/endpoints/post-v2-rfq-id-submit"
CANCEL_ANSWER = "rfq/states/cancel-response-reports-status"
LADDER = {
    "fields": "rfq/resources/price-ladder/fields",
    "directions": "rfq/resources/price-ladder/every-pair-chain-appears",
    "points": "rfq/resources/price-ladder/up-nine-indicative-points",
    "depth": "rfq/resources/price-ladder/pair-no-quotable-depth",
    "cache": "rfq/resources/price-ladder/ladder-cached-about-2",
}
WEBHOOK_CREATED = "rfq/resources/webhook-endpoint/fields"
WEBHOOK_REQUEST = "rfq/endpoints/post-v1-webhooks"
WEBHOOKS_LISTED = "rfq/endpoints/get-v1-webhooks"
FEED_TRANSPORT = "v1/limits/rates-feed"
FEED_ERRORS = "v1/errors/rates-feed-errors/body-error-string-400"
PROVIDERS = "ramp/endpoints/get-v2-ramp-providers"
TRANSFER_READ = "ramp/endpoints/reading/get-x-ramp-claim-returns-full"
TRANSFER_CREATED = "ramp/endpoints/post-v2-ramp-transfers"
TRANSFER_CLAIM = "ramp/resources/transfer/claim-token"
ORDER_BOOK_PAYLOADS = "v1/resources/order-book-semantics/get-v1-order-book-returns"
LIMIT_ORDER_STATUS = "v1/resources/limit-order-record/status"
SWAP_STATUS = "v1/states/swap-status/values"
SWAP_VALUE = "v1/resources/unsigned-transaction/address-data-hex-value"
DESCRIPTION = "rfq/endpoints/get-v2-openapi-json"
DESCRIPTION_VERSION = "rfq/versioning/item-4"
SIGNED_PAYLOADS = frozenset({"signature", "encodedOrder"})
# (chain, sell token, buy token) -> the tokens' decimals, as the ladder published them.
Decimals = Callable[[int, str, str], tuple[int, int] | None]
# What one ticker's own fields must agree on, each under its rule (conformance/calls/feed.py).
TICKER_RELATIONS = (
    ("v1/feed/get-tickers/bid-and-ask", feed.assert_ticker_sides),
    ("v1/feed/get-tickers/last_price-high-and-low", feed.assert_ticker_range),
)


def quote_terms(request: Any, decimals: tuple[int, int] | None) -> QuoteTerms | None:
    """The terms a firm request named, or None when the request itself was not readable
    (the client's checks report that)."""
    if not isinstance(request, Mapping):
        return None
    try:
        sell = request.get("sellAmount")
        buy = request.get("buyAmount")
        return QuoteTerms(
            chain_id=int(request["chainId"]),
            sell_token=str(request["sellToken"]),
            buy_token=str(request["buyToken"]),
            taker=str(request["taker"]),
            sell_amount=int(sell) if sell is not None else None,
            buy_amount=int(buy) if buy is not None else None,
            decimals=decimals,
        )
    except (KeyError, TypeError, ValueError):
        return None


def check_firm_quote(inspection: Inspection, data: Mapping[str, Any], terms: QuoteTerms) -> None:
    """The suite's assert_firm_quote, part by part (what needs no venue)."""
    run = inspection.check
    if not run(FIRM["fields"], lambda: assert_quote_fields(data)):
        return
    run(FIRM["claim"], lambda: assert_quote_claim_token(data))
    quote = data["quote"]
    if not run(FIRM["amounts"], lambda: assert_quote_amounts(quote)):
        return
    run(FIRM["expiry"], lambda: assert_quote_expiry(quote))
    run(FIRM["rate"], lambda: assert_quote_rate(quote, terms))
    run(FIRM["transactions"], lambda: assert_quote_transactions(data, terms))
    run(FIRM["approval"], lambda: assert_quote_approval(data, terms))
    orders: list[RfqOrder] = []
    if not run(FIRM["orders"], lambda: orders.extend(assert_quote_orders(quote, terms))):
        return
    run(FIRM["totals"], lambda: assert_quote_totals(quote, orders))
    run(FIRM["request"], lambda: assert_quote_meets_request(quote, orders, terms))
    run(FIRM["deadlines"], lambda: assert_quote_deadlines(quote, orders))
    run(FIRM["swap"], lambda: assert_quote_swap(data, orders))


def _request_answer(inspection: Inspection, decimals: Decimals) -> None:
    ex = inspection.exchange
    data = ex.data
    inspection.check(REQUEST_ANSWER, lambda: _status_200(ex.status, "a firm quote or no_quote"))
    if not isinstance(data, Mapping):
        return
    status = data.get("status")
    if not inspection.check(
        REQUEST_ANSWER, lambda: expect_in(status, frozenset({"quoted", "no_quote"}), "data.status")
    ):
        return
    if status == "no_quote":
        inspection.check(NO_QUOTE, lambda: assert_no_quote(data))
        inspection.check(NO_QUOTE, lambda: assert_no_quote_reason(data))
        inspection.check(RESERVED, lambda: assert_reserved_consistent(data))
        return
    request, _ = ex.request_json
    terms = quote_terms(request, None)
    if terms is not None:
        terms = quote_terms(request, decimals(terms.chain_id, terms.sell_token, terms.buy_token))
    if terms is not None:
        check_firm_quote(inspection, data, terms)


def _preview_answer(inspection: Inspection) -> None:
    data = inspection.exchange.data
    if not isinstance(data, Mapping):
        return
    if data.get("status") == "no_quote":
        inspection.check(NO_QUOTE, lambda: assert_no_quote_reason(data))
        inspection.check(RESERVED, lambda: assert_reserved_consistent(data))
    else:
        inspection.check(PREVIEW, lambda: assert_preview(data))


def _record(inspection: Inspection) -> None:
    ex = inspection.exchange
    record = ex.data
    if not isinstance(record, Mapping):
        return
    run = inspection.check
    run(RECORD, lambda: assert_record_fields(record))
    run(RECORD_STATUS, lambda: assert_record_status(record))
    run(RECORD_SECRETS, lambda: assert_record_secrets(record))
    run(RECORD_SECRETS, lambda: _absent(b"rfqc_", ex.response.raw, "a claim token"))
    run(RECORD_ID, lambda: expect_equal(record.get("rfqId"), ex.path.rsplit("/", 1)[-1], "rfqId"))
    run(RECORD_TX_HASH, lambda: _tx_hash(record.get("txHash")))
    if all(isinstance(record.get(n), str) for n in ("createdAt", "replyBy")):
        # The times against each other (each time's format is a rule of its own).
        run(RECORD_REPLY_BY, lambda: assert_record_reply_by(record))
        run(RECORD_SETTLED_TIMES, lambda: assert_record_settled_times(record))
    if record.get("expiresAt") is not None and record.get("createdAt") is not None:
        run(
            QUOTE_TTL,
            lambda: within_ttl(iso_seconds(record["expiresAt"]), iso_seconds(record["createdAt"])),
        )


def within_ttl(expires_at: float, created_at: float) -> None:
    """A firm quote lives at most the 60 s cap (plus the suite's 1 ms tolerance): Unix
    seconds of its expiresAt and of the RFQ's createdAt."""
    lives = expires_at - created_at
    assert 0 < lives <= QUOTE_TTL_S, f"the quote lives {lives:.3f} s (expiresAt - createdAt)"


def _ladder(inspection: Inspection, learn: Callable[[Mapping[str, Any]], None]) -> None:
    ex = inspection.exchange
    data = ex.data
    if not isinstance(data, Mapping):
        return
    run = inspection.check
    if not run(LADDER["fields"], lambda: assert_ladder_fields(data)):
        return
    chain = ex.query.get("chainId")
    if chain is not None and chain.isdigit():
        run(LADDER["fields"], lambda: expect_equal(data["chainId"], int(chain), "chainId"))
    run(LADDER["directions"], lambda: assert_ladder_directions(data))
    for pair in data["pairs"]:
        run(LADDER["points"], partial(assert_ladder_points, pair["levels"]))
        run(LADDER["depth"], partial(assert_ladder_depth, pair))
    served = ex.date
    if served is not None:
        run(LADDER["cache"], lambda: _fresh(data["asOf"], served))
    learn(data)


def _fresh(as_of: Any, served: float) -> None:
    age = served - iso_seconds(as_of)
    assert age <= LADDER_STALE_S, f"the ladder served at {served:.0f} is {age:.1f} s old"


def _webhooks(inspection: Inspection) -> None:
    ex = inspection.exchange
    data = ex.data
    if ex.method == "POST" and ex.status == 201 and isinstance(data, Mapping):
        inspection.check(WEBHOOK_CREATED, lambda: assert_created_endpoint(data))
        request, _ = ex.request_json
        if isinstance(request, Mapping):
            inspection.check(
                WEBHOOK_REQUEST,
                lambda: expect_equal(
                    data.get("eventTypes"), request.get("eventTypes"), "eventTypes"
                ),
            )
    elif ex.method == "GET" and ex.status == 200:
        inspection.check(WEBHOOKS_LISTED, lambda: _listed(data))
        inspection.check(WEBHOOKS_LISTED, lambda: _absent(b"whsec_", ex.response.raw, "a secret"))


def _listed(data: Any) -> None:
    assert isinstance(data, list), f"data: expected an array of endpoints, got {shown(data)}"
    for endpoint in data:
        assert_listed_endpoint(endpoint)


def _feed(inspection: Inspection, operation: SpecOperation | None) -> None:
    ex = inspection.exchange
    resp = ex.response
    if ex.status >= 400:
        inspection.check(FEED_ERRORS, lambda: feed.assert_feed_error_body(resp))
        return
    if ex.status != 200 or operation is None:
        return
    inspection.check(FEED_TRANSPORT, lambda: feed.assert_feed_transport(resp))
    body = resp.json()
    shape = {
        spec.FEED_PAIRS: feed.assert_pairs,
        spec.FEED_TICKERS: feed.assert_ticker_shapes,
        spec.FEED_TRADES: feed.assert_trades,
    }[operation]
    if not inspection.check(operation.rule, lambda: shape(body)):
        return
    if operation == spec.FEED_TICKERS:
        for ticker in body:  # each relation under its own rule
            for rule, relation in TICKER_RELATIONS:
                inspection.check(rule, partial(relation, ticker))


# A transfer's creation: its answer carries the transfer and its claim token, once.
TRANSFER_CREATES = frozenset({spec.RAMP_TRANSFER_CREATE, spec.RAMP_RETRY})
SWAP_ANSWERS = frozenset(
    {spec.V1_SWAP_CREATE, spec.V1_SWAP_LIST, spec.V1_SWAP_SUBMIT, spec.V1_SWAP_GET}
)


def _ramp(inspection: Inspection, operation: SpecOperation) -> None:
    ex = inspection.exchange
    body = ex.json
    if not isinstance(body, Mapping) or not 200 <= ex.status < 300:
        return
    if operation == spec.RAMP_PROVIDERS:
        inspection.check(PROVIDERS, lambda: assert_providers(body))
    elif operation in TRANSFER_CREATES:
        inspection.check(TRANSFER_CREATED, lambda: check_transfer(body.get("transfer")))
        inspection.check(TRANSFER_CLAIM, lambda: _string(body.get("claimToken"), "claimToken"))
    elif operation == spec.RAMP_TRANSFER_GET:
        if "X-Ramp-Claim" in ex.request_headers:
            inspection.check(TRANSFER_READ, lambda: check_transfer(body.get("transfer")))
        inspection.check(TRANSFER_CLAIM, lambda: _no_member(body, "claimToken"))


def _v1(inspection: Inspection, operation: SpecOperation) -> None:
    ex = inspection.exchange
    data = ex.data
    if not 200 <= ex.status < 300 or data is None:
        return
    if operation == spec.V1_ORDER_BOOK:
        inspection.check(ORDER_BOOK_PAYLOADS, lambda: _no_member(data, *SIGNED_PAYLOADS))
    elif operation in (spec.V1_LIMIT_LIST, spec.V1_LIMIT_GET):
        statuses = [v for _, v in fields(data, frozenset({"status"}))]
        inspection.check(
            LIMIT_ORDER_STATUS, lambda: expect_all_in(statuses, LIMIT_ORDER_STATUSES, "status")
        )
    elif operation in SWAP_ANSWERS and isinstance(data, Mapping):
        swaps = data.get("swaps") if operation == spec.V1_SWAP_LIST else [data]
        found = [s.get("status") for s in swaps or [] if isinstance(s, Mapping)]
        statuses = [s for s in found if s is not None]
        inspection.check(SWAP_STATUS, lambda: expect_all_in(statuses, SWAP_STATUSES, "status"))
        inspection.check(SWAP_VALUE, lambda: assert_swap_transactions_send_no_value(data))


def _description(inspection: Inspection) -> None:
    doc = inspection.exchange.json
    if inspection.exchange.status != 200 or not isinstance(doc, Mapping):
        return
    inspection.check(
        DESCRIPTION_VERSION,
        lambda: expect_true(str(doc.get("openapi", "")).startswith("3.1."), "openapi 3.1.x"),
    )
    inspection.check(
        DESCRIPTION,
        lambda: _none(
            operations_without_error_response(doc), "operations without any 4xx/5xx response"
        ),
    )
    inspection.check(
        DESCRIPTION,
        lambda: _none(
            error_responses_without_envelope(doc),
            "error responses not described with the error envelope",
        ),
    )


def check(
    inspection: Inspection,
    operation: SpecOperation,
    decimals: Decimals,
    learn_ladder: Callable[[Mapping[str, Any]], None],
) -> None:
    """The resource checks of one exchange whose operation the spec names."""
    ex = inspection.exchange
    if not ex.readable:
        return
    if operation.surface == "feed":
        _feed(inspection, operation)
        return
    if not ex.response.is_json:
        return
    if operation.surface == "ramp":
        _ramp(inspection, operation)
    elif operation.surface == "v1":
        _v1(inspection, operation)
    elif operation in RFQ_ANSWERS:
        if 200 <= ex.status < 300:
            RFQ_ANSWERS[operation](inspection, _Learned(decimals, learn_ladder))
    elif operation in (spec.WEBHOOK_CREATE, spec.WEBHOOK_LIST, spec.WEBHOOK_DELETE):
        _webhooks(inspection)
    elif operation == spec.V2_DOCUMENT:
        _description(inspection)


@dataclass(frozen=True)
class _Learned:
    """What the proxy has learnt so far that an answer's check may need or add to."""

    decimals: Decimals
    learn_ladder: Callable[[Mapping[str, Any]], None]


def _submit_answer(inspection: Inspection, learned: _Learned) -> None:
    data = inspection.exchange.data
    inspection.check(SUBMIT_ANSWER, lambda: expect_in(_status(data), RFQ_STATUSES, "data.status"))


def _cancel_answer(inspection: Inspection, learned: _Learned) -> None:
    data = inspection.exchange.data
    rfq_id = inspection.exchange.path.split("/")[3]
    inspection.check(CANCEL_ANSWER, lambda: _released(data, rfq_id))


# The RFQ API's successful answers checked, by operation.
RFQ_ANSWERS: dict[SpecOperation, Callable[[Inspection, _Learned], None]] = {
    spec.RFQ_REQUEST: lambda inspection, learned: _request_answer(inspection, learned.decimals),
    spec.RFQ_PREVIEW: lambda inspection, learned: _preview_answer(inspection),
    spec.RFQ_GET: lambda inspection, learned: _record(inspection),
    spec.RFQ_SUBMIT: _submit_answer,
    spec.RFQ_CANCEL: _cancel_answer,
    spec.RFQ_LEVELS: lambda inspection, learned: _ladder(inspection, learned.learn_ladder),
}


# -- small assertions ----------------------------------------------------------------------


def _status_200(status: int, what: str) -> None:
    assert status == 200, f"{what} is HTTP 200, not {status}"


def _status(data: Any) -> Any:
    return data.get("status") if isinstance(data, Mapping) else None


def _released(data: Any, rfq_id: str) -> None:
    assert isinstance(data, Mapping), data
    assert data.get("status") == "released", (
        f'status: expected "released", got {shown(data.get("status"))}'
    )
    assert data.get("rfqId") == rfq_id, (
        f"rfqId: expected {shown(rfq_id)}, got {shown(data.get('rfqId'))}"
    )


def _tx_hash(value: Any) -> None:
    if value is None:
        return
    said = f"txHash: expected 0x and 64 hex digits, got {shown(value)}"
    assert isinstance(value, str), said
    assert len(value) == TX_HASH_LENGTH, said
    assert value.startswith("0x"), said
    assert all(c in string.hexdigits for c in value[2:]), said


def _absent(needle: bytes, raw: bytes, what: str) -> None:
    assert needle not in raw, f"the answer carries {what} ({needle.decode()}…)"


def _no_member(body: Any, *names: str) -> None:
    present = sorted({name for name, _ in fields(body, frozenset(names))})
    assert not present, f"the answer carries {present}"


def _string(value: Any, what: str) -> None:
    assert isinstance(value, str), f"{what}: expected a string, got {shown(value)}"
    assert value, f"empty {what}"


def _none(problems: list[str], what: str) -> None:
    assert not problems, f"{what}: {problems}"
