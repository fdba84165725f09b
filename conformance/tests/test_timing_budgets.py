"""Timing budgets (spec 1-rfq-v2 "Timing defaults" and "Limits"), measured by the client with the
tolerances given as options (``--budget-tolerance-ms`` and friends, docs/conformance.md):

* the record's replyBy is the reply budget after createdAt (any deployment);
* the reply budget holds when a maker is slower than it, and the slow maker is left out;
* preferred makers get their head start before the rest are asked, unless they cover the size;
* a served price ladder is never older than its 2 s cache;
* a firm quote never lives longer than the 60 s quote TTL.

The proof clock window (60 s either side) and the 12 h grant are in test_auth_proofs_eoa.py, judged
with ``--clock-window-tolerance-ms`` and ``--grant-tolerance-s``.

Which maker the service asked, and when, is seen from the makers' side: the test connects maker
bots of its own to the maker stream (conformance/deployment/maker_probe.py) and records when each
firm request reached them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from eth_account import Account

from conformance.calls.control import FAST, Fleet, Janitor, Liquidity
from conformance.calls.rfq_calls import (
    eoa_proof,
    expect_no_quote,
    keyless_client,
    request_quote,
    rfq_body,
    service_now_ms,
)
from conformance.checks.assertions import assert_firm_quote, iso_seconds
from conformance.deployment.funding import fund_wallet
from conformance.deployment.maker_probe import MakerProbe, new_maker_key, stream_url
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, parse_iso_utc
from conformance.wire.timing import TimingTolerances
from rfqkit.wallets import Wallet

CHAIN = 97
# Spec 1-rfq-v2 "Timing defaults" and "Limits".
REPLY_BUDGET_MS = 750
PREFERRED_WAIT_MS = 250
QUOTE_TTL_MS = 60_000
LADDER_CACHE_MS = 2_000
SLOW_MS = 2_000  # a maker this slow cannot answer within the reply budget


def _corridor(target: Target, chain: VenueChain, base: str, quote: str) -> dict[str, Any]:
    """The corridor's timing settings from /_sim/info (the spec's defaults must be in force)."""
    pair = {chain.token(base).address.lower(), chain.token(quote).address.lower()}
    for corridor in target.chain(chain.chain_id).get("corridors") or []:
        if {str(corridor["base"]).lower(), str(corridor["quote"]).lower()} == pair:
            return dict(corridor)
    raise AssertionError(f"no {base}/{quote} corridor on chain {chain.chain_id}")


@pytest.fixture
def defaults(target: Target, chain: VenueChain) -> dict[str, Any]:
    corridor = _corridor(target, chain, "USDT", "NGNS")
    assert corridor["reply_budget_ms"] == REPLY_BUDGET_MS, corridor
    assert corridor["preferred_wait_ms"] == PREFERRED_WAIT_MS, corridor
    assert corridor["quote_ttl_s"] * 1000 == QUOTE_TTL_MS, corridor
    return corridor


@pytest.fixture
def probes(sim: SimControl, target: Target) -> Iterator[tuple[MakerProbe, MakerProbe]]:
    """Two maker bots of the test's own on the test environment: (silent, declining)."""
    (silent_key, _), (declining_key, _) = new_maker_key(sim), new_maker_key(sim)
    url = stream_url(target.base_url)
    with (
        MakerProbe(url, silent_key, reply="silent") as silent,
        MakerProbe(url, declining_key, reply="decline") as declining,
    ):
        yield silent, declining


def _wallet(probe: MakerProbe) -> str:
    assert probe.welcome is not None
    return str(probe.welcome["wallet"])


