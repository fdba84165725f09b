"""One Anvil node per test session (so per xdist worker) with every contract deployed once;
each test runs inside an evm_snapshot that is reverted afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from web3 import Web3

from rfqkit.anvil import AnvilNode, start_anvil
from tests.integration.contracts.env import Env, deploy_env

CHAIN_ID = 31337


@pytest.fixture(scope="session")
def anvil_node() -> Iterator[AnvilNode]:
    node = start_anvil(chain_id=CHAIN_ID)
    try:
        yield node
    finally:
        node.stop()  # also joins the stdout pump and closes the pipe


@pytest.fixture(scope="session")
def deployed(anvil_node: AnvilNode) -> Iterator[Env]:
    # An explicit session so its pooled sockets are closed at teardown, not left to the GC.
    with requests.Session() as session:
        provider = Web3.HTTPProvider(
            anvil_node.rpc_url, request_kwargs={"timeout": 30}, session=session
        )
        w3 = Web3(provider)
        assert w3.eth.chain_id == CHAIN_ID
        yield deploy_env(w3, CHAIN_ID)


@pytest.fixture
def env(deployed: Env) -> Iterator[Env]:
    """The deployed environment, rolled back to its pristine state after the test."""
    snapshot = deployed.rpc("evm_snapshot", [])
    try:
        yield deployed
    finally:
        assert deployed.rpc("evm_revert", [snapshot]) is True
