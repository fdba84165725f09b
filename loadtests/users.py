"""Pieces the profiles share: a FastHttpUser that waits for the shared setup, the failure
message locust groups by, the request names the SLO judges, and the load shape."""

from __future__ import annotations

import random
from typing import Any, cast

from locust import FastHttpUser, LoadTestShape, between

from loadtests.common import CLIENT_TIMEOUT_S, DEFAULT_RUN_TIME_S, DEFAULT_USERS
from loadtests.harness import Harness
from loadtests.provision import RunSetup
from loadtests.shapes import plan

FIRM = "POST /v2/rfq/request"
FIRM_KEYLESS = "POST /v2/rfq/request [keyless]"
CANCEL = "POST /v2/rfq/{id}/cancel"
PREVIEW = "POST /v2/rfq/preview"
LEVELS = "GET /v2/rfq/levels"


def describe_failure(response: Any) -> str:
    """``"429 rate_limited rate_limit"``: status, error code and reason, without ids, so
    locust's failure table groups like with like."""
    try:
        error = response.json().get("error", {})
    except Exception:
        error = {}
    details = error.get("details") if isinstance(error, dict) else None
    reason = details.get("reason", "") if isinstance(details, dict) else ""
    code = error.get("code", "") if isinstance(error, dict) else ""
    return " ".join(str(p) for p in (response.status_code, code, reason) if p)


class SimUser(FastHttpUser):
    """A user of one profile: ``harness`` is that profile's; ``setup`` its shared setup."""

    abstract = True
    harness: Harness
    wait_time = between(0.5, 2.0)
    network_timeout = CLIENT_TIMEOUT_S
    connection_timeout = 5.0

    def on_start(self) -> None:
        self.setup: RunSetup = self.harness.wait_setup()
        self.rng = random.Random()
        takers = self.setup.takers
        self.taker, self.taker_key = self.rng.choice(takers) if takers else ("", "")

    def count(self, counter: str) -> None:
        if self.harness.tally is not None:
            self.harness.tally.count(counter)


class ProfileShape(LoadTestShape):
    """``--shape`` over ``--run-time`` (see :func:`loadtests.shapes.plan`)."""

    use_common_options = True

    def tick(self) -> tuple[int, float] | None:
        assert self.runner is not None
        options: Any = self.runner.environment.parsed_options
        return plan(
            str(getattr(options, "shape", "steady")),
            float(cast(Any, self).get_run_time()),
            int(options.num_users or DEFAULT_USERS),
            float(options.spawn_rate or 1.0),
            float(options.run_time or DEFAULT_RUN_TIME_S),
        )
