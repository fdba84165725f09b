"""Timestamps as every API of rfqsim writes them, and the one reader of them: ISO-8601 in UTC
with milliseconds and a `Z` (`2030-01-01T00:00:00.000Z`). The simulator, the provider sandbox,
the makers, the conformance suite, the load tests and the benchmarks all write and read times
through this module."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import overload

# What `parse_iso` accepts: UTC only (`Z` or `+00:00`), any fraction of a second.
_UTC_ISO = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|\+00:00)$"
)


def isoformat(moment: datetime, *, timespec: str = "milliseconds") -> str:
    """`moment` in UTC with a `Z` (milliseconds unless `timespec` says otherwise)."""
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def from_unix(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


@overload
def isoformat_unix(seconds: float) -> str: ...


@overload
def isoformat_unix(seconds: None) -> None: ...


@overload
def isoformat_unix(seconds: float | None) -> str | None: ...


def isoformat_unix(seconds: float | None) -> str | None:
    """Unix seconds as the APIs' timestamp string; None stays None (a null field)."""
    return isoformat(from_unix(seconds)) if seconds is not None else None


def parse_iso(text: object) -> datetime:
    """An ISO-8601 UTC time (`Z` or `+00:00`); ValueError for anything else (another offset, a
    date alone, not a string)."""
    if not isinstance(text, str) or not _UTC_ISO.match(text):
        raise ValueError(f"not an ISO-8601 UTC time: {text!r}")
    # datetime reads at most microseconds: a longer fraction is cut there.
    trimmed = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", text.replace("Z", "+00:00"))
    return datetime.fromisoformat(trimmed)


def unix_seconds(text: object) -> float:
    """An ISO-8601 UTC time as Unix seconds."""
    return parse_iso(text).timestamp()
