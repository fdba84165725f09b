"""The history database as the rest of the simulator sees it (adapters/store/history_db.py):
where its file is and how large it has grown, for GET /_sim/runtime and the soak bench."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class HistoryFile(Protocol):
    @property
    def path(self) -> Path: ...

    def size_bytes(self) -> int:
        """The file and its write-ahead log, as on disk."""
        ...

    def close(self) -> None:
        """Commit what is queued and stop writing (a temporary file is removed)."""
        ...