# -- reply budget ---------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/overview/timing-defaults/reply-budget",
    "rfq/limits/reply-budget",
    "rfq/resources/rfq-record/replyby",
)
def test_the_record_ends_the_reply_budget_after_it_was_created(
    caller: Client, chain: VenueChain, clock: ServiceClock, tolerances: TimingTolerances
) -> None:
    # What any client sees of the reply budget: the record's replyBy ("end of the maker reply
    # budget") is the corridor's budget after createdAt: the spec's default 750 ms, or what
    # --reply-budget-ms says the deployment set for the test corridor. Restricted to a wallet
    # that is no maker and exact output (funds are checked after pricing), so it holds nothing
    # and needs no funded taker. Keyless, with a proof of a wallet of its own, from a client IP
    # no other test uses (on loopback): the outstanding-RFQ cap of a key shared with other
    # tests, which they may hold for a quote's whole life, cannot refuse it.
    taker = Wallet.create()
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        buy_amount=chain.token("NGNS").units(2),
        taker=taker.address,
        restrictedLiquidityWallets=[Account.create().address],
        proof=eoa_proof(clock, taker, chain.chain_id),
    )
    data = expect_no_quote(request_quote(caller, body), "no_restricted_liquidity")
    record = assert_data(
        caller.get(f"/v2/rfq/{data['rfqId']}", headers={"X-Rfq-Claim": data["claimToken"]})
    )
    budget_ms = (iso_seconds(record["replyBy"]) - iso_seconds(record["createdAt"])) * 1000
    assert abs(budget_ms - tolerances.reply_budget_ms) <= 1, record  # millisecond timestamps


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/overview/timing-defaults/reply-budget",
    "rfq/limits/reply-budget",
    "rfq/endpoints/request-body/behaviour-1",
    "rfq/overview/call-sequence/post-v2-rfq-request",
    "rfq/resources/rfq-record/replyby",
    "rfq/states/soliciting-maker-replies-within-reply-budget-to-quoted",
)
def test_reply_budget_holds_and_a_slow_maker_is_left_out(
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    fleet: Fleet,
    kept: Janitor,
    defaults: dict[str, Any],
    tolerances: TimingTolerances,
) -> None:
    slow = {"behaviour": "normal", "latency": {"kind": "fixed", "ms": SLOW_MS}}
    fleet.only({"alpha": FAST, "bravo": slow})
    alpha, bravo = fleet.wallet("alpha"), fleet.wallet("bravo")
    usdt = chain.token("USDT")
    size = usdt.units(1)
    rounds = 3
    taker = fund_wallet(chain, source, {usdt.address: rounds * size}, native=0)
    body = rfq_body(chain, "USDT", "NGNS", sell_amount=size, taker=taker.address)
    limit_s = (REPLY_BUDGET_MS + tolerances.budget_ms) / 1000
    elapsed: list[float] = []
    for _ in range(rounds):
        asked_before = fleet.rfqs_seen()
        started = time.monotonic()
        resp = trader.post("/v2/rfq/request", json=body, timeout=75)
        elapsed.append(time.monotonic() - started)
        data = kept.keep(trader, assert_data(resp))
        # The answer did not wait for the slow maker (SLOW_MS) ...
        assert elapsed[-1] < SLOW_MS / 1000, f"answered after {elapsed[-1] * 1000:.1f} ms"
        # ... though it asked it: both makers were asked.
        asked = fleet.rfqs_seen()
        assert asked["alpha"] == asked_before["alpha"] + 1, (asked_before, asked)
        assert asked["bravo"] == asked_before["bravo"] + 1, (asked_before, asked)
        checked = assert_firm_quote(
            chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=size
        )
        assert checked.makers == [alpha], f"the slow maker {bravo} must not be in the quote"
        assert data["routing"]["openMarketQuotesReceived"] == 1, data["routing"]
        record = assert_data(
            trader.get(f"/v2/rfq/{data['rfqId']}", headers={"X-Rfq-Claim": data["claimToken"]})
        )
        budget_s = iso_seconds(record["replyBy"]) - iso_seconds(record["createdAt"])
        assert abs(budget_s * 1000 - REPLY_BUDGET_MS) <= 1, record  # millisecond timestamps
    # The budget holds: the fastest of the rounds came within it. A busy machine only adds to
    # what the client measures, never takes away, so the best round is the service's own
    # timing; a service that waited past the budget is late in every round.
    assert min(elapsed) <= limit_s, (
        f"answered after {', '.join(f'{e * 1000:.1f}' for e in elapsed)} ms; reply budget "
        f"{REPLY_BUDGET_MS} ms + tolerance {tolerances.budget_ms:g} ms"
    )


