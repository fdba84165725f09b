"""The base of settings and configuration files (the simulator's settings, the maker fleet's
config): an unknown key is refused, so a typo in a file fails at load, and values never change
once loaded."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
