"""Which instance holds a record (docs/scaling.md "One venue behind one address"): the instance
that creates an RFQ keeps its record and says so (`claim`, confirmed before the record is named
in an answer); a request for it that lands at another instance asks `owner` and is served where
the record is. One process holds everything it made (`SoleOwner`); several instances share the
answer through the engine (adapters/redis/owners.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from typing import Any, Protocol


class RecordOwners(Protocol):
    def claim(self, record_id: str) -> Awaitable[None]:
        """This instance holds `record_id` from now: sent at once, confirmed when awaited (await
        it before an answer names the record, so any instance finds it then)."""
        ...

    async def owner(self, record_id: str) -> int | None:
        """The instance that holds `record_id`, or None when no instance claimed it (it does
        not exist, or was forgotten)."""
        ...


class _Confirmed:
    """Awaited at once (and harmless never awaited: a request that failed first)."""

    def __await__(self) -> Generator[Any, None, None]:
        yield from ()


class SoleOwner:
    """One process: every record it made is its own; nothing to tell anyone."""

    def claim(self, record_id: str) -> Awaitable[None]:
        return _Confirmed()

    async def owner(self, record_id: str) -> int | None:
        return None