# -- preferred head start -------------------------------------------------------------------


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/overview/timing-defaults/preferred-wait",
    "rfq/endpoints/request-body/preferredliquiditywallets",
    "rfq/resources/firm-quote/routing-object",
)
@pytest.mark.parametrize("preferred_reply", ["silent", "decline"])
def test_preferred_makers_are_asked_a_head_start_before_the_rest(
    trader: Client,
    chain: VenueChain,
    fleet: Fleet,
    probes: tuple[MakerProbe, MakerProbe],
    defaults: dict[str, Any],
    tolerances: TimingTolerances,
    preferred_reply: str,
) -> None:
    # Only the two probes are makers. The preferred one cannot cover the size: it either never
    # answers or declines at once; a decline does not cut the head start short.
    fleet.only({})
    silent, declining = probes
    preferred, rest = (silent, declining) if preferred_reply == "silent" else (declining, silent)
    usdt = chain.token("USDT")
    body = rfq_body(
        chain,
        "NGNS",
        "USDT",
        buy_amount=usdt.units(1),  # exact output: nothing to fund when nobody prices it
        taker=Account.create().address,
        preferredLiquidityWallets=[_wallet(preferred)],
    )
    gaps_ms = []
    for _ in range(3):
        data = expect_no_quote(request_quote(trader, body), "no_valid_quote")
        first, second = preferred.rfqs_for(data["rfqId"]), rest.rfqs_for(data["rfqId"])
        assert len(first) == 1, f"the preferred maker was asked {len(first)} times"
        assert len(second) == 1, f"the other maker was asked {len(second)} times"
        gaps_ms.append((second[0].at - first[0].at) * 1000)
        assert data["routing"] == {
            "preferenceApplied": True,
            "restrictionApplied": False,
            "fallbackUsed": True,
            "targetMakerWallets": [_wallet(preferred)],
            "preferredQuotesReceived": 0,
            "openMarketQuotesReceived": 0,
        }, data["routing"]
    low = PREFERRED_WAIT_MS - tolerances.head_start_ms
    assert min(gaps_ms) >= low, (
        f"the rest were asked {min(gaps_ms):.1f} ms after the preferred makers; the head start "
        f"is {PREFERRED_WAIT_MS} ms (tolerance {tolerances.head_start_ms:g} ms); gaps {gaps_ms}"
    )
    # And not much later than the head start either: the fallback still leaves the rest of
    # the reply budget to the other makers.
    high = PREFERRED_WAIT_MS + tolerances.budget_ms
    assert max(gaps_ms) <= high, f"the rest were asked late: gaps {gaps_ms} ms, limit {high}"


@pytest.mark.sim_only(because="makers")
@pytest.mark.spec(
    "rfq/overview/timing-defaults/preferred-wait",
    "rfq/endpoints/request-body/preferredliquiditywallets",
)
def test_the_rest_are_not_asked_when_preferred_makers_cover_the_size(
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    fleet: Fleet,
    kept: Janitor,
    probes: tuple[MakerProbe, MakerProbe],
    defaults: dict[str, Any],
) -> None:
    fleet.only({"alpha": FAST})
    alpha = fleet.wallet("alpha")
    silent, declining = probes  # online makers that are not preferred
    usdt = chain.token("USDT")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(1)}, native=0)
    body = rfq_body(
        chain,
        "USDT",
        "NGNS",
        sell_amount=usdt.units(1),
        taker=taker.address,
        preferredLiquidityWallets=[alpha],
    )
    data = kept.keep(trader, request_quote(trader, body))
    checked = assert_firm_quote(
        chain, data, sell="USDT", buy="NGNS", taker=taker.address, sell_amount=usdt.units(1)
    )
    assert checked.makers == [alpha], checked.makers
    assert data["routing"]["fallbackUsed"] is False, data["routing"]
    # Past the whole reply budget, the other makers have still not been asked.
    time.sleep(REPLY_BUDGET_MS / 1000)
    for other in (silent, declining):
        assert other.rfqs_for(data["rfqId"]) == [], "a maker outside the preferred list was asked"


# -- ladder age -----------------------------------------------------------------------------


