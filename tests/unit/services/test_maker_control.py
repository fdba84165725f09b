"""MakerControl (/_sim/makers) over a fake SimulatedFleet: who is online on the stream, the
fleet's members, and a change handed to the fleet, whose errors pass through unchanged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from rfqkit.maker_protocol import ServerMessage
from simulator.clock import Clock
from simulator.errors import InvalidRequest, NotFound, ServiceError, UpstreamError
from simulator.services.rfq.fleet_control import MakerControl, OnlineMakerStatus
from simulator.services.rfq.makers import MakerRegistry, OnlineMaker
from simulator.services.rfq.ports import FleetMemberStatus

WALLET = "0x" + "77" * 20


class NullGateway:
    async def send(self, message: ServerMessage) -> None:
        pass

    async def close(self, code: int, reason: str) -> None:
        pass


def member(name: str, behaviour: str = "normal") -> FleetMemberStatus:
    return FleetMemberStatus(
        name=name,
        wallet=WALLET,
        behaviour=behaviour,
        online=True,
        connected=True,
        chains=[97],
        live_quotes=0,
        stats={},
        config={"name": name, "behaviour": behaviour},
    )


class FakeFleet:
    def __init__(self, *names: str) -> None:
        self.behaviours = dict.fromkeys(names, "normal")
        self.changes: list[tuple[str, dict[str, Any]]] = []
        self.error: ServiceError | None = None  # raised by the next reconfigure

    async def members(self) -> list[FleetMemberStatus]:
        return [member(name, behaviour) for name, behaviour in self.behaviours.items()]

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        self.changes.append((name, dict(changes)))
        if self.error is not None:
            raise self.error
        if name not in self.behaviours:
            raise NotFound(f"No simulated maker named {name}")
        self.behaviours[name] = changes.get("behaviour", self.behaviours[name])


@pytest.fixture
def registry() -> MakerRegistry:
    return MakerRegistry(Clock())


async def test_status_lists_the_online_makers_and_their_fresh_pairs(
    registry: MakerRegistry,
) -> None:
    maker = OnlineMaker("tx_test_1", WALLET, "test", NullGateway(), connected_at=1_795_500_000.0)
    registry.connect(maker)
    registry.set_levels(maker, (97, "0xa", "0xb"), [(10, 15)])
    registry.set_levels(maker, (97, "0xb", "0xa"), [(15, 10)])
    maker.levels[(97, "0xb", "0xa")] = ([(15, 10)], 0.0)  # published long ago: stale
    status = await MakerControl(registry, FakeFleet("m0", "m1")).status()
    assert status.online == [
        OnlineMakerStatus("tx_test_1", WALLET, "test", 1_795_500_000.0, pairs_with_levels=1)
    ]
    assert [m.name for m in status.fleet] == ["m0", "m1"]


async def test_without_a_fleet_running_there_are_no_members(registry: MakerRegistry) -> None:
    status = await MakerControl(registry, FakeFleet()).status()
    assert (status.online, status.fleet) == ([], [])


async def test_a_change_goes_to_the_fleet_and_the_new_state_comes_back(
    registry: MakerRegistry,
) -> None:
    fleet = FakeFleet("m0", "m1")
    status = await MakerControl(registry, fleet).change("m1", {"behaviour": "silent"})
    assert fleet.changes == [("m1", {"behaviour": "silent"})]
    assert [(m.name, m.behaviour) for m in status.fleet] == [("m0", "normal"), ("m1", "silent")]


@pytest.mark.parametrize(
    "error",
    [
        NotFound("No simulated maker named m9"),
        InvalidRequest("spread_bps: must be >= 0", details={"reason": "invalid_maker_config"}),
        UpstreamError("maker m0 could not reconnect", details={"reason": "maker_unreachable"}),
    ],
)
async def test_the_fleets_errors_pass_through(registry: MakerRegistry, error: ServiceError) -> None:
    fleet = FakeFleet("m0")
    fleet.error = error
    with pytest.raises(type(error)) as raised:
        await MakerControl(registry, fleet).change("m0", {"online": True})
    assert raised.value is error
