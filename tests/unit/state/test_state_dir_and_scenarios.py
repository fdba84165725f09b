"""The state directory's reader and writer, scenario files and the scenario runner on the
simulator clock (fake targets behind the runner's port), and reset through the HTTP edge of an
app built without chains."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator import __version__
from simulator.adapters.sim.state_dir import StateDirError, read_state_dir, write_state_dir
from simulator.api.http.appkeys import ACCESS, STATE
from simulator.api.sim.scenario_files import plan_from_text
from simulator.clock import Clock
from simulator.errors import InvalidRequest
from simulator.runtime.app import create_app
from simulator.services.sim.ports import BalanceTarget
from simulator.services.sim.scenario import ScenarioRunner
from simulator.settings import load_settings

REPO = Path(__file__).resolve().parents[3]


def test_a_written_state_reads_back(tmp_path: Path) -> None:
    services = {"clock": {"offset_seconds": 60.0}}
    write_state_dir(tmp_path, seed=4, services=services, chains={97: "0x1f8b00"})
    saved = read_state_dir(tmp_path, seed=4, chain_ids=[97])
    assert saved is not None
    assert saved.services == services
    assert saved.chains == {97: "0x1f8b00"}
    assert read_state_dir(tmp_path / "empty", seed=4, chain_ids=[97]) is None


@pytest.mark.parametrize(
    ("seed", "chains", "services", "said"),
    [
        (5, [97], {}, "saved with --seed 4, started with --seed 5"),
        (4, [56, 97], {}, "saved for chains [97], configured chains are [56, 97]"),
        (4, [97], {"x": ["not", "an", "object"]}, "corrupt state of x"),
    ],
)
def test_a_state_for_another_start_is_refused(
    tmp_path: Path, seed: int, chains: list[int], services: Any, said: str
) -> None:
    write_state_dir(tmp_path, seed=4, services=services, chains={97: "0x1f8b00"})
    with pytest.raises(StateDirError, match=said.replace("[", r"\[").replace("]", r"\]")):
        read_state_dir(tmp_path, seed=seed, chain_ids=chains)


def test_the_version_is_checked(tmp_path: Path) -> None:
    write_state_dir(tmp_path, seed=4, services={}, chains={})
    document = json.loads((tmp_path / "rfqsim-state.json").read_text())
    document["simulator_version"] = "0.0.1"
    (tmp_path / "rfqsim-state.json").write_text(json.dumps(document))
    with pytest.raises(
        StateDirError, match=f"written by rfqsim 0.0.1 .* this is rfqsim {__version__}"
    ):
        read_state_dir(tmp_path, seed=4, chain_ids=[])


def test_the_published_schema_is_the_generated_one() -> None:
    from simulator.api.sim.scenario_schemas import published_schema

    committed = json.loads((REPO / "docs" / "schemas" / "scenario.schema.json").read_text())
    assert committed == published_schema(), (
        "run: python -m simulator.api.sim.scenario_schemas > docs/schemas/scenario.schema.json"
    )


@pytest.mark.parametrize("path", sorted((REPO / "scenarios").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_example_scenarios_are_valid(path: Path) -> None:
    plan = plan_from_text(path.read_text())
    assert plan.name == path.stem
    assert plan.steps


def test_a_bad_time_and_an_unknown_key_name_their_paths() -> None:
    text = "version: 1\nname: x\nlimitz: {}\nschedule:\n  - at: -5s\n  - at: 40d\n  - at: .nan\n"
    with pytest.raises(InvalidRequest) as bad:
        plan_from_text(text)
    assert bad.value.details is not None
    assert {i["field"] for i in bad.value.details["issues"]} == {
        "limitz",
        "schedule.0.at",
        "schedule.1.at",
        "schedule.2.at",
    }


class FakeTargets:
    def __init__(self) -> None:
        self.applied: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()

    def maker_names(self) -> list[str]:
        return ["alpha"]

    def tokens(self, chain_id: int) -> set[str] | None:
        return {"USDT", "ETH"} if chain_id == 97 else None

    def _note(self, what: str, value: Any) -> None:
        self.applied.append((what, value))
        self.changed.set()

    async def change_maker(self, name: str, changes: Mapping[str, Any]) -> None:
        self._note(f"maker {name}", dict(changes))

    def set_faults(self, changes: Mapping[str, Any]) -> None:
        self._note("faults", dict(changes))

    def set_limits(self, changes: Mapping[str, Any]) -> None:
        raise ValueError("limits refused")

    async def set_balance(self, target: BalanceTarget) -> None:
        self._note("balance", (target.token, str(target.amount)))


async def test_steps_run_on_the_simulator_clock_and_a_failing_step_does_not_stop_it() -> None:
    clock = Clock()
    targets = FakeTargets()
    runner = ScenarioRunner(clock, targets)
    plan = plan_from_text(
        "version: 1\nname: day\nfaults: {venue_paused: false}\n"
        "balances: [{chain: 97, wallet: '0x8f49B351160Eb48606dC0114761aaB526c18782D',"
        " token: USDT, amount: '12.5'}]\n"
        "schedule:\n"
        "  - {at: 2h, makers: {alpha: {behaviour: silent}}}\n"
        "  - {at: 1h, limits: {keyless_per_minute: 5}}\n"
    )
    run = await runner.start(plan)
    assert targets.applied == [("faults", {"venue_paused": False}), ("balance", ("USDT", "12.5"))]
    targets.changed.clear()
    await clock.advance(7200)  # both steps are due: the 1 h one first, it fails, the 2 h one runs
    await asyncio.wait_for(targets.changed.wait(), 5)
    assert targets.applied[-1] == ("maker alpha", {"behaviour": "silent"})
    assert run.errors == ["schedule.1: limits refused"]
    assert run.done == 2
    await runner.close()


async def test_names_this_simulator_does_not_have_are_400_before_anything_changes() -> None:
    targets = FakeTargets()
    runner = ScenarioRunner(Clock(), targets)
    plan = plan_from_text(
        "version: 1\nname: x\nfaults: {venue_paused: true}\nschedule:\n"
        "  - {at: 1s, makers: {zulu: {online: false}}}\n"
        "  - {at: 2s, balances: [{chain: 1, wallet: '0x8f49B351160Eb48606dC0114761aaB526c18782D',"
        " token: USDT, amount: '1'}]}\n"
    )
    with pytest.raises(InvalidRequest) as bad:
        await runner.start(plan)
    assert bad.value.details is not None
    assert [i["field"] for i in bad.value.details["issues"]] == [
        "schedule.0.makers.zulu",
        "schedule.1.balances.0.chain",
    ]
    assert targets.applied == []


@pytest.fixture
async def client() -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        await app[STATE].take_baseline()
        yield test_client


async def test_reset_over_http_puts_keys_and_faults_back(
    client: TestClient[web.Request, web.Application],
) -> None:
    app = client.app
    assert app is not None
    before = set(app[ACCESS].keys.keys)
    created = await client.post(
        "/_sim/keys", json={"environment": "test", "scopes": ["trades:read"]}
    )
    assert created.status == 201
    assert (await client.post("/_sim/faults", json={"venue_paused": True})).status == 200
    answer = await client.post("/_sim/reset")
    assert answer.status == 200
    assert set(app[ACCESS].keys.keys) == before
    assert app[ACCESS].faults.venue_paused is False
    kept = await client.post("/_sim/reset", json={"keep": ["nothing-like-this"]})
    assert kept.status == 400
    assert (await kept.json())["error"]["details"]["issues"][0]["field"] == "keep.0"
