"""Fixtures shared by the conformance tests: trading on chain 97, the v2 ramp, and a keyless
caller from a client IP of its own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.chain import Wallet
from conformance.client import Client, fresh_loopback_address, is_loopback_url
from conformance.control import Fleet, Janitor, controlled_fleet, janitor
from conformance.ramp import Ramp
from conformance.ramp_transfers import Transfers
from conformance.rfq_calls import keyed_client, new_key
from conformance.server import SimulatorProcess, find_rfqsim_bin
from conformance.sim_control import SimControl
from conformance.target import Target
from conformance.venue import ChainInfo, Venue

CHAIN = 97  # the live test corridor: small minimum sizes


@pytest.fixture
def venue(target: Target) -> Venue:
    return Venue.of(target)


@pytest.fixture
def chain(venue: Venue) -> ChainInfo:
    return venue.chain(CHAIN)


@pytest.fixture
def source(venue: Venue) -> Wallet:
    """The demo wallet that funds fresh takers."""
    return venue.demo_wallets[-1]


@pytest.fixture
def fleet(sim: SimControl) -> Iterator[Fleet]:
    """The simulated makers, restored to their settings after the test."""
    with controlled_fleet(sim) as controlled:
        yield controlled


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A keyless client from a loopback address no other test uses (when the target allows)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


@pytest.fixture
def trader(sim: SimControl, http: Client) -> Client:
    """A client with a fresh test-environment key of a partner of its own."""
    return keyed_client(http, new_key(sim, "test"))


@pytest.fixture
def kept() -> Iterator[Janitor]:
    """Quotes to cancel when the test ends."""
    with janitor() as keeper:
        yield keeper


@pytest.fixture
def ramp(target: Target, http: Client) -> Ramp:
    """The v2 ramp's helpers; the sandbox controls only against the simulator."""
    return Ramp(http, target.sim() if target.is_simulator else None)


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
