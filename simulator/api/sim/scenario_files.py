"""Reading a scenario file: YAML (or JSON, which is YAML) -> the published schema's models ->
the runner's plan. Every failure is 400 `invalid_request` with `details.issues`, each naming the
path in the file (`schedule.1.at`, `makers.delta.behaviour`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import yaml
from pydantic import ValidationError

from rfqkit.validation_issues import issues_from
from simulator.api.sim.scenario_schemas import Changes, Scenario
from simulator.errors import InvalidRequest
from simulator.services.sim.ports import BalanceTarget
from simulator.services.sim.scenario import ChangeSet, PlannedStep, ScenarioPlan


def _yaml_issue(exc: yaml.YAMLError) -> dict[str, Any]:
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return {"field": "", "loc": [], "message": f"{where}{problem}", "type": "yaml_syntax"}


def parse_scenario(text: str) -> Scenario:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InvalidRequest(
            "The scenario is not valid YAML", details={"issues": [_yaml_issue(exc)]}
        ) from exc
    if not isinstance(document, dict):
        raise InvalidRequest(
            "A scenario is a mapping (version, name, schedule, ...)",
            details={
                "issues": [
                    {"field": "", "loc": [], "message": "not a mapping", "type": "dict_type"}
                ]
            },
        )
    try:
        return Scenario.model_validate(document)
    except ValidationError as exc:
        raise InvalidRequest(
            "The scenario failed validation", details={"issues": issues_from(exc)}
        ) from exc


def _changes(changes: Changes) -> ChangeSet:
    return ChangeSet(
        makers={
            name: change.model_dump(exclude_none=True)
            for name, change in (changes.makers or {}).items()
        },
        faults=changes.faults.model_dump(exclude_none=True) if changes.faults else None,
        limits=changes.limits.model_dump(exclude_none=True) if changes.limits else None,
        balances=tuple(
            BalanceTarget(b.chain, b.wallet, b.token, Decimal(b.amount))
            for b in changes.balances or ()
        ),
    )


def plan_of(scenario: Scenario) -> ScenarioPlan:
    steps = sorted(
        (
            PlannedStep(step.at, _changes(step), step.note, f"schedule.{index}")
            for index, step in enumerate(scenario.schedule)
        ),
        key=lambda step: step.at_s,  # stable: steps at one time run in file order
    )
    return ScenarioPlan(scenario.name, _changes(scenario), tuple(steps))


def plan_from_text(text: str) -> ScenarioPlan:
    return plan_of(parse_scenario(text))
