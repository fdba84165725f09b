"""POST /v2/rfq/request refused before any maker is asked (spec 1-rfq-v2 "Request body",
"Errors"): each malformed body is 400 ``invalid_request`` with its reason or the field its issues
name (both amounts or neither, one token twice, unknown tokens and chains, no corridor, a
book-mode corridor, no taker, amounts that are not base-10 atomic strings), and the preview
refuses the same bodies the same way; a size below the corridor's minimum is 400
``below_minimum`` naming the side and the minimum. Every test uses a key of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account

from conformance.calls.rfq_calls import keyed_client, rfq_body
from conformance.deployment.key_source import KeySource
from conformance.deployment.target import Target
from conformance.deployment.venue import Venue, VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error, assert_issues


def _case_body(chain: VenueChain, case: str, taker: str) -> tuple[dict[str, Any], str, str | None]:
    """(body, details.reason, field named in details.issues) of a request that must be 400."""
    ngns = chain.token("NGNS")
    one = chain.token("USDT").units(1)
    unavailable, book = "corridor_unavailable", "corridor_book_mode"

    def body(sell: str, buy: str, **amounts: Any) -> dict[str, Any]:
        return rfq_body(chain, sell, buy, taker=taker, **amounts)

    if case == "both_amounts":
        both = body("USDT", "NGNS", sell_amount=one, buy_amount=ngns.units(1))
        return both, "exactly_one_amount", None
    if case == "neither_amount":
        return body("USDT", "NGNS"), "exactly_one_amount", None
    if case == "same_token":
        return body("USDT", "USDT", sell_amount=one), unavailable, None
    if case == "unknown_token":
        return (
            {**body("USDT", "NGNS", sell_amount=one), "buyToken": Account.create().address},
            (unavailable),
            None,
        )
    if case == "not_a_corridor":  # WBNB/NGNS: both tokens exist, no corridor joins them
        return body("WBNB", "NGNS", sell_amount=one), unavailable, None
    if case == "unknown_chain":
        return {**body("USDT", "NGNS", sell_amount=one), "chainId": 4242}, unavailable, None
    if case == "book_mode":
        return body("USDC", "NGNS", sell_amount=chain.token("USDC").units(1)), book, None
    if case == "book_mode_reverse":
        return body("NGNS", "USDC", sell_amount=ngns.units(1000)), book, None
    if case.startswith("amount_"):  # amounts are base-10 strings of atomic units
        raw: Any = {
            "amount_decimal": "1.5",
            "amount_negative": "-1",
            "amount_hex": "0x10",
            "amount_number": one,
            "amount_exponent": "1e18",
        }[case]
        return {**body("USDT", "NGNS", sell_amount=one), "sellAmount": raw}, "", "sellAmount"
    if case == "missing_taker":
        missing = body("USDT", "NGNS", sell_amount=one)
        missing.pop("taker")
        return missing, "", "taker"
    raise AssertionError(case)


@pytest.mark.spec(
    "rfq/errors/400-invalid_request",
    "rfq/errors/envelope",
    "rfq/errors/details-optional-either-issues",
    "rfq/errors/request_id-equals-x-request-id-header",
    "rfq/errors/429-502-503-transient",
    "rfq/endpoints/request-body/sending-both-neither-sellamount",
    "rfq/endpoints/request-body/selltoken-buytoken",
    "rfq/endpoints/request-body/taker",
    "rfq/endpoints/request-body/chainid",
    "rfq/overview/conventions/amounts-base-10-strings-atomic",
)
@pytest.mark.parametrize(
    "case",
    [
        "both_amounts",
        "neither_amount",
        "same_token",
        "unknown_token",
        "not_a_corridor",
        "unknown_chain",
        "book_mode",
        "book_mode_reverse",
        "missing_taker",
        "amount_decimal",
        "amount_negative",
        "amount_hex",
        "amount_number",
        "amount_exponent",
    ],
)
def test_invalid_requests_are_400(trader: Client, chain: VenueChain, case: str) -> None:
    body, reason, field_name = _case_body(chain, case, Account.create().address)
    resp = trader.post("/v2/rfq/request", json=body)
    error = assert_error(resp, 400, "invalid_request", reason or None)
    if field_name is not None:
        assert_issues(error, field_name)
    if case != "missing_taker" and not case.startswith("amount_"):
        # Preview validates the same way (its body is the request's minus taker).
        body.pop("taker")
        assert_error(trader.post("/v2/rfq/preview", json=body), 400, "invalid_request", reason)


@pytest.mark.spec(
    "rfq/endpoints/request-body/below-minimum-size-400",
    "rfq/endpoints/request-body/sellamount",
    "rfq/endpoints/request-body/buyamount",
    "rfq/errors/400-invalid_request",
)
@pytest.mark.parametrize(
    ("chain_id", "sell", "buy", "side", "minimum_whole"),
    [
        (97, "USDT", "NGNS", "sellAmount", "0.01"),
        (97, "USDT", "NGNS", "buyAmount", "0.01"),
        (97, "WBNB", "USDT", "sellAmount", "0.01"),
        (56, "USDT", "NGNS", "sellAmount", "1"),
        (56, "USDT", "USDC", "buyAmount", "1"),
    ],
)
def test_below_minimum_is_400_with_the_minimum(
    target: Target,
    http: Client,
    venue: Venue,
    chain_id: int,
    sell: str,
    buy: str,
    side: str,
    minimum_whole: str,
) -> None:
    chain = venue.chain(chain_id)
    source = KeySource(target, "validation")
    client = keyed_client(http, source.make(chain.environment))
    named = chain.token(sell if side == "sellAmount" else buy)
    minimum = named.units(minimum_whole)
    if side == "sellAmount":
        body = rfq_body(chain, sell, buy, sell_amount=minimum - 1)
    else:
        body = rfq_body(chain, sell, buy, buy_amount=minimum - 1)
    body["taker"] = Account.create().address
    error = assert_error(
        client.post("/v2/rfq/request", json=body), 400, "invalid_request", "below_minimum"
    )
    details = error["details"]
    assert details["field"] == side, details
    # A whole-token minimum on 6/18-decimal tokens is above the smallest feeable size.
    assert details["minimum"] == str(minimum), details
