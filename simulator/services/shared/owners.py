"""Which instance holds a record (docs/scaling.md "One venue behind one address"): the instance
that creates an RFQ keeps its record and says so (`claim`, confirmed before the record is named
in an answer); a request for it that lands at another instance asks `owner` and is served where
the record is. The holder also keeps a copy of the record at each change (`keep`), so if it
dies the instance a request for the record reaches takes it over (`take_over`), and the venue's
first instance takes over the records it left live (`orphans`: those not yet at rest, which
time or a fill still moves on). One process holds everything it made (`SoleOwner`); several
instances share the answer through the engine (adapters/redis/owners.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Generator
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

    def keep(self, record_id: str, copy: Callable[[], bytes], live: bool) -> Awaitable[None]:
        """Keep `copy()` of the record as it is now, for the instance that takes it over if
        this one dies, `live` when time or a fill still moves it on (listed among this
        instance's live records until `rest` or a later copy at rest): sent at once,
        confirmed when awaited."""
        ...

    def rest(self, record_id: str) -> None:
        """The record came to rest here without a copy (it expired, or failed): no longer
        among this instance's live records. Sent at once, not awaited."""
        ...

    async def take_over(self, record_id: str, holder: int) -> bytes | None:
        """The record's last copy, this instance its holder from now, if `holder` (gone)
        still held it; None otherwise (another instance took it over first, or no copy).
        Either way the record leaves the live records of `holder`."""
        ...

    async def orphans(self, alive: Collection[int]) -> list[tuple[int, str]]:
        """Live records of instances not in `alive`: (holder, record id), a batch of each
        holder's (the next call lists more once these are taken over)."""
        ...

    def forget_live(self) -> None:
        """This instance's records were replaced (reset, restore): none of those it listed
        as live is any more. Sent at once, not awaited."""
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

    def keep(self, record_id: str, copy: Callable[[], bytes], live: bool) -> Awaitable[None]:
        return _Confirmed()

    def rest(self, record_id: str) -> None:
        pass

    async def take_over(self, record_id: str, holder: int) -> bytes | None:
        return None

    async def orphans(self, alive: Collection[int]) -> list[tuple[int, str]]:
        return []

    def forget_live(self) -> None:
        pass