@pytest.mark.spec(
    "rfq/limits/ladder-cache",
    "rfq/resources/price-ladder/ladder-cached-about-2",
    "rfq/resources/price-ladder/fields",
)
def test_a_served_ladder_is_never_older_than_its_cache(
    target: Target, http: Client, tolerances: TimingTolerances
) -> None:
    # Against a simulator its clock is the reference (tests may have advanced it); against
    # another deployment this machine's clock is, and the tolerance must cover the skew.
    sim = target.sim() if target.is_simulator else None
    public = keyless_client(target, http)  # a client IP of its own: ~25 calls of its budget
    limit_ms = LADDER_CACHE_MS + tolerances.ladder_ms
    ages_ms: list[float] = []
    seen: set[str] = set()
    deadline = time.monotonic() + 2 * LADDER_CACHE_MS / 1000 + 1.5
    while time.monotonic() < deadline:
        data = assert_data(public.get("/v2/rfq/levels", params={"chainId": CHAIN}))
        now_ms = service_now_ms(sim)
        as_of_ms = parse_iso_utc(data["asOf"]).timestamp() * 1000
        ages_ms.append(now_ms - as_of_ms)
        seen.add(data["asOf"])
        time.sleep(0.2)
    assert max(ages_ms) <= limit_ms, (
        f"a ladder {max(ages_ms):.0f} ms old was served; cache {LADDER_CACHE_MS} ms "
        f"+ tolerance {tolerances.ladder_ms:g} ms"
    )
    assert min(ages_ms) >= -tolerances.ladder_ms, f"asOf in the future: {min(ages_ms):.0f} ms"
    assert len(seen) >= 2, f"over {2 * LADDER_CACHE_MS} ms the ladder was never rebuilt: {seen}"


# -- quote TTL ------------------------------------------------------------------------------


@pytest.mark.needs("key:trades", "taker_wallet")
@pytest.mark.spec(
    "rfq/overview/timing-defaults/quote-ttl",
    "rfq/limits/quote-ttl",
    "rfq/overview/properties-that-must-hold/price-held-briefly-firm",
    "rfq/resources/rfq-record/quotettlms",
    "rfq/resources/firm-quote/quote-fields/expiresat",
)
@pytest.mark.parametrize("exact", ["input", "output"])
def test_a_firm_quote_lives_no_longer_than_the_quote_ttl(
    trader: Client,
    chain: VenueChain,
    source: Wallet,
    liquidity: Liquidity,
    kept: Janitor,
    tolerances: TimingTolerances,
    target: Target,
    request: pytest.FixtureRequest,
    exact: str,
) -> None:
    if target.controllable:
        request.getfixturevalue("defaults")  # the spec's timing defaults are in force
        # Every maker offers the longest cutoff the service allows it (the fleet's default),
        # so the quote's expiresAt is where the service puts its cap.
        fleet: Fleet = request.getfixturevalue("fleet")
        fleet.only({"alpha": FAST, "bravo": FAST})
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    taker = fund_wallet(chain, source, {usdt.address: usdt.units(3)}, native=0)
    amounts: dict[str, Any] = (
        {"sell_amount": usdt.units(1)} if exact == "input" else {"buy_amount": ngns.units(1)}
    )
    body = rfq_body(chain, "USDT", "NGNS", taker=taker.address, **amounts)
    data = kept.keep(trader, request_quote(trader, body))
    assert data["status"] == "quoted", data
    quote = data["quote"]
    record = assert_data(
        trader.get(f"/v2/rfq/{data['rfqId']}", headers={"X-Rfq-Claim": data["claimToken"]})
    )
    assert record["quoteTtlMs"] == QUOTE_TTL_MS, record
    created_ms = iso_seconds(record["createdAt"]) * 1000
    lives_ms = iso_seconds(quote["expiresAt"]) * 1000 - created_ms
    assert 0 < lives_ms <= QUOTE_TTL_MS + tolerances.ttl_ms, (
        f"the quote lives {lives_ms:.0f} ms after the request; the quote TTL caps it at "
        f"{QUOTE_TTL_MS} ms (+ {tolerances.ttl_ms:g} ms)"
    )
    assert record["expiresAt"] == quote["expiresAt"], (record, quote)
    assert iso_seconds(quote["orderDeadline"]) >= iso_seconds(quote["expiresAt"]), quote
