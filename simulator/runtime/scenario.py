"""The scenario runner's wiring: its targets are the areas' own controls (the same calls
/_sim/makers, /_sim/faults and /_sim/limits make) and the chains' balances; a cleanup context
stops a running scenario on shutdown; `--scenario FILE` is started once the simulator is ready."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from aiohttp import web

from simulator.adapters.chain.balances import set_native_balance, set_token_balance
from simulator.api.http.appkeys import ACCESS, CHAINS, RFQ, SCENARIOS, VENUE
from simulator.api.sim.scenario_files import plan_from_text
from simulator.clock import Clock
from simulator.runtime.makers import FLEET
from simulator.services.access.admin import replace_limits
from simulator.services.sim.ports import NATIVE, BalanceTarget, ScenarioTargets
from simulator.services.sim.scenario import ScenarioPlan, ScenarioRunner


class AppScenarioTargets:
    def __init__(self, app: web.Application) -> None:
        self._app = app

    def maker_names(self) -> list[str]:
        return self._app[FLEET].names()

    def tokens(self, chain_id: int) -> set[str] | None:
        venue = self._app[VENUE].chains.get(chain_id)
        if venue is None:
            return None
        return {t.symbol for t in venue.tokens} | {NATIVE}

    async def change_maker(self, name: str, changes: Mapping[str, Any]) -> None:
        await self._app[RFQ].maker_control.change(name, changes)

    def set_faults(self, changes: Mapping[str, Any]) -> None:
        self._app[ACCESS].faults.update(**changes)

    def set_limits(self, changes: Mapping[str, Any]) -> None:
        update = {k: v for k, v in changes.items() if k != "reset_windows"}
        replace_limits(self._app[ACCESS], update, reset_windows=bool(changes.get("reset_windows")))

    async def set_balance(self, target: BalanceTarget) -> None:
        chain = self._app[CHAINS][target.chain_id]
        if target.token == NATIVE:
            await set_native_balance(chain, target.wallet, int(target.amount * 10**18))
            return
        token = next(
            t for t in self._app[VENUE].chains[target.chain_id].tokens if t.symbol == target.token
        )
        units = int(target.amount * Decimal(10) ** token.decimals)
        await set_token_balance(chain, token.address, target.wallet, units)


def build_scenarios(clock: Clock, targets: ScenarioTargets) -> ScenarioRunner:
    """The runner over what a scenario may change (`AppScenarioTargets` in the app)."""
    return ScenarioRunner(clock, targets)


async def scenario_context(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[SCENARIOS].close()


def read_scenario_file(path: Path) -> ScenarioPlan:
    """`rfqsim serve --scenario FILE`, read and checked against the schema before start-up;
    InvalidRequest (its details.issues name the paths) when it does not pass."""
    return plan_from_text(path.read_text(encoding="utf-8"))
