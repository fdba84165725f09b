"""SimulatedFleet over the simulator's own maker fleet (makers.fleet.MakerFleet) in this process:
reads each member's status and reconfigures one live, turning the fleet's refusals
(makers/control.py ControlError) into the simulator's error classes. The fleet in a process of
its own is behind the same port in adapters/rfq/fleet_process.py, with the same mapping."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from makers.control import (
    INVALID_CONFIG,
    INVALID_VALUE,
    NOT_FOUND,
    ControlError,
    member_status,
    reconfigure_maker,
)
from makers.fleet import MakerFleet
from simulator.errors import InvalidRequest, NotFound, ServiceError, UpstreamError
from simulator.services.rfq.ports import FleetMemberStatus


class MakerFleetControl:
    """`current` returns the running fleet: None until the runtime has started it (it connects
    to the API, so only once the API listens) and with the fleet disabled."""

    def __init__(self, current: Callable[[], MakerFleet | None]) -> None:
        self._current = current

    async def members(self) -> list[FleetMemberStatus]:
        fleet = self._current()
        if fleet is None:
            return []
        return [member_from_json(member_status(maker)) for maker in fleet.makers.values()]

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        try:
            await reconfigure_maker(self._current(), name, changes)
        except ControlError as exc:  # chained to what the maker raised, as the refusal's cause
            raise fleet_error(name, exc) from (exc.__cause__ or exc)


def fleet_error(name: str, error: ControlError) -> ServiceError:
    """The error /_sim/makers/{name} answers for a refusal of maker `name`: 404 for a maker the
    fleet does not have, 400 invalid_maker_config (with details.issues when the maker's config
    named them), 502 maker_unreachable for a maker that could not reconnect (or a fleet that
    could not be asked)."""
    if error.kind == NOT_FOUND:
        return NotFound(f"No simulated maker named {name}")
    if error.kind == INVALID_CONFIG:
        return InvalidRequest(
            f"Maker {name} refuses this configuration",
            details={"reason": "invalid_maker_config", "issues": error.issues or []},
        )
    if error.kind == INVALID_VALUE:
        return InvalidRequest(
            f"Maker {name} refuses this configuration: {error.message}",
            details={"reason": "invalid_maker_config"},
        )
    return UpstreamError(
        f"maker {name} could not reconnect: {error.message}",
        details={"reason": "maker_unreachable"},
    )


def member_from_json(data: Mapping[str, Any]) -> FleetMemberStatus:
    """One member from makers.control.member_status's shape (as the child process sends it)."""
    return FleetMemberStatus(
        name=str(data["name"]),
        wallet=str(data["wallet"]),
        behaviour=str(data["behaviour"]),
        online=bool(data["online"]),
        connected=bool(data["connected"]),
        chains=[int(c) for c in data["chains"]],
        live_quotes=int(data["live_quotes"]),
        stats=dict(data["stats"]),
        config=dict(data["config"]),
    )
