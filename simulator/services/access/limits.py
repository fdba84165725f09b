"""Request-rate limits: fixed one-minute windows per bucket (a key, or a client IP), on the
simulator clock. Also the per-IP backstop that runs before authentication."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import Field

from simulator.clock import Clock
from simulator.errors import RateLimited
from simulator.services.shared.state import StateSchema


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_s: int  # whole seconds until the window resets

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_s),
        }


@dataclass
class _Window:
    started_at: float  # simulator time of the window's first request
    count: int  # requests counted in it


class FixedWindowLimiter:
    def __init__(self, clock: Clock, window_s: float = 60.0) -> None:
        self._clock = clock
        self.window_s = window_s
        self._windows: dict[str, _Window] = {}  # by bucket

    def hit(self, bucket: str, limit: int) -> Decision:
        """Count one request in `bucket`; synchronous, so parallel requests cannot both take the
        last unit."""
        now = self._clock.time()
        window = self._windows.get(bucket)
        if window is None or now - window.started_at >= self.window_s:
            window = _Window(started_at=now, count=0)
            self._windows[bucket] = window
        reset = max(1, math.ceil(window.started_at + self.window_s - now))
        if window.count >= limit:
            return Decision(False, limit, 0, reset)
        window.count += 1
        return Decision(True, limit, limit - window.count, reset)

    def evict_stale(self) -> None:
        """Forget windows that ended (a bucket that comes back starts a new one anyway): one
        entry per client IP and key ever seen would otherwise stay forever."""
        now = self._clock.time()
        for bucket in [b for b, w in self._windows.items() if now - w.started_at >= self.window_s]:
            del self._windows[bucket]

    def reset(self) -> None:
        self._windows.clear()


def rate_limited(decision: Decision, *, with_headers: bool) -> RateLimited:
    """The 429 of a time-window limiter: Retry-After always; X-RateLimit-* only from the
    per-key/per-IP limiter (the backstop runs before anyone is identified)."""
    headers = {"Retry-After": str(decision.reset_s)}
    if with_headers:
        headers.update(decision.headers())
    return RateLimited(
        "Rate limit exceeded",
        details={"reason": "rate_limit", "retryAfterS": decision.reset_s},
        headers=headers,
    )


class LimiterSaved(StateSchema):
    """What reset and snapshots put back of a FixedWindowLimiter: every window by bucket."""

    windows: dict[str, _Window] = Field(validation_alias="_windows")
