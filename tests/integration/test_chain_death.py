"""A chain node rfqsim started dies (SIGKILL): the simulator says so at once, its health bodies
name the dead chain and its index, a clock advance answers a readable 502, the makers log the
failure once instead of every round, and `on_chain_exit` decides what follows: stop, restart and
redeploy, or keep serving."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.integration.serve_process import RFQSIM, wait_ready

pytestmark = pytest.mark.integration


@dataclass
class Running:
    process: subprocess.Popen[str]
    info: dict[str, Any]
    log: Path

    @property
    def api(self) -> str:
        return str(self.info["api_url"])

    def anvil(self, chain_id: int) -> psutil.Process:
        for child in psutil.Process(self.process.pid).children(recursive=True):
            if "anvil" in child.name() and f"{chain_id}" == _arg(child, "--chain-id"):
                return child
        raise AssertionError(f"no anvil for chain {chain_id}")

    def logged(self) -> str:
        return self.log.read_text(errors="replace")


def _arg(process: psutil.Process, flag: str) -> str | None:
    args = process.cmdline()
    return args[args.index(flag) + 1] if flag in args else None


@contextmanager
def simulator(tmp_path: Path, policy: str, *extra: str) -> Iterator[Running]:
    ready = tmp_path / "ready.json"
    log = tmp_path / "stderr.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [
                str(RFQSIM),
                "serve",
                "--port",
                "0",
                "--rpc-port",
                "0",
                "--ready-file",
                str(ready),
                "--on-chain-exit",
                policy,
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )
    try:
        yield Running(process, wait_ready(process, ready, log=log), log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def call(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), json.loads(error.read())


def wait_for(condition: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Polls until `condition()` is truthy (a positive event), then returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


def health(running: Running) -> dict[str, Any]:
    status, body = call(f"{running.api}/v2/health")
    assert status == 200
    return dict(body["data"])


def firm_request(running: Running, chain_id: int) -> tuple[int, Any]:
    info = running.info
    chain = next(c for c in info["chains"] if c["chain_id"] == chain_id)
    tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
    key = next(
        k["key"]
        for k in info["demo_keys"]
        if k["environment"] == chain["environment"] and "rfq:aggregator" not in k["scopes"]
    )
    body = {
        "chainId": chain_id,
        "sellToken": tokens["USDT"],
        "buyToken": tokens["NGNS"],
        "sellAmount": str(10**18),
        "taker": info["demo_wallets"][0]["address"],
    }
    return call(f"{running.api}/v2/rfq/request", body, {"Authorization": f"Bearer {key}"})


def test_keep_serving_reports_the_dead_chain_and_logs_it_once(tmp_path: Path) -> None:
    with simulator(tmp_path, "keep-serving") as running:
        before = health(running)
        assert before["status"] == "ok"
        assert {name: c["status"] for name, c in before["checks"].items()} == {
            "chain:56": "up",
            "chain:97": "up",
            "fillIndex:56": "up",
            "fillIndex:97": "up",
            "provider:ngnramp": "up",
        }
        dead = running.anvil(97)
        dead.kill()
        after = wait_for(
            lambda: (
                (h := health(running))["checks"]["chain:97"]["status"] == "down"
                and h["checks"]["fillIndex:97"]["status"] == "down"
                and h
            )
        )
        assert after["status"] == "degraded"
        checks = after["checks"]
        assert checks["chain:97"]["detail"] == "node exited (keep_serving)"
        assert checks["chain:56"]["status"] == "up"
        assert checks["provider:ngnramp"]["status"] == "up"
        logged = running.logged()
        assert f"chain 97: the Anvil node rfqsim started (pid {dead.pid}" in logged
        assert "exited with status -9; serving without it" in logged

        status, body = call(f"{running.api}/_sim/clock/advance", {"seconds": 5})
        assert status == 502
        error = body["error"]
        assert error["code"] == "upstream_error"
        assert error["details"] == {"reason": "chain_unreachable", "chainIds": [97]}
        assert error["message"].startswith("The service clock moved, but chain 97 could not")
        assert "refused the connection" in error["message"]
        for internal in ("ClientConnectorError", "ConnectionKey", "Errno", "ssl="):
            assert internal not in error["message"]

        status, body = firm_request(running, 97)
        assert status == 502
        assert body["error"]["details"]["reason"] == "chain_unreachable"
        status, body = firm_request(running, 56)  # the other chain still quotes
        assert status == 200
        assert body["data"]["status"] == "quoted"

        def makers_failing_rounds() -> list[int]:
            _, makers = call(f"{running.api}/_sim/makers")
            fleet = makers["data"]["fleet"]
            return [m["stats"]["failing"].get("chain 97", 0) for m in fleet]

        # Every maker has failed several rounds on chain 97 by now ...
        wait_for(lambda: min(makers_failing_rounds()) >= 3)
        # ... and each said so once: no ERROR per round.
        failures = [
            line
            for line in running.logged().splitlines()
            if "publishing levels on chain 97 failed" in line
        ]
        assert len(failures) == 4, failures
        assert "Traceback" not in running.logged()


# The fleet's approvals are redone through the chain restart listener, which reaches a fleet in
# its own process over its control channel.
@pytest.mark.parametrize("makers_process", ["in", "own"])
def test_restart_brings_the_chain_back_on_the_same_port(
    tmp_path: Path, makers_process: str
) -> None:
    with simulator(tmp_path, "restart", "--makers-process", makers_process) as running:
        dead = running.anvil(97)
        port = _arg(dead, "--port")
        rpc_url = next(c["rpc_url"] for c in running.info["chains"] if c["chain_id"] == 97)
        dead.kill()
        wait_for(lambda: "venue redeployed" in running.logged())
        replacement = running.anvil(97)
        assert replacement.pid != dead.pid
        assert _arg(replacement, "--port") == rpc_url.rsplit(":", 1)[1]
        assert port == "0"  # the first took a free port; its replacement binds that same one
        wait_for(lambda: health(running)["status"] == "ok")
        # The makers approved again on the fresh chain: a firm request is quoted there.
        _status, body = wait_for(
            lambda: (
                (r := firm_request(running, 97))[0] == 200
                and r[1]["data"]["status"] == "quoted"
                and r
            )
        )
        assert body["data"]["quote"]["orders"]
        logged = running.logged()
        assert "exited with status -9; starting a new node and redeploying" in logged
        if makers_process == "own":  # the child heard of it (its log lines are serve's)
            assert "chain 97 restarted: the makers approve and read balances there again" in logged


def test_stop_exits_with_status_1_and_leaves_no_node(tmp_path: Path) -> None:
    with simulator(tmp_path, "stop") as running:
        survivor = running.anvil(56)
        running.anvil(97).kill()
        assert running.process.wait(timeout=15) == 1
        _, alive = psutil.wait_procs([survivor], timeout=5)
        assert alive == []
        assert not (tmp_path / "ready.json").exists()
        assert "stopping: chain 97: the Anvil node rfqsim started" in running.logged()
        assert "(on_chain_exit: stop)" in running.logged()
