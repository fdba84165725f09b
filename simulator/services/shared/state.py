"""What reset, snapshots and `--state-dir` work on: each area registers its state participants.

A `StateParticipant` is one named piece of state that can be written out (`dump`, JSON-able) and
put back (`load`). Both are synchronous on purpose: the state control (services/sim/state.py)
loads every participant in one go, with no await in between, so no request or background task
ever sees half of the simulator restored. A new area adds its participants in its
`runtime/<area>.py`; nothing here lists the areas.

`AttributeState` covers nearly every case: it names the attributes of one object that hold its
state (the stores' fields, a service's dicts and heaps) and writes them through the codec;
`load` replaces them in place, so every service holding that object sees the restored state."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from simulator.services.shared.state_codec import StateCodecError, decode, encode


class StateParticipant(Protocol):
    name: str  # unique, dotted by area ("rfq.store", "access.keys", ...)

    def dump(self) -> dict[str, Any]:
        """The state as JSON-able data."""
        ...

    def load(self, state: dict[str, Any]) -> None:
        """Put back what `dump` returned (synchronously: no await)."""
        ...


class AttributeState:
    """The named attributes of `owner` (its state; locks, sessions and callbacks stay out)."""

    def __init__(
        self,
        name: str,
        owner: object,
        attributes: Iterable[str],
        *,
        after_load: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self._owner = owner
        self._attributes = tuple(attributes)
        self._after_load = after_load  # e.g. wake a worker whose queue was replaced

    @classmethod
    def of(
        cls,
        name: str,
        owner: object,
        *,
        exclude: Iterable[str] = (),
        after_load: Callable[[], None] | None = None,
    ) -> AttributeState:
        """The attributes the owner's class lists in `STATE_ATTRIBUTES`, else (a dataclass
        store) all its fields but `exclude`."""
        listed: tuple[str, ...] | None = getattr(type(owner), "STATE_ATTRIBUTES", None)
        if listed is None:
            if not dataclasses.is_dataclass(owner):
                raise TypeError(f"{type(owner).__name__} lists no STATE_ATTRIBUTES")
            skip = set(exclude)
            listed = tuple(f.name for f in dataclasses.fields(owner) if f.name not in skip)
        return cls(name, owner, listed, after_load=after_load)

    def dump(self) -> dict[str, Any]:
        return {
            attr: encode(getattr(self._owner, attr), f"{self.name}.{attr}")
            for attr in self._attributes
        }

    def load(self, state: dict[str, Any]) -> None:
        missing = [attr for attr in self._attributes if attr not in state]
        if missing:
            raise StateCodecError(f"{self.name}: the state has no {', '.join(missing)}")
        decoded = {attr: decode(state[attr]) for attr in self._attributes}  # all or nothing
        for attr, value in decoded.items():
            setattr(self._owner, attr, value)
        if self._after_load is not None:
            self._after_load()


class ForgetOnLoad:
    """State that is not saved but must not outlive a reset or restore: caches of answers
    built from the old state, the request journal, a running scenario. `dump` is empty; `load`
    calls `forget`."""

    def __init__(self, name: str, forget: Callable[[], None]) -> None:
        self.name = name
        self._forget = forget

    def dump(self) -> dict[str, Any]:
        return {}

    def load(self, state: dict[str, Any]) -> None:
        self._forget()


class StateRegistry:
    """Every participant of the running simulator, in registration order."""

    def __init__(self) -> None:
        self._participants: dict[str, StateParticipant] = {}  # by name

    def register(self, *participants: StateParticipant) -> None:
        for participant in participants:
            if participant.name in self._participants:
                raise ValueError(f"state participant {participant.name!r} registered twice")
            self._participants[participant.name] = participant

    def unregister(self, name: str) -> None:
        self._participants.pop(name, None)

    @property
    def names(self) -> list[str]:
        return list(self._participants)

    def dump(self) -> dict[str, dict[str, Any]]:
        return {name: p.dump() for name, p in self._participants.items()}

    def load(self, state: dict[str, dict[str, Any]], *, keep: Iterable[str] = ()) -> None:
        """Put back every participant's state, except those whose name starts with a prefix in
        `keep` (a reset that keeps the webhook registry). Decoding happens before anything is
        replaced where a participant allows it; a participant missing from `state` is left as
        it is (a snapshot older than an area added later)."""
        kept = tuple(keep)
        for name, participant in self._participants.items():
            if name.startswith(kept) and kept:
                continue
            if name in state:
                participant.load(state[name])
