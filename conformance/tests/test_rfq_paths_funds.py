"""Proof of funds on POST /v2/rfq/request (spec 1-rfq-v2 "Request body"): an exact-input
request the taker cannot pay is 400 ``insufficient_funds`` before any maker is woken (and passes
at the balance exactly), the taker's other live quotes count as committed until their
reservation ends (also after a cancel), and an exact-output request is checked after the makers
priced it, their reserved inventory then released. Every test uses a key of its own, and every
test that reconfigures the simulated makers restores them, pass or fail.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.calls.control import FAST, Fleet, Janitor, Liquidity
from conformance.calls.rfq_calls import expect_quoted, request_quote, rfq_body
from conformance.checks.assertions import atomic, iso_seconds
from conformance.deployment.funding import fund_wallet
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import wait_for
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error
from rfqkit.wallets import Wallet

# Within this much of a quote's expiry (by the service clock) a cancel may meet it live or
# lapsed: either answer is right.
LAPSE_MARGIN_S = 2.0


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/errors/400-invalid_request",
)
def test_insufficient_funds_exact_input_is_checked_before_makers(
    trader: Client, chain: VenueChain, source: Wallet, liquidity: Liquidity, kept: Janitor
) -> None:
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    fleet = liquidity.fleet  # which makers were asked: known on a simulator only
    asked_before = fleet.rfqs_seen() if fleet else None
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(10), taker=taker.address)
    error = assert_error(
        trader.post("/v2/rfq/request", json=body), 400, "invalid_request", "insufficient_funds"
    )
    details = error["details"]
    assert details["required"] == str(usdt.units(10)), details
    assert details["available"] == str(usdt.units(5)), details
    assert "committed" not in details, "no other live quote caused the shortfall"
    if fleet is not None:
        assert fleet.rfqs_seen() == asked_before, "no maker may be woken for an unfunded taker"
    # At the balance exactly, it passes.
    equal = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(5), taker=taker.address)
    kept.keep(trader, expect_quoted(request_quote(trader, equal)))


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/endpoints/cancel-submit-status/cancel-releases-rfqs-claim",
    "rfq/errors/400-invalid_request",
)
def test_insufficient_funds_counts_the_takers_other_live_quotes(
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
    kept: Janitor,
    clock: ServiceClock,
) -> None:
    usdt = chain.token("USDT")
    balance = usdt.units(15)
    taker = fund_wallet(chain, source, {usdt.address: balance}, native=0)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(10), taker=taker.address)
    first = expect_quoted(request_quote(trader, body))
    committed = int(first["quote"]["takerPays"])

    def shortfall(size: int) -> dict[str, Any]:
        sized = {**body, "sellAmount": str(size)}
        error = assert_error(
            trader.post("/v2/rfq/request", json=sized), 400, "invalid_request", "insufficient_funds"
        )
        details: dict[str, Any] = error["details"]
        assert details["required"] == str(size), details
        assert details["available"] == str(balance), "available is the raw balance"
        assert details.get("committed") == str(committed), details
        return details

    shortfall(usdt.units(10))
    shortfall(balance - committed + 1)  # one atomic unit over balance - committed
    # Cancel gives the quote back but its reservation runs to latestOrderDeadline (+ skew).
    # Against a shared deployment a limiter's wait can outlast the quote: then the spec's
    # answer to a cancel is 409, and the reservation still runs to the order deadline.
    now_s, expires_s = clock.now_ms() / 1000, iso_seconds(first["quote"]["expiresAt"])
    resp = trader.post(f"/v2/rfq/{first['rfqId']}/cancel")
    if now_s >= expires_s:
        assert_error(resp, 409, "conflict")
    elif now_s < expires_s - LAPSE_MARGIN_S or resp.status != 409:
        cancelled = assert_data(resp)
        assert cancelled == {"rfqId": first["rfqId"], "status": "released"}, cancelled
    shortfall(balance - committed + 1)
    # Exactly what is left passes: balance >= committed + required.
    left = rfq_body(chain, "USDT", "NGNS", sell_amount=balance - committed, taker=taker.address)
    kept.keep(trader, expect_quoted(request_quote(trader, left)))


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/endpoints/request-body/buyamount",
    "rfq/errors/400-invalid_request",
)
def test_insufficient_funds_exact_output_is_checked_after_pricing(
    trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(1)}, native=0)
    fleet.only({"alpha": FAST, "bravo": FAST})
    asked_before = fleet.rfqs_seen()
    live_before = fleet.live_quotes()
    body = rfq_body(chain, "USDT", "NGNS", buy_amount=ngns.units(20_000), taker=taker.address)
    error = assert_error(
        trader.post("/v2/rfq/request", json=body), 400, "invalid_request", "insufficient_funds"
    )
    details = error["details"]
    assert details["available"] == str(usdt.units(1)), details
    required = atomic(details["required"], "required")
    # 20,000 NGNS at about 1,600 NGNS per USDT: the priced takerPays, about 12.5 USDT.
    assert usdt.units(12) < required < usdt.units(13), details
    assert "committed" not in details, details
    asked_after = fleet.rfqs_seen()
    assert asked_after["alpha"] > asked_before["alpha"], "exact output is priced by makers first"

    # ... and their reserved inventory is released: no maker keeps a live quote for it.
    def released() -> bool | None:
        live = fleet.live_quotes()
        return True if all(live[n] <= live_before[n] for n in ("alpha", "bravo")) else None

    wait_for(released, what="the makers' quotes to be released")
