"""A seeded `random.Random` inside saved state (the simulator's streams, the provider sandbox's
ids): written as the generator's state, `getstate()`, and read back into a generator that
continues exactly where the saved one stopped."""

from __future__ import annotations

import random
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

GeneratorState = tuple[int, tuple[int, ...], float | None]  # what Random.getstate() returns


def _restored(value: Any) -> random.Random:
    if isinstance(value, random.Random):
        return value
    if not isinstance(value, list | tuple) or len(value) != 3:
        raise ValueError("not the state of a random generator")
    if not isinstance(value[1], list | tuple):
        raise ValueError("not the state of a random generator")
    generator = random.Random()
    generator.setstate((int(value[0]), tuple(int(v) for v in value[1]), value[2]))
    return generator


def _state(generator: random.Random) -> GeneratorState:
    version, internal, gauss = generator.getstate()
    return version, internal, gauss


RandomStream = Annotated[
    random.Random,
    PlainValidator(_restored),
    PlainSerializer(_state, return_type=GeneratorState),
]
