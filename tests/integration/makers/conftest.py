"""One Anvil (chain id 56) per test session, so per xdist worker; every test gets the venue
deployed on it and rolled back afterwards (later tests attach to the same deployment, which
deploy_venue checks and reuses)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from rfqkit.anvil import AnvilNode, start_anvil
from rfqkit.chain import AnvilChain
from simulator.adapters.chain.deployment import deploy_venue
from simulator.settings import load_settings
from tests.integration.makers.venue import CHAIN_ID, Venue


@pytest.fixture(scope="session")
def maker_anvil() -> Iterator[AnvilNode]:
    node = start_anvil(CHAIN_ID)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture
async def venue(maker_anvil: AnvilNode) -> AsyncIterator[Venue]:
    settings = load_settings()
    chain = AnvilChain(CHAIN_ID, maker_anvil.rpc_url)
    try:
        deployment = await deploy_venue(
            chain, settings.chain(CHAIN_ID), settings.funding, settings.corridor_defaults
        )
        snapshot = await chain.rpc("evm_snapshot")
        try:
            yield Venue(chain, deployment, maker_anvil.rpc_url)
        finally:
            await chain.rpc("evm_revert", [snapshot])
    finally:
        await chain.close()
