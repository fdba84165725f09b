"""SimulatedFleet over the simulator's own maker fleet (makers.fleet.MakerFleet): reads each
member's status and reconfigures one live, turning the fleet's exceptions into the simulator's
error classes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from makers.client import MakerClientError
from makers.fleet import MakerFleet, SimulatedMaker
from simulator.errors import InvalidRequest, NotFound, UpstreamError
from simulator.services.rfq.ports import FleetMemberStatus


class MakerFleetControl:
    """`current` returns the running fleet: None until the runtime has started it (it connects
    to the API, so only once the API listens) and with the fleet disabled."""

    def __init__(self, current: Callable[[], MakerFleet | None]) -> None:
        self._current = current

    def members(self) -> list[FleetMemberStatus]:
        fleet = self._current()
        if fleet is None:
            return []
        return [_member(maker) for maker in fleet.makers.values()]

    async def reconfigure(self, name: str, changes: Mapping[str, Any]) -> None:
        fleet = self._current()
        maker = fleet.makers.get(name) if fleet is not None else None
        if maker is None:
            raise NotFound(f"No simulated maker named {name}")
        try:
            # The maker itself, not fleet.reconfigure(name, ...): a `name` among the changes
            # must be refused as a fixed field, not collide with that parameter.
            await maker.reconfigure(**changes)
        except ValidationError as exc:  # a combination the maker's config refuses
            raise InvalidRequest(
                f"Maker {name} refuses this configuration",
                details={"reason": "invalid_maker_config", "issues": _issues(exc)},
            ) from exc
        except ValueError as exc:
            raise InvalidRequest(
                f"Maker {name} refuses this configuration: {exc}",
                details={"reason": "invalid_maker_config"},
            ) from exc
        except (MakerClientError, TimeoutError) as exc:  # told to go online, could not
            raise UpstreamError(
                f"maker {name} could not reconnect: {exc}", details={"reason": "maker_unreachable"}
            ) from exc


def _issues(error: ValidationError) -> list[dict[str, Any]]:
    """The envelope's `details.issues` (as api/http/parsing.py writes them), without pydantic's
    documentation URLs."""
    issues = []
    for item in error.errors(include_url=False):
        loc = [part if isinstance(part, int) else str(part) for part in item["loc"]]
        issues.append(
            {
                "field": ".".join(str(part) for part in loc),
                "loc": loc,
                "message": item["msg"],
                "type": item["type"],
            }
        )
    return issues


def _member(maker: SimulatedMaker) -> FleetMemberStatus:
    status = maker.status()
    return FleetMemberStatus(
        name=status["name"],
        wallet=status["wallet"],
        behaviour=status["behaviour"],
        online=status["online"],
        connected=status["connected"],
        chains=status["chains"],
        live_quotes=status["live_quotes"],
        stats=status["stats"],
        config=maker.config.model_dump(mode="json", exclude={"private_key"}),
    )
