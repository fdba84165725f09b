"""The rows of services/sim/durable.py (`DurableRows`): one per participant, its state as JSON,
in the history file's `durable_state` table. A put is queued to the file's writer like every
other write (committed within its batch); a reset's `clear` of the history leaves this table
alone: the configuration follows the participants, which write it again after a load."""

from __future__ import annotations

from simulator.adapters.store.history_db import HistoryDb

_PUT = "INSERT OR REPLACE INTO durable_state (name, state) VALUES (?, ?)"


class SqliteDurableRows:
    def __init__(self, db: HistoryDb) -> None:
        self.db = db

    def put(self, name: str, state_json: str) -> None:
        self.db.write(_PUT, (name, state_json))

    def all(self) -> dict[str, str]:
        self.db.flush()  # what was queued is read back too
        return {str(n): str(s) for n, s in self.db.read("SELECT name, state FROM durable_state")}
