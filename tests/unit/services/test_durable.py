"""Configuration written as it changes (services/sim/durable.py): only a part whose state
differs from what was last written is written; after a load of the file everything is written
again; at start-up the rows are put back, each read with its participant's schema first."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from simulator.services.shared.state import (
    SavedAttributes,
    StateFormatError,
    StateRegistry,
    StateSchema,
)
from simulator.services.sim.durable import DurableConfiguration


class KeysSaved(StateSchema):
    keys: dict[str, str]


@dataclass
class Keys:
    keys: dict[str, str] = field(default_factory=dict)


class FakeRows:
    def __init__(self) -> None:
        self.rows: dict[str, str] = {}
        self.puts: list[str] = []

    def put(self, name: str, state_json: str) -> None:
        self.rows[name] = state_json
        self.puts.append(name)

    def all(self) -> dict[str, str]:
        return dict(self.rows)


def registry_of(keys: Keys, hooks: Keys, other: Keys) -> StateRegistry:
    registry = StateRegistry()
    registry.register(
        SavedAttributes("access.keys", keys, KeysSaved),
        SavedAttributes("webhooks.registry", hooks, KeysSaved),
        SavedAttributes("rfq.store", other, KeysSaved),  # not configuration: never written
    )
    return registry


def test_only_what_changed_since_the_last_write_is_written() -> None:
    keys, hooks, other = Keys({"k1": "a"}), Keys(), Keys({"r": "x"})
    rows = FakeRows()
    durable = DurableConfiguration(registry_of(keys, hooks, other), rows)
    assert durable.save_changed() == []  # not before what the file holds was read back
    assert rows.puts == []
    assert durable.resume() == []  # an empty file: nothing to put back
    assert durable.save_changed() == ["access.keys", "webhooks.registry"]
    assert durable.save_changed() == []  # nothing changed
    other.keys["r2"] = "y"
    assert durable.save_changed() == []  # an RFQ is no configuration
    keys.keys["k2"] = "b"
    assert durable.save_changed() == ["access.keys"]
    assert rows.puts == ["access.keys", "webhooks.registry", "access.keys"]
    assert '"k2":"b"' in rows.rows["access.keys"]
    durable.forget_written()  # the file was loaded from a backup: write everything again
    assert durable.save_changed() == ["access.keys", "webhooks.registry"]


def test_the_rows_are_put_back_at_start_up() -> None:
    rows = FakeRows()
    written = Keys({"k1": "a", "k2": "b"})
    first = DurableConfiguration(registry_of(written, Keys({"h": "u"}), Keys()), rows)
    first.resume()
    first.save_changed()
    keys, hooks = Keys({"demo": "d"}), Keys()
    durable = DurableConfiguration(registry_of(keys, hooks, Keys()), rows)
    assert durable.resume() == ["access.keys", "webhooks.registry"]
    assert keys.keys == {"k1": "a", "k2": "b"}
    assert hooks.keys == {"h": "u"}
    assert durable.save_changed() == []  # what was read is what the file holds


def test_a_row_its_schema_refuses_changes_nothing() -> None:
    rows = FakeRows()
    rows.rows = {"webhooks.registry": '{"keys": {"h": "u"}}', "access.keys": '{"keys": 7}'}
    keys, hooks = Keys({"demo": "d"}), Keys()
    durable = DurableConfiguration(registry_of(keys, hooks, Keys()), rows)
    with pytest.raises(StateFormatError, match=r"access\.keys"):
        durable.resume()
    assert (keys.keys, hooks.keys) == ({"demo": "d"}, {})
