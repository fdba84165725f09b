"""docs/configuration.md lists every setting: its table is exactly what
`python -m simulator.settings_table` generates from the Settings model and the defaults file, and
every variable it names is one pydantic-settings reads."""

from __future__ import annotations

import re
from pathlib import Path

from simulator.settings import load_settings
from simulator.settings_table import env_name, table

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_documented_table_is_the_generated_one() -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = re.search(
        r"<!-- settings-table:start -->\n(.*)<!-- settings-table:end -->", text, re.S
    )
    assert documented is not None
    assert documented.group(1) == table(), "run: python -m simulator.settings_table"


def test_every_documented_variable_sets_its_setting() -> None:
    # One leaf per kind: a nested scalar, a top-level scalar, a JSON mapping.
    settings = load_settings(
        environ={
            env_name("ramp.recheck_s"): "3",
            env_name("expiry_grace_s"): "2",
            env_name("feed.published_symbols"): '{"NGNS": "NAIRA"}',
        }
    )
    assert settings.ramp.recheck_s == 3
    assert settings.expiry_grace_s == 2
    assert settings.feed.published_symbols["NGNS"] == "NAIRA"
