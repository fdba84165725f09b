"""The one base of every JSON shape whose wire names are camelCase (the spec's APIs, the maker
stream, the provider API): attributes are written in Python's snake_case and the wire name of
each comes from one alias generator, so no module maps names by hand.

Reading from the wire is by wire name only (`WIRE_ONLY`): a body that spells a field the Python
way (`sell_amount`) is an unknown field there, exactly as before the models had aliases. Code
builds models by attribute name (`Quote(quote_id=...)`), and dumps write wire names."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

CAMEL_CASE = ConfigDict(
    alias_generator=to_camel,
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
)
# Keyword arguments of `model_validate`/`validate_python` that read the wire by alias only.
WIRE_ONLY: dict[str, Any] = {"by_alias": True, "by_name": False}


class WireModel(BaseModel):
    model_config = CAMEL_CASE
