"""The simulator's self-description (/_sim/info, and the ready file of `rfqsim serve`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from eth_utils.address import is_checksum_address

from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from rfqkit.json_rpc import hex_to_int, rpc

pytestmark = pytest.mark.sim_only(because="simulator")

EXPECTED_ENVIRONMENTS = {56: "live", 97: "test"}
CONTRACTS = ("signature_transfer", "reactor", "router", "wallet_factory", "fee_recipient")
# Addresses in `contracts` that are accounts, not deployed code.
NOT_CODE = frozenset({"fee_recipient"})
# The fields the ready file and /_sim/info must agree on.
STABLE_FIELDS = ("simulator", "version", "api_url", "seed", "environment", "chains")


@pytest.fixture(scope="module")
def info(target: Target) -> dict[str, Any]:
    return target.sim().info()


def _chains(info: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    chains = info.get("chains")
    assert isinstance(chains, list), f"chains is not a list: {chains!r}"
    by_id: dict[int, Mapping[str, Any]] = {}
    for chain in chains:
        assert isinstance(chain, Mapping), chain
        chain_id = chain.get("chain_id")
        assert isinstance(chain_id, int), f"chain_id is not an integer: {chain!r}"
        by_id[chain_id] = chain
    return by_id


def _has_code(url: str, address: str) -> bool:
    code = rpc(url, "eth_getCode", [address, "latest"])
    return isinstance(code, str) and code not in ("0x", "0x0", "")


def test_info_identifies_the_simulator(info: dict[str, Any], sim: SimControl) -> None:
    assert info.get("simulator") == "rfqsim"
    assert isinstance(info.get("version"), str)
    assert info.get("version")
    assert isinstance(info.get("seed"), int)
    assert info.get("environment") in ("staging", "production")


def test_ready_file_matches_sim_info(info: dict[str, Any], target: Target) -> None:
    if not target.started_by_harness or target.info is None:
        pytest.skip("the harness did not start this simulator, so it has no ready file")
    differing = [name for name in STABLE_FIELDS if target.info.get(name) != info.get(name)]
    assert not differing, f"ready file and /_sim/info differ on {differing}"


def test_default_chains_and_environments(info: dict[str, Any]) -> None:
    chains = _chains(info)
    for chain_id, environment in EXPECTED_ENVIRONMENTS.items():
        assert chain_id in chains, f"chain {chain_id} missing from {sorted(chains)}"
        assert chains[chain_id].get("environment") == environment, (
            f"chain {chain_id}: environment {chains[chain_id].get('environment')!r}, "
            f"expected {environment!r}"
        )
        rpc_url = chains[chain_id].get("rpc_url")
        assert isinstance(rpc_url, str), f"chain {chain_id}: no rpc_url"
        assert rpc_url.startswith("http"), f"chain {chain_id}: rpc_url {rpc_url!r}"


def test_chain_ids_answer_on_rpc(info: dict[str, Any], target: Target) -> None:
    for chain_id in _chains(info):
        answered = hex_to_int(rpc(target.rpc_url(chain_id), "eth_chainId"))
        assert answered == chain_id, f"RPC of chain {chain_id} answers chain id {answered}"


def test_contracts_are_checksummed_and_deployed(info: dict[str, Any], target: Target) -> None:
    problems: list[str] = []
    for chain_id, chain in _chains(info).items():
        contracts = chain.get("contracts")
        assert isinstance(contracts, Mapping), f"chain {chain_id}: contracts {contracts!r}"
        url = target.rpc_url(chain_id)
        for name in CONTRACTS:
            address = contracts.get(name)
            if not isinstance(address, str) or not is_checksum_address(address):
                problems.append(f"{chain_id}/{name}: not a checksummed address: {address!r}")
            elif name not in NOT_CODE and not _has_code(url, address):
                problems.append(f"{chain_id}/{name}: no code at {address}")
    assert not problems, "\n".join(problems)


def test_tokens_are_deployed(info: dict[str, Any], target: Target) -> None:
    problems: list[str] = []
    for chain_id, chain in _chains(info).items():
        tokens = chain.get("tokens")
        assert isinstance(tokens, list), f"chain {chain_id}: tokens {tokens!r}"
        assert tokens, f"chain {chain_id}: no tokens"
        url = target.rpc_url(chain_id)
        for token in tokens:
            assert isinstance(token, Mapping), token
            symbol, address = token.get("symbol"), token.get("address")
            decimals = token.get("decimals")
            if not isinstance(symbol, str) or not symbol:
                problems.append(f"{chain_id}: token without symbol: {token!r}")
            if not isinstance(decimals, int) or isinstance(decimals, bool) or decimals < 0:
                problems.append(f"{chain_id}/{symbol}: bad decimals {decimals!r}")
            if not isinstance(token.get("usdt_like"), bool):
                problems.append(f"{chain_id}/{symbol}: usdt_like is not a boolean")
            if not isinstance(address, str) or not is_checksum_address(address):
                problems.append(f"{chain_id}/{symbol}: not a checksummed address: {address!r}")
            elif not _has_code(url, address):
                problems.append(f"{chain_id}/{symbol}: no code at {address}")
    assert not problems, "\n".join(problems)


def test_demo_wallets_are_funded(info: dict[str, Any], target: Target) -> None:
    wallets = info.get("demo_wallets")
    assert isinstance(wallets, list), f"demo_wallets {wallets!r}"
    assert wallets, "no demo wallets"
    problems: list[str] = []
    for wallet in wallets:
        assert isinstance(wallet, Mapping), wallet
        address, key = wallet.get("address"), wallet.get("private_key")
        label = wallet.get("label")
        if not isinstance(address, str) or not is_checksum_address(address):
            problems.append(f"{label}: not a checksummed address: {address!r}")
            continue
        if not isinstance(key, str) or len(key.removeprefix("0x")) != 64:
            problems.append(f"{label}: private_key is not 32 bytes of hex")
        for chain_id in _chains(info):
            url = target.rpc_url(chain_id)
            balance = hex_to_int(rpc(url, "eth_getBalance", [address, "latest"]))
            if balance <= 0:
                problems.append(f"{label} {address}: no native balance on chain {chain_id}")
    assert not problems, "\n".join(problems)
