"""The cursor of a newest-first list (/_sim/rfqs and its siblings, /_sim/requests,
/_sim/maker-messages): the last item's key (its time and id), opaque to the caller, so the next
page starts strictly after it however many items arrived at the head meanwhile."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field

from simulator.errors import InvalidRequest

IdT = TypeVar("IdT")


def encode_cursor(at: float, ident: str | int) -> str:
    text = json.dumps([at, ident])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, ident: Callable[[Any], IdT]) -> tuple[float, IdT]:
    """The key a cursor names; a cursor no list gave out is a 400 on `cursor`."""
    try:
        at, raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        return float(at), ident(raw)
    except (ValueError, TypeError):
        raise InvalidRequest(
            "cursor is not one this list gave out", details={"field": "cursor"}
        ) from None


def cursor_field() -> Any:
    """A paged list's `cursor` query parameter."""
    return Field(
        default=None,
        max_length=200,
        description="The `next_cursor` of the previous page: the matches older than its last item",
    )


def next_cursor_field() -> Any:
    """A paged list's `next_cursor`."""
    return Field(
        default=None,
        description="Pass as `cursor` for the next (older) page; null when this page holds the "
        "last match",
    )
