"""ladder: aggregators polling the price ladder, ``GET /v2/rfq/levels``.

Each user polls the chain's ladder about once a second, as a router keeping its routes fresh
does. The ladder is public (no key) and cached for about 2 s, so the load mostly measures the
cached path. Judged: the poll itself against ``--budget-ms``; and the cache's promise: the
``asOf`` of each answer, against the simulator clock, must be no older than the 2 s cache plus
``--tolerance-ms`` at the SLO percentile (check ``ladder_freshness``).
"""

from __future__ import annotations

from typing import Any

from locust import between, task

from loadtests.common import LADDER_CACHE_MS
from loadtests.harness import Harness
from loadtests.slo import SloCheck, Tally, Thresholds, allowed_over
from loadtests.users import LEVELS, ProfileShape, SimUser, describe_failure
from rfqkit.timestamps import unix_seconds

__all__ = ["LadderPoller", "ProfileShape"]


class LadderHarness(Harness):
    quotes_expected = False
    needs_takers = False

    def extra_checks(self, tally: Tally) -> list[SloCheck]:
        limits = Thresholds.from_options(self.options)
        polls, stale = tally.counters["ladder_polls"], tally.counters["ladder_stale"]
        allowed = allowed_over(polls, limits.percentile)
        limit_ms = LADDER_CACHE_MS + limits.tolerance_ms
        oldest = tally.maxima.get("ladder_age_ms")
        return [
            SloCheck(
                name="ladder_freshness",
                passed=polls > 0 and stale <= allowed,
                observed=stale,
                limit=allowed,
                detail=f"{stale} of {polls} ladders older than {limit_ms:g} ms (cache "
                f"{LADDER_CACHE_MS:g} + tolerance), at most {allowed} may; oldest "
                f"{oldest if oldest is None else round(oldest, 1)} ms",
            )
        ]


HARNESS = LadderHarness("ladder", judged={LEVELS}, statused=set())
HARNESS.install()


class LadderPoller(SimUser):
    harness = HARNESS
    wait_time = between(0.5, 1.5)

    @task
    def poll(self) -> None:
        chain_id = self.setup.market.chain_id
        with self.client.get(
            f"/v2/rfq/levels?chainId={chain_id}", name=LEVELS, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
                return
            data: dict[str, Any] = response.json().get("data") or {}
        as_of = unix_seconds(data["asOf"])
        age_ms = self.setup.service_now_ms() - as_of * 1000
        tally = self.harness.tally
        if tally is not None:
            tally.count("ladder_polls")
            tally.count(f"ladder_pairs_{len(data.get('pairs', []))}")
            tally.observe_max("ladder_age_ms", age_ms)
            if age_ms > LADDER_CACHE_MS + float(self.environment.parsed_options.tolerance_ms):
                tally.count("ladder_stale")
