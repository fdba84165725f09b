"""Scenarios: a file that sets the maker fleet, balances, limits and faults, and schedules more
of the same on the simulator clock, so a bug seen once is reproduced by anyone with one file.

The runner applies the start's changes at once (a failure there fails the request: nothing is
half set up silently), then sleeps on the simulator clock until each step is due (advancing the
clock fast-forwards a scenario) and applies it; a failing step is logged and listed in the
status, and the steps after it still run. One scenario at a time: starting one stops the last.
A reset or restore stops it too (its schedule belongs to the state that is gone)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simulator.clock import Clock
from simulator.errors import InvalidRequest
from simulator.services.sim.ports import BalanceTarget, ScenarioTargets

log = logging.getLogger("rfqsim.scenario")


@dataclass(frozen=True)
class ChangeSet:
    makers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # name -> changes
    faults: Mapping[str, Any] | None = None  # as POST /_sim/faults
    limits: Mapping[str, Any] | None = None  # as PUT /_sim/limits
    balances: tuple[BalanceTarget, ...] = ()


@dataclass(frozen=True)
class PlannedStep:
    at_s: float  # simulator seconds after the start
    changes: ChangeSet
    note: str | None
    where: str  # its path in the file ("schedule.2"), for errors


@dataclass(frozen=True)
class ScenarioPlan:
    name: str
    initial: ChangeSet
    steps: tuple[PlannedStep, ...]  # in time order


@dataclass
class RunState:
    plan: ScenarioPlan
    started_at: float  # simulator time
    done: int = 0  # steps applied (or failed)
    errors: list[str] = field(default_factory=list)  # "schedule.2: why"


def _issue(path: str, message: str) -> dict[str, Any]:
    loc: list[str | int] = [int(p) if p.isdigit() else p for p in path.split(".")]
    return {"field": path, "loc": loc, "message": message, "type": "value_error"}


class ScenarioRunner:
    def __init__(self, clock: Clock, targets: ScenarioTargets) -> None:
        self._clock = clock
        self._targets = targets
        self.current: RunState | None = None  # the running (or last finished) scenario
        self._task: asyncio.Task[None] | None = None  # sleeps until each step is due

    def check(self, plan: ScenarioPlan) -> None:
        """Names the file cannot know are right (maker names, chains, tokens): checked against
        this simulator before anything changes; 400 with details.issues naming each path."""
        issues: list[dict[str, Any]] = []
        makers = set(self._targets.maker_names())
        for where, changes in [("", plan.initial), *((s.where, s.changes) for s in plan.steps)]:
            prefix = f"{where}." if where else ""
            for name in changes.makers:
                if name not in makers:
                    known = ", ".join(sorted(makers)) or "none (started with --no-makers)"
                    issues.append(
                        _issue(f"{prefix}makers.{name}", f"no simulated maker {name}: {known}")
                    )
            for index, target in enumerate(changes.balances):
                tokens = self._targets.tokens(target.chain_id)
                path = f"{prefix}balances.{index}"
                if tokens is None:
                    issues.append(_issue(f"{path}.chain", f"no chain {target.chain_id} runs"))
                elif target.token not in tokens:
                    issues.append(
                        _issue(f"{path}.token", f"chain {target.chain_id} has no {target.token}")
                    )
        if issues:
            raise InvalidRequest(
                "The scenario does not fit this simulator", details={"issues": issues}
            )

    async def start(self, plan: ScenarioPlan) -> RunState:
        self.check(plan)
        self.stop()
        await self._apply(plan.initial)
        run = RunState(plan, self._clock.time())
        self.current = run
        self._task = asyncio.create_task(self._run(run), name=f"scenario-{plan.name}")
        log.info("scenario %s started: %d step(s) scheduled", plan.name, len(plan.steps))
        return run

    def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            if self.current is not None:
                log.info("scenario %s stopped", self.current.plan.name)
        self._task = None

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def next_at(self) -> float | None:
        run = self.current
        if run is None or run.done >= len(run.plan.steps) or self._task is None:
            return None
        return run.started_at + run.plan.steps[run.done].at_s

    async def _run(self, run: RunState) -> None:
        for step in run.plan.steps:
            await self._clock.sleep_until(run.started_at + step.at_s)
            try:
                await self._apply(step.changes)
                log.info(
                    "scenario %s: %s%s",
                    run.plan.name,
                    step.where,
                    f" ({step.note})" if step.note else "",
                )
            except Exception as exc:  # a step that fails must not end the schedule
                log.warning("scenario %s: %s failed: %s", run.plan.name, step.where, exc)
                run.errors.append(f"{step.where}: {exc}")
            run.done += 1

    async def _apply(self, changes: ChangeSet) -> None:
        if changes.faults is not None:
            self._targets.set_faults(changes.faults)
        if changes.limits is not None:
            self._targets.set_limits(changes.limits)
        for name, maker_changes in changes.makers.items():
            await self._targets.change_maker(name, maker_changes)
        for target in changes.balances:
            await self._targets.set_balance(target)

    def forget(self) -> None:
        """A reset or restore: the schedule belongs to the state that is gone."""
        self.stop()
        self.current = None
