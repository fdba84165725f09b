"""Fixtures shared by the conformance tests: trading on chain 97, the v2 ramp, a keyless caller
from a client IP of its own, and webhook partners with an https receiver."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.calls.control import Fleet, Janitor, Liquidity, controlled_fleet, janitor
from conformance.calls.ramp import Ramp
from conformance.calls.ramp_transfers import Transfers
from conformance.calls.rfq_calls import bearer, new_key, wait_ladder
from conformance.calls.v1_book import Integrator
from conformance.calls.v1_target import integrator_for
from conformance.calls.webhooks import fetch_certificate
from conformance.deployment.key_source import KeySource
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
from conformance.deployment.venue import Venue, VenueChain
from conformance.tests.webhook_partners import WebhookPartner
from conformance.wire.client import Client, fresh_loopback_address, is_loopback_url
from conformance.wire.inputs import TAKER_SCOPES
from conformance.wire.needs import skip_message
from conformance.wire.public_receiver import public_receiver
from conformance.wire.server import SimulatorProcess, find_rfqsim_bin
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import WebhookReceiver

CHAIN = 97  # the live test corridor: small minimum sizes


@pytest.fixture
def venue(target: Target) -> Venue:
    return Venue.of(target)


@pytest.fixture
def chain(venue: Venue) -> VenueChain:
    return venue.chain(CHAIN)


@pytest.fixture
def source(venue: Venue) -> Wallet:
    """The wallet that funds fresh takers: a demo wallet of the simulator, else the last taker
    wallet the QA team gave."""
    if not venue.demo_wallets:
        pytest.skip(skip_message("taker_wallet"))
    return venue.demo_wallets[-1]


@pytest.fixture
def fleet(sim: SimControl) -> Iterator[Fleet]:
    """The simulated makers, restored to their settings after the test."""
    with controlled_fleet(sim) as controlled:
        yield controlled


@pytest.fixture
def liquidity(target: Target, http: Client, chain: VenueChain) -> Iterator[Liquidity]:
    """Fresh levels on every RFQ pair of the test chain before the test: the simulated fleet
    (restored after the test) on a simulator, else whatever the public ladder shows."""
    if target.controllable:
        with controlled_fleet(target.sim()) as fleet:
            yield Liquidity(frozenset(fleet.wallets.values()), fleet)
        return

    def deep(data: dict[str, Any]) -> bool:
        depth = {(p["sellToken"], p["buyToken"]): p.get("maxSellAmount") for p in data["pairs"]}
        return all(depth.get(d) not in (None, "0") for d in chain.rfq_directions())

    wait_ladder(http, chain.chain_id, deep, timeout=30, what="depth on every RFQ pair")
    yield Liquidity(None)


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A keyless client from a loopback address no other test uses (when the target allows)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


@pytest.fixture
def trades_key(target: Target) -> dict[str, str]:
    """Authorization headers of a test-environment trades key: a fresh key of a partner of its
    own on a simulator, else the key the QA team gave (shared by the tests)."""
    if target.controllable:
        return bearer(new_key(target.sim(), "test"))
    key = resolved_inputs(target).key(TAKER_SCOPES, "test")
    if key is None:
        pytest.skip(skip_message("key:trades"))
    return key.headers


@pytest.fixture
def maker_credential(target: Target) -> Iterator[str]:
    """A maker credential of the test environment (scope maker:stream): made for a fresh wallet
    on a simulator (revoked after the test), else the one the QA team gave (``--maker-key``)."""
    source = KeySource(target, "maker")
    yield str(source.maker("test")["key"])
    source.close()


# Requests a keyed test may make in one window without waiting for the next (a shared key's
# limiter: a wait in the middle of a test can outlast the firm quote it holds).
TRADER_ROOM = 20


@pytest.fixture
def trader(target: Target, http: Client, trades_key: dict[str, str]) -> Client:
    """A client with a test-environment trades key (a given key is shared by the tests, so
    the client paces itself, and starts with room in the limiter's window)."""
    keyed = http.with_headers(trades_key)
    if target.controllable:
        return keyed
    if is_loopback_url(target.base_url):  # the per-IP ceiling is not another test's to spend
        keyed = keyed.from_address(fresh_loopback_address())
    paced = keyed.paced()
    paced.wait_for_room(TRADER_ROOM)
    return paced


@pytest.fixture
def kept() -> Iterator[Janitor]:
    """Quotes to cancel when the test ends."""
    with janitor() as keeper:
        yield keeper


@pytest.fixture
def ramp(target: Target, http: Client) -> Ramp:
    """The v2 ramp's helpers; the sandbox controls only against the simulator."""
    return Ramp(http, target.sim() if target.is_simulator else None, shared=target.cache)


@pytest.fixture
def transfers(ramp: Ramp) -> Transfers:
    return Transfers(ramp)


@pytest.fixture(scope="session")
def production(target: Target, pytestconfig: pytest.Config) -> Iterator[Client]:
    """A second simulator, started with --environment production (no makers), shared by the
    tests of one worker that need the production rules."""
    if not target.started_by_harness:
        pytest.skip("needs the rfqsim executable the harness started")
    process = SimulatorProcess(
        find_rfqsim_bin(pytestconfig.getoption("--rfqsim-bin"), pytestconfig.rootpath),
        extra_args=["--environment", "production", "--no-makers"],
        cwd=pytestconfig.rootpath,
    )
    info = process.start()
    try:
        yield Client(str(info["api_url"]))
    finally:
        process.stop()


@pytest.fixture
def make_partner(
    target: Target, sim: SimControl, caller: Client
) -> Iterator[Callable[[], WebhookPartner]]:
    made: list[WebhookPartner] = []
    sim.call("DELETE", "webhooks/faults")

    def make() -> WebhookPartner:
        key = sim.create_key(
            f"conformance-webhook-delivery-{secrets.token_hex(6)}",
            "test",
            ["trades:write", "trades:read", "webhooks:manage"],
            tier="high",
        )
        partner = WebhookPartner(target, sim, caller, key, [])
        made.append(partner)
        return partner

    yield make
    sim.call("DELETE", "webhooks/faults")
    for partner in made:
        for endpoint_id in partner.endpoints:
            caller.delete(f"/v1/webhooks/{endpoint_id}", headers=partner.auth)
        sim.call("POST", f"keys/{partner.key['key_id']}/revoke")


@pytest.fixture
def integrator(target: Target, http: Client) -> Integrator:
    """An existing v1 integrator: a partner of its own with a key holding every v1 scope on a
    simulator, else the given ``key:v1`` (its client paced)."""
    return integrator_for(target, http)


@pytest.fixture
def receiver(target: Target) -> Iterator[WebhookReceiver]:
    """An https receiver the target delivers to: on a simulator, one on a free loopback port
    with a certificate from its local CA; elsewhere, the receiver behind the QA team's public
    URL (conformance/wire/public_receiver.py)."""
    if target.controllable:
        cert_pem, key_pem, _ = fetch_certificate(target.base_url)
        with WebhookReceiver(cert_pem, key_pem) as running:
            yield running
        return
    if not target.inputs.webhook_public_url:
        pytest.skip(skip_message("webhook_url"))
    with public_receiver(target.inputs) as public:
        yield public
