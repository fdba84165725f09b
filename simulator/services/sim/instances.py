"""The instances of the venue, as /_sim/info and the ready file list them: one process alone,
or every instance alive on the shared engine (adapters/redis/roster.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class InstanceEntry:
    id: int  # its number on the venue (0 for the first; a single process is 0)
    pid: int
    api_url: str  # where it listens itself


class InstanceRoster(Protocol):
    def here(self, api_url: str) -> None:
        """This instance listens at `api_url` now."""
        ...

    async def instances(self) -> list[InstanceEntry]:
        """The instances alive, by id."""
        ...


class SoleInstance:
    """The roster of one process."""

    def __init__(self) -> None:
        self._api_url = ""

    def here(self, api_url: str) -> None:
        self._api_url = api_url

    async def instances(self) -> list[InstanceEntry]:
        return [InstanceEntry(id=0, pid=os.getpid(), api_url=self._api_url)]


def serving_instance(placement: str, here: int, alive: list[int], owner: int | None = None) -> int:
    """Which instance serves a request that reached instance `here` (api/http/routes.py
    `Placement`): the owner of its record if that one is alive (a record nobody holds any
    more, or whose instance died, is answered here: not found), the first instance alive for
    what only it holds (itself when the list does not have it yet), else `here`."""
    if placement == "owner":
        return owner if owner is not None and owner in alive else here
    if placement in ("primary", "every"):
        return min(alive) if alive else here
    return here
