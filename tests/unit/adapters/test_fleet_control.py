"""MakerFleetControl (adapters/rfq/fleet.py): the SimulatedFleet port over a real MakerFleet whose
makers are built but not started, so nothing connects; the fleet's own exceptions come out as
the simulator's error classes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from makers.client import MakerConnectionError
from makers.config import MakerConfig
from makers.fleet import MakerFleet
from rfqkit.wallets import maker_wallet
from simulator.adapters.rfq.fleet import MakerFleetControl
from simulator.errors import InvalidRequest, NotFound, UpstreamError
from tests.unit.makers.unstarted_fleet import unstarted_fleet


@pytest.fixture
async def fleet() -> AsyncIterator[MakerFleet]:
    fleet = unstarted_fleet()
    yield fleet
    await fleet.close()


async def test_members_mirror_the_makers_status_without_the_private_key(
    fleet: MakerFleet,
) -> None:
    members = await MakerFleetControl(lambda: fleet).members()
    assert [m.name for m in members] == ["m0", "m1"]
    first = members[0]
    assert first.wallet == maker_wallet(0).address
    assert (first.behaviour, first.connected, first.chains, first.live_quotes) == (
        "normal",
        False,
        [],
        0,
    )
    assert first.config["name"] == "m0"
    assert "private_key" not in first.config


async def test_before_the_fleet_runs_there_are_no_members() -> None:
    assert await MakerFleetControl(lambda: None).members() == []


async def test_a_change_reaches_the_maker(fleet: MakerFleet) -> None:
    control = MakerFleetControl(lambda: fleet)
    await control.reconfigure("m1", {"behaviour": "silent", "spread_bps": 40.0})
    assert fleet.makers["m1"].config.behaviour == "silent"
    assert [m.behaviour for m in await control.members()] == ["normal", "silent"]


async def test_an_unknown_name_or_no_fleet_is_not_found(fleet: MakerFleet) -> None:
    with pytest.raises(NotFound):
        await MakerFleetControl(lambda: fleet).reconfigure("m9", {})
    with pytest.raises(NotFound):
        await MakerFleetControl(lambda: None).reconfigure("m0", {})


@pytest.mark.parametrize(
    "changes",
    [{"spread_bps": -1}, {"behaviour": "chaotic"}, {"name": "renamed"}],
)
async def test_values_the_maker_refuses_are_invalid_requests(
    fleet: MakerFleet, changes: dict[str, Any]
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        await MakerFleetControl(lambda: fleet).reconfigure("m0", changes)
    details = raised.value.details or {}
    assert details["reason"] == "invalid_maker_config"
    if "issues" in details:  # a pydantic refusal names the field, without pydantic's text
        assert [issue["field"] for issue in details["issues"]] == list(changes)
        assert "pydantic" not in str(details)
    assert "pydantic" not in raised.value.message
    assert fleet.makers["m0"].config.behaviour == "normal"  # nothing changed


@pytest.mark.parametrize("failure", [MakerConnectionError("refused"), TimeoutError()])
async def test_a_maker_that_cannot_reconnect_is_an_upstream_error(
    fleet: MakerFleet, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    async def fail(**changes: Any) -> MakerConfig:
        raise failure

    monkeypatch.setattr(fleet.makers["m0"], "reconfigure", fail)
    with pytest.raises(UpstreamError) as raised:
        await MakerFleetControl(lambda: fleet).reconfigure("m0", {"online": True})
    assert raised.value.details == {"reason": "maker_unreachable"}
    assert raised.value.__cause__ is failure
