"""JSON text on the firm path (maker-stream frames, JSON-RPC bodies): pydantic-core's parser and
writer, three to seven times faster than the json module on these messages (docs/performance.md,
"Firm path, issue 33"), with the json module's results and errors.

`loads` falls back to `json.loads` for what pydantic-core refuses: text that is not JSON then
fails with the json module's own error, as before, and the one kind of JSON the two read
differently (a lone surrogate escape such as "\\ud800", which the json module accepts) still
parses."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

__all__ = ["dumps", "loads"]


def loads(text: str | bytes) -> Any:
    """`json.loads(text)`, faster."""
    try:
        return pydantic_core.from_json(text)
    except ValueError:
        return json.loads(text)


def dumps(value: Any) -> bytes:
    """Compact JSON of plain data (dicts with string keys, lists, str, int, float, bool,
    None), as UTF-8 bytes."""
    return pydantic_core.to_json(value)
