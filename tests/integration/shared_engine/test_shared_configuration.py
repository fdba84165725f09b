"""The venue's configuration on a real redis-server, as two instances see it: keys made at
each at once both kept, a change published at one taken at the other, a removal (a reset)
carried over, and a key made here and not yet published kept through a take."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import pytest

from simulator.adapters.redis.configuration import SharedConfiguration
from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.server import RedisNode
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.access.keys import KeyService, KeysSaved
from simulator.services.shared.state import SavedAttributes, StateRegistry

_prefixes = itertools.count()


class Instance:
    def __init__(self, engine: SharedEngine, number: int) -> None:
        self.keys = KeyService(Clock(), RandomSource(1, number).fork("keys"))
        self.registry = StateRegistry()
        self.registry.register(SavedAttributes("access.keys", self.keys, KeysSaved))
        self.replica = SharedConfiguration(self.registry, engine, number)

    def make(self, name: str) -> str:
        partner = self.keys.partner_by_name("demo") if self._has_demo() else None
        partner_id = partner.partner_id if partner else self.keys.create_partner("demo").partner_id
        key, _ = self.keys.create_key(
            partner_id=partner_id, environment="test", scopes=frozenset({"trades:read"}), name=name
        )
        return key.key_id

    def _has_demo(self) -> bool:
        return any(p.name == "demo" for p in self.keys.partners.values())

    def names(self) -> set[str]:
        return {key.name for key in self.keys.keys.values()}


@pytest.fixture
async def two(redis_node: RedisNode) -> AsyncIterator[tuple[Instance, Instance]]:
    prefix = f"c{next(_prefixes)}:"
    engines = [SharedEngine(redis_node.url, prefix=prefix) for _ in range(2)]
    yield Instance(engines[0], 0), Instance(engines[1], 1)
    for engine in engines:
        await engine.aclose()


async def test_keys_made_at_both_at_once_are_both_kept(two: tuple[Instance, Instance]) -> None:
    one, other = two
    one.replica.join()
    other.replica.join()
    one.make("made at one")
    other.make("made at the other")
    await one.replica.publish()
    await other.replica.publish()  # neither overwrites the other's key
    assert await one.replica.refresh()
    assert await other.replica.refresh()
    assert one.names() == other.names() == {"made at one", "made at the other"}
    assert not await one.replica.refresh()  # nothing new


async def test_a_change_and_a_removal_reach_the_other(two: tuple[Instance, Instance]) -> None:
    one, other = two
    one.replica.join()
    baseline = one.registry.dump()
    key_id = one.make("soon revoked")
    await one.replica.publish()
    other.replica.join()
    assert other.keys.keys[key_id].status == "active"
    one.keys.set_status(key_id, "revoked")
    await one.replica.publish()
    assert await other.replica.refresh()
    assert other.keys.keys[key_id].status == "revoked"
    one.registry.load(baseline)  # a reset at one: the key was made after the baseline
    await one.replica.publish()
    await other.replica.refresh()
    assert key_id not in other.keys.keys


async def test_a_key_made_here_and_not_yet_published_survives_a_take(
    two: tuple[Instance, Instance],
) -> None:
    one, other = two
    one.replica.join()
    other.replica.join()
    one.make("published")
    await one.replica.publish()
    other.make("not yet published")
    await other.replica.refresh()
    assert other.names() == {"published", "not yet published"}
    await other.replica.publish()
    await one.replica.refresh()
    assert one.names() == other.names()
