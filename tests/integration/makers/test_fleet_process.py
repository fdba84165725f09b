"""`rfqsim serve --makers-process own` (real processes, real HTTP, real Anvil): the simulated
fleet runs in a child process, and /_sim/makers, reset and the stop reach it as they reach the
fleet in the simulator's process."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from loadtests.machine import is_fleet_process
from makers.config import default_fleet
from rfqsim.pytest_plugin import RfqSim, RfqSimError
from tests.integration.firm_quotes import firm_quote
from tests.integration.serve_process import Served, serve, stop

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("fleet-process")]

NAMES = [m.name for m in default_fleet().makers]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("fleet-process"), "--makers-process", "own") as running:
        yield running


@pytest.fixture
def sim(served: Served) -> RfqSim:
    sim = RfqSim(served.api_url, served.info)
    sim.reset()
    return sim


def fleet_children(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children() if is_fleet_process(p)]


def fleet(sim: RfqSim) -> list[dict[str, Any]]:
    return list(sim.call("GET", "/_sim/makers")["fleet"])


def wait_for(check: Any, what: str, timeout_s: float = 30.0) -> Any:
    """Poll `check` until it returns something truthy; the evidence, not a sleep, ends it."""
    deadline = time.monotonic() + timeout_s
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {timeout_s:g}s")
        time.sleep(0.05)
    return result


def test_the_fleet_runs_in_a_child_and_answers_makers_get_and_patch(
    served: Served, sim: RfqSim
) -> None:
    (child,) = fleet_children(served.process.pid)
    # forked by serve before its event loop: our imports, not a `python -m makers.child` of its own
    assert child.name() == "makers.child"
    assert child.cmdline() == psutil.Process(served.process.pid).cmdline()
    members = fleet(sim)
    assert [m["name"] for m in members] == NAMES
    assert all(m["connected"] for m in members)
    assert all("private_key" not in m["config"] for m in members)
    # the makers online on the stream are the child's
    online = {m["wallet"] for m in sim.call("GET", "/_sim/makers")["online"]}
    assert {m["wallet"] for m in members} <= online

    changed = sim.set_maker("bravo", behaviour="silent", spread_bps=40)["fleet"]
    bravo = next(m for m in changed if m["name"] == "bravo")
    assert (bravo["behaviour"], float(bravo["config"]["spread_bps"])) == ("silent", 40.0)
    assert next(m for m in fleet(sim) if m["name"] == "bravo")["behaviour"] == "silent"

    with pytest.raises(RfqSimError) as unknown:
        sim.set_maker("zulu", behaviour="silent")
    assert unknown.value.status == 404
    assert unknown.value.body["error"]["code"] == "not_found"

    with pytest.raises(RfqSimError) as refused:
        sim.set_maker("alpha", mids={"USDC": -1})  # passes the schema, the maker refuses it
    assert refused.value.status == 400
    details = refused.value.body["error"]["details"]
    assert details["reason"] == "invalid_maker_config"
    assert [issue["field"] for issue in details["issues"]] == ["mids"]
    assert fleet_children(served.process.pid) == [child]  # the same process throughout


def test_reset_restarts_the_fleet_in_the_child_and_quotes_come_back(
    served: Served, sim: RfqSim
) -> None:
    sim.set_maker("alpha", behaviour="silent")
    assert firm_quote(sim)["status"] == "quoted"
    before = fleet_children(served.process.pid)
    sim.reset()
    members = fleet(sim)
    assert [(m["name"], m["connected"]) for m in members] == [(n, True) for n in NAMES]
    assert next(m for m in members if m["name"] == "alpha")["behaviour"] == "normal"
    assert all(m["stats"]["rfqs"] == 0 for m in members)  # a fresh fleet, its counters too
    assert fleet_children(served.process.pid) == before  # restarted inside the same child
    assert firm_quote(sim)["status"] == "quoted"


def test_a_child_that_dies_leaves_the_simulator_serving_and_a_reset_starts_another(
    served: Served, sim: RfqSim
) -> None:
    (child,) = fleet_children(served.process.pid)
    child.kill()
    child.wait(timeout=10)
    wait_for(lambda: fleet(sim) == [], "empty fleet after the child died")
    with pytest.raises(RfqSimError) as unreachable:
        sim.set_maker("alpha", behaviour="silent")
    assert unreachable.value.status == 502
    assert unreachable.value.body["error"]["details"] == {"reason": "maker_unreachable"}
    sim.reset()
    (replacement,) = fleet_children(served.process.pid)
    assert replacement.pid != child.pid
    assert replacement.cmdline()[1:3] == ["-m", "makers.child"]  # a process of its own now
    assert [(m["name"], m["connected"]) for m in fleet(sim)] == [(n, True) for n in NAMES]
    assert firm_quote(sim)["status"] == "quoted"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopping_serve_leaves_no_fleet_process(tmp_path: Path, sig: signal.Signals) -> None:
    with serve(tmp_path, "--makers-process", "own") as running:
        (child,) = fleet_children(running.process.pid)
        code = stop(running.process, sig)
        assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0)
        # the child is gone with it (stdin's end, or PR_SET_PDEATHSIG when serve was killed)
        child.wait(timeout=15)  # psutil.TimeoutExpired if it outlived serve
        assert not child.is_running()
