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

    @property
    def writer_pid(self) -> int | None:
        """The process that writes the file (None before the first write and after close)."""
        ...

    queued: int  # writes handed to the writer so far
    committed: int  # of those, committed to the file

    def close(self) -> None:
        """Commit what is queued and stop writing (a temporary file is removed)."""
        ...
