"""The venue's configuration seen alike by every instance: what an integrator sets up at one
instance (API keys and partners, the limits) is used at any. One instance alone has nothing to
share: the app then holds no replica."""

from __future__ import annotations

from typing import Protocol


class ConfigurationReplica(Protocol):
    """This instance's copy of the venue's configuration (adapters/redis/configuration.py)."""

    @property
    def parts(self) -> tuple[str, ...]:
        """The state participants it shares (what a reset repeated here leaves as the venue's
        first instance made it)."""
        ...

    def join(self) -> None:
        """At start-up, once this instance made its keys: add what only it has, then take the
        venue's."""
        ...

    async def publish(self) -> None:
        """Send the others what this instance changed (after an operation that changes the
        configuration answered)."""
        ...

    async def refresh(self) -> bool:
        """Take the venue's configuration now (a key this instance does not know may have
        been created at another a moment ago); True when anything changed here."""
        ...
