"""Fixtures shared by the RFQ conformance tests (integrator-style trading on chain 97)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conformance.client import Client, SimControl
from conformance.target import Target
from conformance.trading import (
    ChainInfo,
    Fleet,
    Janitor,
    Venue,
    Wallet,
    controlled_fleet,
    janitor,
    keyed_client,
    new_key,
)

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
def trader(sim: SimControl, http: Client) -> Client:
    """A client with a fresh test-environment key of a partner of its own."""
    return keyed_client(http, new_key(sim, "test"))


@pytest.fixture
def kept() -> Iterator[Janitor]:
    """Quotes to cancel when the test ends."""
    with janitor() as keeper:
        yield keeper
