"""`rfqsim serve` as a user runs it: real process, real Anvil chains, real HTTP."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from rfqkit.anvil import start_anvil
from rfqkit.json_rpc import rpc
from tests.integration.serve_process import RFQSIM, Served, serve, stop

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One simulator for the tests that only read it or move its clock (which changes no
    address, code or balance the others read); a test that stops its simulator starts its own."""
    with serve(tmp_path_factory.mktemp("serve")) as running:
        yield running


def anvil_children(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children(recursive=True) if "anvil" in p.name()]


def test_ready_file_names_both_chains_and_every_contract_has_code(served: Served) -> None:
    chains = {c["chain_id"]: c for c in served.info["chains"]}
    assert {k: c["environment"] for k, c in chains.items()} == {56: "live", 97: "test"}
    for chain in chains.values():
        assert int(rpc(chain["rpc_url"], "eth_chainId", []), 16) == chain["chain_id"]
        contracts = chain["contracts"]
        for role in ("signature_transfer", "reactor", "router", "wallet_factory"):
            assert rpc(chain["rpc_url"], "eth_getCode", [contracts[role], "latest"]) != "0x"
        for token in chain["tokens"]:
            assert rpc(chain["rpc_url"], "eth_getCode", [token["address"], "latest"]) != "0x"
        for wallet in served.info["demo_wallets"]:
            balance = rpc(chain["rpc_url"], "eth_getBalance", [wallet["address"], "latest"])
            assert int(balance, 16) > 0
    with urllib.request.urlopen(served.api_url + "/_sim/info") as response:
        info = json.loads(response.read())["data"]
    assert info["chains"] == served.info["chains"]
    # one process: the venue's only instance, in the ready file and at /_sim/info alike
    alone = [{"id": 0, "pid": served.process.pid, "api_url": served.api_url}]
    assert info["instances"] == served.info["instances"] == alone


def test_addresses_are_the_same_every_run(served: Served, tmp_path: Path) -> None:
    with serve(tmp_path) as again:
        runs = [[(c["contracts"], c["tokens"]) for c in s.info["chains"]] for s in (served, again)]
    assert runs[0] == runs[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_anvil_survives_the_simulator(tmp_path: Path, sig: int) -> None:
    with serve(tmp_path) as served:
        children = anvil_children(served.process.pid)
        assert len(children) == 2
        status = stop(served.process, sig)
        _, alive = psutil.wait_procs(children, timeout=10)
        assert alive == []
    if sig == signal.SIGTERM:  # a stop it is told of is a clean one: status 0, no ready file
        assert status == 0
        assert not (tmp_path / "ready.json").exists()


def test_anvil_failing_to_start_names_binary_and_exits_nonzero(tmp_path: Path) -> None:
    env = dict(os.environ, RFQSIM_ANVIL=str(tmp_path / "no-such-anvil"))
    import subprocess

    result = subprocess.run(
        [str(RFQSIM), "serve", "--port", "0", "--rpc-port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert str(tmp_path / "no-such-anvil") in result.stderr
    assert "port" in result.stderr
    assert "Traceback" not in result.stderr


def test_attach_to_running_node_deploys_once_and_reuses(tmp_path: Path) -> None:
    node = start_anvil(97)
    try:
        addresses = []
        for index in range(2):
            run_dir = tmp_path / str(index)
            run_dir.mkdir()
            with serve(run_dir, "--rpc-url", f"97={node.rpc_url}") as served:
                chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
                assert chain["managed"] is False
                assert chain["rpc_url"] == node.rpc_url
                addresses.append(chain["contracts"])
                stop(served.process)
            assert node.is_running(), "an attached node is not ours to stop"
        assert addresses[0] == addresses[1]
    finally:
        node.stop()


def test_clock_advance_moves_every_chain(served: Served) -> None:
    request = urllib.request.Request(
        served.api_url + "/_sim/clock/advance",
        json.dumps({"seconds": 7200}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        state = json.loads(response.read())["data"]
    assert state["offset_seconds"] == 7200
    for chain in served.info["chains"]:
        block = rpc(chain["rpc_url"], "eth_getBlockByNumber", ["latest", False])
        assert abs(int(block["timestamp"], 16) - (time.time() + 7200)) < 5
