"""Several instances: the venue keeps one request journal, its first instance's, so
`/_sim/requests` and the console show every request whichever instance served it (each entry's
response headers name that instance, `X-Rfqsim-Instance`). An instance that is not the first
sends what it served there (`POST /_venue/journal`, which only the venue's instances may call);
a read of the journal first asks every instance to send what it holds (`flush`), so a request
answered before the read is in it. At the first instance an entry is recorded at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from simulator.adapters.sim.to_first_instance import ToFirstInstance
from simulator.services.sim.instances import InstanceEntry
from simulator.services.sim.journal import RequestJournal
from simulator.services.sim.journal_transfer import transferred


def _record(journal: RequestJournal, fields: dict[str, Any]) -> None:
    journal.record_here(**fields)


class JournalToFirstInstance:
    """The JournalRelay of an instance of several."""

    def __init__(
        self,
        journal: RequestJournal,
        here: int,
        first_known: Callable[[], int | None],
        first: Callable[[], Awaitable[InstanceEntry | None]],
        headers: Callable[[], Mapping[str, str]],
        path: str,
    ) -> None:
        self._journal = journal
        self._here = here
        self._first_known = first_known  # the first instance, if known without asking
        self._batches = ToFirstInstance(
            partial(_record, journal), transferred, here, first, headers, path, "journal entries"
        )

    def relay(self, fields: dict[str, Any]) -> None:
        if self._batches.idle and self._first_known() == self._here:
            self._journal.record_here(**fields)
        else:
            self._batches.put(fields)

    async def flush(self) -> None:
        await self._batches.flush()

    async def aclose(self) -> None:
        await self._batches.aclose()
