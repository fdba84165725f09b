"""Values as assertion messages and the proxy's findings show them: in the spec's own JSON,
never Python's `repr` (`null`, not `None`; `"0xab"`, not `'0xab'`; `true`, not `True`), bytes as
text when they are text and as 0x-hex when they are not, cut to a readable length."""

from __future__ import annotations

import json
from typing import Any

SHOWN_CHARS = 160  # longer values are cut, with "…" at the end


def shown(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        raw = bytes(value)
        try:
            value = raw.decode()
        except UnicodeDecodeError:
            return _cut("0x" + raw.hex())  # not text: its bytes
        if not value.isprintable():
            return _cut("0x" + raw.hex())
    try:
        spelled = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a structure that refers to itself
        spelled = str(value)
    return _cut(spelled)


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"
