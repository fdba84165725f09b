"""Configuration that survives a crash. With a state directory the JSON of every participant
is written at stop only; what an integrator set up and cannot recreate by replaying traffic
(API keys, per-key limits, webhook endpoints) is also written to the history file whenever it
changes, at most `state.durable_interval_s` later, so a killed simulator comes back with it.

Each tick dumps those few participants (small: dozens of keys and endpoints), compares each
dump's JSON text with what was last written, and writes only what differs. At start-up the
rows are put back after the JSON of the last stop (they are never older than it: the stop
writes them too). After a load of the history file (a reset, a snapshot restored) what the
file holds is no longer what was written last, so everything is written again on the next
tick (`forget_written`)."""

from __future__ import annotations

import json
from typing import Any, Protocol

from simulator.services.shared.state import StateRegistry

DURABLE_PARTS = ("access.keys", "access.limits", "webhooks.registry")


class DurableRows(Protocol):
    """Where the rows live (adapters/store/durable_rows.py: a table of the history file)."""

    def put(self, name: str, state_json: str) -> None: ...

    def all(self) -> dict[str, str]: ...


def _text(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"))


class DurableConfiguration:
    def __init__(
        self, registry: StateRegistry, rows: DurableRows, names: tuple[str, ...] = DURABLE_PARTS
    ) -> None:
        self._registry = registry
        self._rows = rows
        self._names = names
        self._written: dict[str, str] = {}  # name -> the JSON text last written
        # Nothing is written before the rows were read back (`resume`): a write at start-up
        # would replace what a crashed run left with the state of a simulator not yet loaded.
        self._resumed = False

    def save_changed(self) -> list[str]:
        """Write every part whose state differs from what was last written (nothing before
        `resume`); returns their names."""
        changed: list[str] = []
        if not self._resumed:
            return changed
        for name, state in self._registry.dump_of(self._names).items():
            text = _text(state)
            if self._written.get(name) != text:
                self._rows.put(name, text)
                self._written[name] = text
                changed.append(name)
        return changed

    def forget_written(self) -> None:
        self._written.clear()

    def saved(self) -> dict[str, dict[str, Any]]:
        """What the rows hold, for the parts registered here (read at start-up)."""
        return {
            name: json.loads(text)
            for name, text in self._rows.all().items()
            if name in self._names and name in self._registry
        }

    def resume(self) -> list[str]:
        """Put the rows back into their participants (each read with its schema first: a
        row the schema refuses raises StateFormatError before anything changes); returns the
        names put back."""
        saved = self.saved()
        self._registry.check(saved)
        self._registry.load(saved)
        self._written = {name: _text(state) for name, state in saved.items()}
        self._resumed = True
        return sorted(saved)
