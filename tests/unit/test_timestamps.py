"""The one timestamp module (rfqkit/timestamps.py): what every API writes (UTC, milliseconds, a
Z) and what every reader accepts (UTC only, any fraction), each the other's inverse."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from rfqkit.timestamps import from_unix, isoformat, isoformat_unix, parse_iso, unix_seconds


def test_times_are_written_in_utc_with_milliseconds_and_a_z() -> None:
    lagos = timezone(timedelta(hours=1))
    assert isoformat(datetime(2030, 1, 1, 13, 0, 0, 123456, tzinfo=lagos)) == (
        "2030-01-01T12:00:00.123Z"
    )
    assert isoformat_unix(1_893_456_000.5) == "2030-01-01T00:00:00.500Z"
    assert isoformat_unix(None) is None
    assert isoformat(from_unix(0), timespec="seconds") == "1970-01-01T00:00:00Z"


@pytest.mark.parametrize(
    "text",
    ["2030-01-01T00:00:00.500Z", "2030-01-01T00:00:00.500+00:00", "2030-01-01T00:00:00.5000001Z"],
)
def test_a_utc_time_reads_back_whatever_its_fraction(text: str) -> None:
    assert unix_seconds(text) == pytest.approx(1_893_456_000.5)
    assert parse_iso(text).tzinfo is not None


@pytest.mark.parametrize(
    "text", ["2030-01-01T01:00:00+01:00", "2030-01-01", "2030-01-01T00:00:00", 1893456000, None]
)
def test_anything_but_a_utc_time_is_refused(text: object) -> None:
    with pytest.raises(ValueError, match="not an ISO-8601 UTC time"):
        parse_iso(text)


def test_writing_then_reading_is_the_same_moment() -> None:
    moment = datetime(2031, 6, 30, 23, 59, 59, 999000, tzinfo=UTC)
    assert parse_iso(isoformat(moment)) == moment
