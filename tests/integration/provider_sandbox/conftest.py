"""One Anvil (chain 97, the sandbox chain) per test session, so per xdist worker, with the venue
deployed; every test gets its own sandbox (own port, own clock) and a webhook receiver, and the
chain is reverted to its snapshot afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from provider_sandbox import SandboxChain, SandboxConfig, start_sandbox
from rfqkit.anvil import AnvilNode, start_anvil
from rfqkit.chain import AnvilChain
from simulator.adapters.chain.deployment import deploy_venue
from simulator.settings import load_settings
from tests.integration.provider_sandbox.harness import (
    CHAIN_ID,
    WEBHOOK_SECRET,
    Harness,
    WebhookReceiver,
)


@pytest.fixture(scope="session")
def sandbox_anvil() -> Iterator[AnvilNode]:
    node = start_anvil(CHAIN_ID)
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture
async def harness(sandbox_anvil: AnvilNode) -> AsyncIterator[Harness]:
    settings = load_settings()
    chain = AnvilChain(CHAIN_ID, sandbox_anvil.rpc_url)
    try:
        deployment = await deploy_venue(
            chain, settings.chain(CHAIN_ID), settings.funding, settings.corridor_defaults
        )
        ngns = next(t for t in deployment.tokens if t.symbol == "NGNS")
        snapshot = await chain.rpc("evm_snapshot")
        receiver = await WebhookReceiver.start(WEBHOOK_SECRET)
        config = SandboxConfig(
            chains=(
                SandboxChain(
                    chain_id=CHAIN_ID,
                    rpc_url=sandbox_anvil.rpc_url,
                    network="bnb-testnet",
                    token_address=ngns.address,
                    token_decimals=ngns.decimals,
                ),
            ),
            webhook_url=receiver.url,
            webhook_secret=WEBHOOK_SECRET,
            seed=7,
        )
        running = await start_sandbox(config)
        try:
            async with Harness.open(running, chain, ngns.address, receiver) as opened:
                yield opened
        finally:
            await running.stop()
            await receiver.stop()
            await chain.rpc("evm_revert", [snapshot])
    finally:
        await chain.close()
