"""The venue's configuration on the shared engine: API keys and partners, the limits in force
and the webhook endpoints, created or changed at one instance and used at any.

Kept per entry where a part is a collection (each key and each partner its own hash field, so
two instances creating a key each at the same moment both keep theirs) and whole otherwise (the
limits: the last change wins). After an operation that changes the configuration answers, its
instance writes what differs from what it last saw and publishes the part's name; every other
instance reloads that part (keeping the entries it made and has not published yet). An
instance that does not know a presented key reads the store before answering 401 (the key may
have been created at another instance a moment ago). An instance joining takes the venue's
configuration, after adding the entries only it has.

Keys, under the engine's prefix plus `config:`: `<part>:<field>` hashes (entry id -> JSON),
`<part>` strings (the JSON of the part's other fields); the channel `config` carries
`<instance>:<part>`."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import redis

from simulator.adapters.redis.engine import UNREACHABLE, SharedEngine, follow_forever
from simulator.services.shared.state import StateRegistry

# The parts shared, and which of their fields are collections kept per entry (the webhook
# registry's index by partner is rebuilt from its endpoints on every load).
SHARED_PARTS: dict[str, tuple[str, ...]] = {
    "access.keys": ("partners", "keys"),
    "access.limits": (),
    "webhooks.registry": ("endpoints",),
}


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class SharedConfiguration:
    """The ConfigurationReplica on the shared engine."""

    def __init__(
        self,
        registry: StateRegistry,
        engine: SharedEngine,
        instance: int,
        parts: dict[str, tuple[str, ...]] = SHARED_PARTS,
    ) -> None:
        self._registry = registry
        self._engine = engine
        self._instance = instance
        self._parts = {name: fields for name, fields in parts.items() if name in registry}
        self._prefix = engine.prefix + "config:"
        self._channel = engine.prefix + "config"
        self._seen: dict[str, dict[str, Any]] = {}  # part -> its state last written or loaded

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self._parts)

    def _writes(self, name: str, state: dict[str, Any], *, missing_only: bool) -> list[Any]:
        """(command, args…) that bring the store's copy of one part to `state`: every entry
        that differs from what was last seen, entries gone deleted; with `missing_only`
        (joining) only entries and a whole value the store lacks."""
        seen = self._seen.get(name, {})
        commands: list[Any] = []
        for field in self._parts[name]:
            key = f"{self._prefix}{name}:{field}"
            old, new = seen.get(field, {}), state.get(field, {})
            for entry_id, entry in new.items():
                if missing_only:
                    commands.append(("hsetnx", key, entry_id, _text(entry)))
                elif old.get(entry_id) != entry:
                    commands.append(("hset", key, entry_id, _text(entry)))
            if not missing_only:
                commands += [("hdel", key, entry_id) for entry_id in old if entry_id not in new]
        # The part's other fields, written even when there are none: the part then exists in
        # the store, so a part emptied at one instance (a reset) is emptied at the others.
        rest = {f: v for f, v in state.items() if f not in self._parts[name]}
        if missing_only:
            commands.append(("setnx", self._prefix + name, _text(rest)))
        elif name not in self._seen or rest != {f: seen.get(f) for f in rest}:
            commands.append(("set", self._prefix + name, _text(rest)))
        return commands

    def _assembled(self, name: str, stored: list[Any]) -> dict[str, Any] | None:
        """The part as the store holds it, from HGETALL of each field and GET of the rest."""
        *entries, rest = stored
        if rest is None:
            return None  # never written: no instance of the venue has published it yet
        state: dict[str, Any] = json.loads(rest) if rest is not None else {}
        for field, held in zip(self._parts[name], entries, strict=True):
            state[field] = {entry_id: json.loads(text) for entry_id, text in held.items()}
        return state

    def _read_commands(self, name: str) -> list[tuple[str, ...]]:
        fields = [("hgetall", f"{self._prefix}{name}:{field}") for field in self._parts[name]]
        return [*fields, ("get", self._prefix + name)]

    def _merged(self, name: str, stored: dict[str, Any], local: dict[str, Any]) -> dict[str, Any]:
        """The store's part, plus the entries made here that were never written nor seen
        there (not yet published: they are written by the next `publish`)."""
        seen = self._seen.get(name, {})
        state = dict(stored)
        for field in self._parts[name]:
            entries = dict(stored.get(field, {}))
            for entry_id, entry in local.get(field, {}).items():
                if entry_id not in entries and entry_id not in seen.get(field, {}):
                    entries[entry_id] = entry
            state[field] = entries
        return state

    def _take(self, stored: dict[str, dict[str, Any] | None]) -> bool:
        """Load the parts whose venue's state differs from this instance's (checked whole
        first); entries removed elsewhere go, entries only made here stay."""
        current = self._registry.dump_of(self._parts)
        changed: dict[str, dict[str, Any]] = {}
        for name, state in stored.items():
            if state is None:
                continue
            merged = self._merged(name, state, current.get(name, {}))
            if _text(merged) != _text(current.get(name)):
                changed[name] = merged
        self._registry.check(changed)
        self._registry.load(changed)
        for name, state in stored.items():
            if state is not None:
                self._seen[name] = state
        return bool(changed)

    def join(self) -> None:
        """Add what only this instance has, then take the venue's (blocking: once, before
        the app serves)."""
        with self._engine.control.pipeline(transaction=False) as pipe:
            for name, state in self._registry.dump_of(self._parts).items():
                for command, *args in self._writes(name, state, missing_only=True):
                    getattr(pipe, command)(*args)
                pipe.publish(self._channel, f"{self._instance}:{name}")  # the others read it
            pipe.execute()
        self._take(self._read_now())

    def _read_now(self) -> dict[str, dict[str, Any] | None]:
        names = list(self._parts)
        with self._engine.control.pipeline(transaction=False) as pipe:
            for name in names:
                for command, *args in self._read_commands(name):
                    getattr(pipe, command)(*args)
            return self._split(names, pipe.execute())

    async def _read(self, names: list[str]) -> dict[str, dict[str, Any] | None]:
        async with self._engine.client.pipeline(transaction=False) as pipe:
            for name in names:
                for command, *args in self._read_commands(name):
                    getattr(pipe, command)(*args)
            return self._split(names, await pipe.execute())

    def _split(self, names: list[str], flat: list[Any]) -> dict[str, dict[str, Any] | None]:
        """The answers of `_read_commands` for each of `names`, in order, as parts."""
        parts: dict[str, dict[str, Any] | None] = {}
        at = 0
        for name in names:
            size = len(self._parts[name]) + 1
            parts[name] = self._assembled(name, flat[at : at + size])
            at += size
        return parts

    async def publish(self) -> None:
        changed: list[str] = []
        async with self._engine.client.pipeline(transaction=False) as pipe:
            for name, state in self._registry.dump_of(self._parts).items():
                commands = self._writes(name, state, missing_only=False)
                for command, *args in commands:
                    getattr(pipe, command)(*args)
                if commands:
                    changed.append(name)
                    self._seen[name] = state
            for name in changed:
                pipe.publish(self._channel, f"{self._instance}:{name}")
            if changed:
                await pipe.execute()

    async def refresh(self) -> bool:
        try:
            return self._take(await self._read(list(self._parts)))
        except UNREACHABLE:
            return False

    async def follow(self) -> None:
        """Reload each part another instance publishes, until cancelled; while the engine is
        unreachable, try again every second (and take everything once back)."""
        await follow_forever(self._follow_once, "the venue's configuration")

    async def _rejoin(self) -> None:
        """`join` without blocking: after the engine came back (it may have lost everything),
        this instance's entries are written again where missing, then the venue's taken."""
        async with self._engine.client.pipeline(transaction=False) as pipe:
            for name, state in self._registry.dump_of(self._parts).items():
                for command, *args in self._writes(name, state, missing_only=True):
                    getattr(pipe, command)(*args)
                pipe.publish(self._channel, f"{self._instance}:{name}")
            await pipe.execute()
        self._take(await self._read(list(self._parts)))

    async def _follow_once(self) -> None:
        pubsub = self._engine.client.pubsub()
        try:
            await pubsub.subscribe(self._channel)
            await self._rejoin()  # what changed before the subscription took hold
            async for message in pubsub.listen():
                if message.get("type") != "message":
                    continue
                origin, _, name = str(message["data"]).partition(":")
                if origin != str(self._instance) and name in self._parts:
                    self._take(await self._read([name]))
        finally:
            with contextlib.suppress(redis.RedisError, OSError):
                await pubsub.aclose()  # type: ignore[no-untyped-call]
