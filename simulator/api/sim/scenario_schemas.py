"""The scenario file (`rfqsim serve --scenario FILE`, POST /_sim/scenarios): its one definition.

The same models validate a file and write its published JSON schema
(docs/schemas/scenario.schema.json, GET /_sim/scenarios/schema; `python -m
simulator.api.sim.scenario_schemas` prints it). Unknown keys are refused everywhere, so a typo
is an error naming its path, never a silently ignored line."""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, WithJsonSchema

from simulator.api.access.control_schemas import FaultUpdate, LimitsUpdate
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.api.rfq.control import MakerChange

SCHEMA_ID = "https://rfqsim.local/schemas/scenario.schema.json"
_OFFSET = re.compile(r"^\+?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?$")
MAX_OFFSET_S = 30 * 86_400  # a month of simulator time


def offset_seconds(value: Any) -> Any:
    """`30`, `"30s"`, `"+2m"`, `"1h30m"` -> seconds; anything else is left for the schema to
    refuse with its own message."""
    if isinstance(value, bool):
        raise ValueError("a time offset is a number of seconds or like 30s, 2m, 1h30m")
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            raise ValueError("a time offset is a finite number of seconds, not negative")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("a time offset is a number of seconds or like 30s, 2m, 1h30m")
    match = _OFFSET.match(value.strip())
    if match is None or not any(match.groups()):
        raise ValueError(f"{value!r} is not a time offset like 30s, 2m, 1h30m or +90s")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def _bounded(seconds: Any) -> Any:
    seconds = offset_seconds(seconds)
    if isinstance(seconds, float) and seconds > MAX_OFFSET_S:
        raise ValueError(f"a time offset is at most {MAX_OFFSET_S} s (30 days)")
    return seconds


TimeOffset = Annotated[
    float,
    BeforeValidator(_bounded),
    WithJsonSchema(
        {
            "description": "Simulator time after the scenario starts: seconds, or 30s, 2m, "
            "1h30m, +90s (at most 30 days)",
            "anyOf": [
                {"type": "number", "minimum": 0, "maximum": MAX_OFFSET_S},
                {"type": "string", "pattern": r"^\+?([0-9]+h)?([0-9]+m)?([0-9]+s)?$"},
            ],
        }
    ),
]


class BalanceSetting(ApiModel):
    chain: int = Field(description="Chain id")
    wallet: str = Field(pattern=r"^0x[0-9a-fA-F]{40}$")
    token: str = Field(
        pattern=r"^[A-Za-z0-9]{1,16}$", description="Token symbol, or the chain's native coin: ETH"
    )
    amount: str = Field(
        pattern=r"^(0|[1-9][0-9]{0,30})(\.[0-9]{1,18})?$",
        description="Whole units (decimals allowed): the balance is set to exactly this",
    )


class Changes(ApiModel):
    """What a scenario sets, at its start or at a step."""

    makers: dict[str, MakerChange] | None = Field(
        default=None, description="Simulated makers by name (alpha, bravo, ...): as /_sim/makers"
    )
    faults: FaultUpdate | None = Field(default=None, description="As POST /_sim/faults")
    limits: LimitsUpdate | None = Field(default=None, description="As PUT /_sim/limits")
    balances: list[BalanceSetting] | None = None


class Step(Changes):
    at: TimeOffset
    note: str | None = Field(default=None, max_length=500, description="Shown in the log")


class Scenario(Changes):
    model_config = ConfigDict(
        extra="forbid",
        title="rfqsim scenario",
        json_schema_extra={
            "$id": SCHEMA_ID,
            "$schema": "https://json-schema.org/draft/2020-12/schema",
        },
    )

    version: Literal[1] = Field(description="The file format's version")
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str | None = Field(default=None, max_length=2000)
    schedule: list[Step] = Field(
        default_factory=list, max_length=1000, description="Changes at times, in any order"
    )


class ScenarioStatus(SnakeApiModel):
    name: str | None = Field(description="The running scenario; null when none runs")
    started_at: str | None = Field(description="Simulator time it started")
    steps_done: int
    steps_pending: int
    next_at: str | None = Field(description="Simulator time of the next step")
    errors: list[str] = Field(description="Steps that failed (the scenario went on)")


def published_schema() -> dict[str, Any]:
    return Scenario.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(published_schema(), indent=2))
