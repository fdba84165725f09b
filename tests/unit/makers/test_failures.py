"""A failure that repeats every round is logged when it starts, reminded at most every
`remind_s`, and logged when it stops; repeats in between are DEBUG only."""

from __future__ import annotations

import logging

import pytest

from makers.failures import RepeatedFailures


def test_logged_once_then_reminded_then_recovered(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("makers.failures.time.monotonic", lambda: clock[0])
    log = logging.getLogger("test.failures")
    failures = RepeatedFailures(log, remind_s=60)
    with caplog.at_level(logging.DEBUG, logger="test.failures"):
        for _ in range(20):  # 20 rounds, 3 s apart: one minute
            failures.failed("chain 97", "alpha: publishing", ConnectionError("down"), trace=False)
            clock[0] += 3
        failures.failed("chain 97", "alpha: publishing", ConnectionError("down"), trace=False)
        assert failures.failing() == {"chain 97": 21}
        failures.succeeded("chain 97", "alpha: publishing")
        failures.succeeded("chain 97", "alpha: publishing")  # nothing ongoing: silent
    above_debug = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno > 10]
    assert above_debug == [
        (
            "ERROR",
            "alpha: publishing failed: down (retried every round; logged again only every 60 s)",
        ),
        ("WARNING", "alpha: publishing still failing: 21 times in 60 s, last: down"),
        ("INFO", "alpha: publishing works again after 21 failures in 60 s"),
    ]
    assert caplog.records[0].exc_info is None  # trace=False: the message says it all
    assert failures.failing() == {}
