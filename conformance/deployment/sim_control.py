"""The simulator's ``/_sim`` control API, which no real deployment has: :class:`SimControl`
calls ``/_sim/<path>`` and returns ``data`` (failing the test on any error), and wraps what the
suite uses most: the simulator's info, its clock (read, advance, now in Unix milliseconds), API
keys made on the spot and the rate-limit settings. Tests get one from the ``sim`` fixture, which
skips them against any other target.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import Any

from conformance.wire.client import NOT_JSON, Client
from conformance.wire.response_checks import parse_iso_utc


class SimControl:
    """The simulator's ``/_sim`` control API (not part of the real service)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def call(self, method: str, path: str, json: Any = NOT_JSON) -> Any:
        """Call ``/_sim/<path>`` and return ``data``; fails the test on any error."""
        resp = self.client.request(method, "/_sim/" + path.lstrip("/"), json=json)
        assert 200 <= resp.status < 300, f"{resp.describe()}: {resp.raw[:500]!r}"
        body = resp.json()
        assert isinstance(body, dict), f"{resp.describe()}: {body!r}"
        assert "data" in body, f"{resp.describe()}: {body!r}"
        return body["data"]

    def info(self) -> dict[str, Any]:
        data = self.call("GET", "info")
        assert isinstance(data, dict)
        return data

    def clock(self) -> dict[str, Any]:
        data = self.call("GET", "clock")
        assert isinstance(data, dict)
        return data

    def advance(self, seconds: float) -> dict[str, Any]:
        data = self.call("POST", "clock/advance", {"seconds": seconds})
        assert isinstance(data, dict)
        return data

    def advance_past(self, seconds_since_epoch: float, extra: float = 1.0) -> None:
        """Move the service clock (and the chains) to ``extra`` seconds past a Unix time, never
        backwards. Whole seconds only: the chains' block time moves in whole seconds, so a
        fractional advance would leave them behind the service clock."""
        seconds = math.ceil(seconds_since_epoch - self.now_ms() / 1000 + extra)
        if seconds > 0:
            self.advance(seconds)

    def now_ms(self) -> int:
        """The service clock (which tests may have advanced) as Unix milliseconds."""
        now = parse_iso_utc(self.clock().get("now"))
        return int(now.timestamp() * 1000)

    def lead_wall_clock(self, seconds: float) -> None:
        """Advance the service clock until it runs at least ``seconds`` ahead of this machine's
        wall clock. A test that moves the clock to make a proof stale starts here: the proof it
        signs with the service clock is then stale after the move by the wall clock too, which
        a simulator may also consult while its clock is moved (rfqsim does by default, for
        clients that sign with their own clock)."""
        lead = self.now_ms() / 1000 - time.time()
        if lead < seconds:
            self.advance(math.ceil(seconds - lead) + 1)

    def create_key(
        self, partner: str, environment: str, scopes: Iterable[str], **extra: Any
    ) -> dict[str, Any]:
        """``POST /_sim/keys``: a new API key record, including the full ``key`` (shown once)."""
        data = self.call(
            "POST",
            "keys",
            {"partner": partner, "environment": environment, "scopes": list(scopes), **extra},
        )
        assert isinstance(data, dict)
        return data

    def limits(self) -> dict[str, Any]:
        data = self.call("GET", "limits")
        assert isinstance(data, dict)
        return data

    def set_limits(self, **values: Any) -> dict[str, Any]:
        """``PUT /_sim/limits`` with these members (``reset_windows=True`` empties windows)."""
        data = self.call("PUT", "limits", values)
        assert isinstance(data, dict)
        return data
