"""Transient failures of POST /v2/rfq/request (spec 1-rfq-v2 "Errors"): a paused venue is
503 ``venue_unavailable`` and an unreachable chain 502 ``upstream_error`` (never
``insufficient_funds``, whatever the taker holds), and the same request quotes once the fault is
cleared. Every test uses a key of its own; the fault switches are restored, pass or fail.
"""

from __future__ import annotations

import pytest
from eth_account import Account

from conformance.calls.control import Fleet, Janitor, faults
from conformance.calls.rfq_calls import expect_quoted, request_quote, rfq_body
from conformance.deployment.funding import fund_wallet
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error
from rfqkit.wallets import Wallet

CHAIN = 97


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "rfq/errors/503-venue_unavailable",
    "rfq/errors/429-502-503-transient",
)
def test_paused_venue_is_503_then_recovers(
    sim: SimControl, trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address)
    with faults(sim, venue_paused=True):
        assert_error(trader.post("/v2/rfq/request", json=body), 503, "venue_unavailable")
    # Transient: the same request succeeds once quotes are served again.
    kept.keep(trader, expect_quoted(request_quote(trader, body)))


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "rfq/errors/502-upstream_error",
    "rfq/endpoints/request-body/proof-of-funds",
    "rfq/errors/429-502-503-transient",
)
def test_unreachable_chain_is_502_never_insufficient_funds(
    sim: SimControl, trader: Client, chain: VenueChain, source: Wallet, fleet: Fleet, kept: Janitor
) -> None:
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(5)}, native=0)
    exact_in = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=taker.address)
    exact_out = rfq_body(chain, "USDT", "NGNS", buy_amount=ngns.units(1_000), taker=taker.address)
    broke = Account.create().address  # holds nothing: still 502, never insufficient_funds
    unfunded = rfq_body(chain, "USDT", "NGNS", sell_amount=usdt.units(1), taker=broke)
    with faults(sim, chain_unreachable=[CHAIN]):
        for body in (exact_in, exact_out, unfunded):
            assert_error(trader.post("/v2/rfq/request", json=body), 502, "upstream_error")
    kept.keep(trader, expect_quoted(request_quote(trader, exact_in)))
