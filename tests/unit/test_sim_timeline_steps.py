"""Timeline steps as GET /_sim/<kind>/{id} renders them: one model per kind, made from the
kind's NamedTuple, with its times as ISO strings; a step kept by an older version shows the
values it has."""

from __future__ import annotations

import json
from typing import Any

from simulator.api.sim.timelines import KINDS, TimelineKind, _step
from simulator.services.shared.maker_names import MakerNames
from simulator.services.shared.timelines import Timelines, render_steps

NAMES = MakerNames({"0xa": "alpha"})


def kind_of(topic: str) -> TimelineKind:
    return next(k for k in KINDS if k.topic == topic)


def rendered(topic: str, *steps: tuple[Any, ...]) -> list[dict[str, Any]]:
    kind = kind_of(topic)
    clock = iter(1_700_000_000.0 + n for n in range(100))
    timelines = Timelines(topic, lambda: next(clock), kind.steps, capacity=10)
    timelines.start("x", "S", {})
    for step in steps:
        timelines.step("x", *step)
    timeline = timelines.get("x")
    assert timeline is not None
    models = [_step(s, kind, NAMES) for s in render_steps(timeline, kind.steps)]
    return [json.loads(m.model_dump_json()) for m in models]


def test_every_kind_of_every_area_has_its_model_with_a_literal_kind() -> None:
    for kind in KINDS:
        assert set(kind.models) == set(kind.steps.types)
        for name, model in kind.models.items():
            schema = model.model_json_schema(mode="serialization")
            assert schema["properties"]["kind"]["const"] == name
            at, kind_field, *values = kind.steps.types[name]._fields
            assert list(schema["properties"])[: len(values) + 3] == [
                at,
                "offset_ms",
                kind_field,
                *values,
            ]


def test_times_are_iso_strings_and_a_maker_comes_with_its_name() -> None:
    (placed, held) = rendered(
        "limit-orders",
        ("placed", "key", "0xa", 7, 1_700_000_900),
        ("held", "s1", "0xt", 1_700_000_100.25),
    )
    assert placed["at"] == "2023-11-14T22:13:21.000Z"
    assert placed["deadline_at"] == "2023-11-14T22:28:20.000Z"
    assert placed["maker_name"] == "alpha"
    assert list(placed)[-1] == "maker_name"
    schema = kind_of("limit-orders").models["held"].model_json_schema(mode="serialization")
    assert schema["properties"]["until_at"]["type"] == "string"
    assert held["until_at"] == "2023-11-14T22:15:00.250Z"


def test_a_step_of_an_older_version_shows_the_values_it_has() -> None:
    (answered,) = rendered("rfqs", ("answered", "0xb", "q1", "late", 600, "quote", None))
    assert answered == {
        "at": "2023-11-14T22:13:21.000Z",
        "offset_ms": 1000.0,
        "kind": "answered",
        "maker": "0xb",
        "quote_id": "q1",
        "outcome": "late",
        "latency_ms": 600,
        "reason": "quote",
        "detail": None,
        "maker_name": None,
    }
