"""What the state control needs from outside the services: the chains' own state and the
simulated maker fleet (both live in other processes or sessions)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol


class ChainStates(Protocol):
    """Every chain's state (adapters/chain/snapshots.py, over Anvil's RPC)."""

    async def mark(self) -> dict[int, str]:
        """A cheap in-node snapshot per chain (`evm_snapshot`): chain id -> its id."""
        ...

    async def revert(self, marks: dict[int, str]) -> dict[int, str]:
        """Back to those marks (each is used up by it); returns a fresh mark of the same
        state per chain, so the same point can be returned to again."""
        ...

    async def export(self) -> dict[int, str]:
        """The whole state of every chain (`anvil_dumpState`): chain id -> opaque text."""
        ...

    async def import_state(self, states: dict[int, str]) -> None:
        """Load an exported state into every chain (on top of the reverted baseline: an export
        holds every account the venue ever touched, blocks and receipts included)."""
        ...

    async def follow_clock(self) -> None:
        """Bring every chain's block time up to the (restored) service clock's: no block mined
        from now on is stamped before the service clock's whole second."""
        ...


class FleetRestart(Protocol):
    """The simulated makers: stopped while state changes under them, started again after (they
    reconnect, as an integrator's bot would after a restart)."""

    async def stop(self) -> None: ...

    async def start(self, *, fresh_nonces: bool) -> None:
        """`fresh_nonces`: the chains remember orders signed since start-up (a restore), so
        the makers must not sign with the nonces they used then."""
        ...


@dataclass(frozen=True)
class BalanceTarget:
    chain_id: int
    wallet: str
    token: str  # a token symbol of that chain, or the native coin (NATIVE)
    amount: Decimal  # whole units: the balance becomes exactly this


NATIVE = "ETH"  # the symbol a scenario uses for a chain's native coin


class ScenarioTargets(Protocol):
    """What a scenario changes (runtime/scenario.py, over the areas' own controls)."""

    def maker_names(self) -> list[str]: ...

    def tokens(self, chain_id: int) -> set[str] | None:
        """The symbols a balance may name on that chain (NATIVE among them); None: no chain."""
        ...

    async def change_maker(self, name: str, changes: Mapping[str, Any]) -> None: ...

    def set_faults(self, changes: Mapping[str, Any]) -> None: ...

    def set_limits(self, changes: Mapping[str, Any]) -> None: ...

    async def set_balance(self, target: BalanceTarget) -> None: ...
