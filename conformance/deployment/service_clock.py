"""The service's clock as a black-box client can know it (:class:`ServiceClock`).

Proofs must be issued against the service clock (±60 s), and a simulator's clock may have been
advanced by days. With the ``/_sim`` control API the clock is read exactly; otherwise the offset
between this machine and the service is measured once from an answer of the service itself:
the ``time`` of ``GET /v2/health`` when it carries one (milliseconds), else the HTTP ``Date``
header (RFC 9110, whole seconds), each taken at the middle of the exchange.
"""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime
from typing import Protocol

from conformance.wire.client import Client
from conformance.wire.response_checks import parse_iso_utc


class Clocked(Protocol):
    def now_ms(self) -> int: ...


class ServiceClock:
    """``now_ms()``: the service's time in Unix milliseconds."""

    def __init__(self, client: Client, control: Clocked | None = None) -> None:
        self.client = client
        self.control = control  # the simulator's /_sim clock, read every time
        self.offset_ms: int | None = None  # service minus local, measured once

    def now_ms(self) -> int:
        if self.control is not None:
            return self.control.now_ms()
        if self.offset_ms is None:
            self.offset_ms = self._measure()
        return int(time.time() * 1000) + self.offset_ms

    def _measure(self) -> int:
        before = time.time()
        resp = self.client.get("/v2/health")
        middle_ms = int((before + time.time()) / 2 * 1000)
        body = resp.body if resp.is_json and isinstance(resp.body, dict) else {}
        data = body.get("data")
        try:
            assert isinstance(data, dict)
            return int(parse_iso_utc(data.get("time")).timestamp() * 1000) - middle_ms
        except (AssertionError, TypeError, ValueError):
            pass
        date = resp.headers.get("Date")
        if date:
            try:
                served = int(parsedate_to_datetime(date).timestamp() * 1000) + 500
                # Whole seconds: trust the header only beyond its own precision.
                return served - middle_ms if abs(served - middle_ms) > 1500 else 0
            except (TypeError, ValueError):
                pass
        return 0
