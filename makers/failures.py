"""Logging a failure that repeats every round (a chain's node is down) without flooding the log:
once when it starts (ERROR, with the traceback of the first), a reminder at most every
`remind_s` while it lasts (WARNING), once when it stops (INFO); every repeat in between goes to
DEBUG."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass


@dataclass
class _Ongoing:
    started: float  # monotonic time of the first failure
    count: int  # failures so far
    reminded: float  # monotonic time of the last line above DEBUG


class RepeatedFailures:
    def __init__(self, log: logging.Logger, *, remind_s: float = 60.0) -> None:
        self._log = log
        self.remind_s = remind_s
        self._ongoing: dict[str, _Ongoing] = {}  # by what failed (e.g. "chain 97")

    def failed(self, key: str, what: str, exc: BaseException, *, trace: bool = True) -> None:
        """`trace=False` for failures whose message says it all (a node down): no traceback."""
        now = time.monotonic()
        ongoing = self._ongoing.get(key)
        if ongoing is None:
            self._ongoing[key] = _Ongoing(started=now, count=1, reminded=now)
            self._log.error(
                "%s failed: %s (retried every round; logged again only every %.0f s)",
                what,
                exc,
                self.remind_s,
                exc_info=exc if trace else None,
            )
            return
        ongoing.count += 1
        if now - ongoing.reminded >= self.remind_s:
            ongoing.reminded = now
            self._log.warning(
                "%s still failing: %d times in %.0f s, last: %s",
                what,
                ongoing.count,
                now - ongoing.started,
                exc,
            )
        else:
            self._log.debug("%s failed again: %s", what, exc)

    def succeeded(self, key: str, what: str) -> None:
        ongoing = self._ongoing.pop(key, None)
        if ongoing is not None:
            self._log.info(
                "%s works again after %d failures in %.0f s",
                what,
                ongoing.count,
                time.monotonic() - ongoing.started,
            )

    def failing(self) -> dict[str, int]:
        """What fails right now, with how many times in a row."""
        return {key: self._ongoing[key].count for key in sorted(self._ongoing)}
