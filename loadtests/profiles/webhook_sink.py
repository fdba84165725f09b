"""webhook_sink: firm quotes left to lapse, their ``rfq.expired`` webhooks counted by a sink.

Setup (master or local process): a server certificate from the simulator's local CA
(``POST /_sim/webhooks/certificates``), an https sink on 127.0.0.1 in this process, an endpoint
registered for it with ``POST /v1/webhooks`` (a key with ``webhooks:manage``), and every simulated
maker's quote lifetime cut to ``--quote-ttl-ms`` (default 6 s) through ``PATCH /_sim/makers``, so
quotes lapse, and their events flow, during the run instead of a minute later.

Users (on any worker) request firm quotes with the partner's key and let them lapse. Each
delivery the sink receives is checked (signature over the raw body, event id) and reported as
a locust request ``WEBHOOK rfq.expired delivery`` whose time is the delay from the event's
``created`` to its arrival. When the test stops, the master waits (up to the quote lifetime
+ 20 s) for an event per quote and restores the makers' lifetimes; at quitting it deletes the
endpoint and stops the sink.

Judged: the firm requests against ``--budget-ms``. Extra checks: every quote's ``rfq.expired``
arrived (``webhook_deliveries``) and every signature verified (``webhook_signatures``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from locust import task

from loadtests.control import Control
from loadtests.harness import Harness
from loadtests.sink import ReceivedDelivery, WebhookSink
from loadtests.slo import SloCheck, Tally
from loadtests.users import FIRM, ProfileShape, SimUser, describe_failure

__all__ = ["ProfileShape", "QuotingPartner"]

EVENT_TYPES = ["rfq.expired", "rfq.filled", "rfq.failed"]
DRAIN_EXTRA_S = 20.0
WEBHOOK_REQUEST_TYPE = "WEBHOOK"


class SignatureRejected(Exception):
    pass


class SinkHarness(Harness):
    key_scopes = ("trades:write", "trades:read", "webhooks:manage")

    def __init__(self) -> None:
        super().__init__("webhook_sink", judged={FIRM}, statused={FIRM})
        self.sink: WebhookSink | None = None
        self.endpoint_id: str | None = None
        self.api_key: str | None = None
        self.saved_ttls: dict[str, int] = {}  # maker name -> quote_ttl_ms to restore
        self.quote_ttl_ms = 0
        self.lags_ms: list[float] = []  # good deliveries' delays, for the summary
        self.drained: bool | None = None
        self._lock = threading.Lock()  # guards lags_ms across sink greenlets

    def prepare(
        self, control: Control, info: dict[str, Any], setup: dict[str, Any]
    ) -> dict[str, Any]:
        certificate = control.data(
            "POST", "/_sim/webhooks/certificates", {"hostnames": ["127.0.0.1"]}
        )
        sink = WebhookSink(
            certificate["cert_pem"],
            certificate["key_pem"],
            float(setup["clock_offset_s"]),
            self._delivered,
        )
        self.sink = sink.start()
        self.api_key = str(setup["api_key"])
        endpoint = control.data(
            "POST", "/v1/webhooks", {"url": sink.url, "eventTypes": EVENT_TYPES}, key=self.api_key
        )
        self.endpoint_id = str(endpoint["id"])
        sink.secret = str(endpoint["signingSecret"])
        # A maker's quote_ttl_ms of None means "the longest the rfq allows"; PATCH cannot set
        # None back, so it is restored as the longest corridor lifetime, which acts the same.
        longest_ms = 1000 * max(
            int(c["quote_ttl_s"]) for chain in info["chains"] for c in chain["corridors"]
        )
        self.quote_ttl_ms = int(self.options.quote_ttl_ms)
        for maker in control.fleet():
            previous = maker["config"].get("quote_ttl_ms")
            self.saved_ttls[str(maker["name"])] = longest_ms if previous is None else int(previous)
            control.change_maker(str(maker["name"]), {"quote_ttl_ms": self.quote_ttl_ms})
        self.setup_facts["webhook_endpoint"] = self.endpoint_id
        self.setup_facts["makers_quote_ttl_ms"] = self.quote_ttl_ms
        return {}

    def _delivered(self, delivery: ReceivedDelivery) -> None:
        environment = self.environment
        if delivery.problem is None:
            with self._lock:
                self.lags_ms.append(delivery.lag_ms)
        if environment is None:
            return
        request_event: Any = environment.events.request
        request_event.fire(
            request_type=WEBHOOK_REQUEST_TYPE,
            name=f"{delivery.event_type} delivery",
            response_time=max(delivery.lag_ms, 0.0),
            response_length=delivery.size,
            response=None,
            context={},
            exception=None if delivery.problem is None else SignatureRejected(delivery.problem),
            start_time=time.time(),
            url=self.sink.url if self.sink else None,
        )

    def restore(self, control: Control) -> None:
        for name, ttl_ms in self.saved_ttls.items():
            control.change_maker(name, {"quote_ttl_ms": ttl_ms})

    def finish(self, tally: Tally) -> None:
        """Wait for an rfq.expired per quote (the last quotes lapse after the run)."""
        sink = self.sink
        if sink is None:
            return
        deadline = time.monotonic() + self.quote_ttl_ms / 1000 + DRAIN_EXTRA_S
        while time.monotonic() < deadline:
            if self._missing(tally) <= 0:
                self.drained = True
                return
            time.sleep(0.2)
        self.drained = False

    def _missing(self, tally: Tally) -> int:
        assert self.sink is not None
        return tally.counters["quoted"] - self.sink.counts.by_type["rfq.expired"]

    def release(self, control: Control) -> None:
        try:
            if self.endpoint_id is not None and self.api_key is not None:
                control.call("DELETE", f"/v1/webhooks/{self.endpoint_id}", key=self.api_key)
        finally:
            if self.sink is not None:
                self.sink.stop()

    def extra_checks(self, tally: Tally) -> list[SloCheck]:
        if self.sink is None:
            return []
        counts = self.sink.counts
        missing = self._missing(tally)
        return [
            SloCheck(
                name="webhook_deliveries",
                passed=missing <= 0,
                observed=counts.by_type["rfq.expired"],
                limit=tally.counters["quoted"],
                detail=f"{counts.by_type['rfq.expired']} distinct rfq.expired events for "
                f"{tally.counters['quoted']} quotes left to lapse"
                + (f"; {missing} missing after the drain" if missing > 0 else ""),
            ),
            SloCheck(
                name="webhook_signatures",
                passed=counts.bad_signatures == 0,
                observed=counts.bad_signatures,
                limit=0,
                detail=f"{counts.bad_signatures} of {counts.deliveries} deliveries failed "
                "signature verification",
            ),
        ]

    def extra_summary(self) -> dict[str, Any]:
        if self.sink is None:
            return {}
        counts = self.sink.counts
        with self._lock:
            lags = sorted(self.lags_ms)

        def at(share: float) -> float | None:
            return round(lags[min(len(lags) - 1, int(share * len(lags)))], 1) if lags else None

        return {
            "deliveries": counts.deliveries,
            "distinct_events": len(counts.unique),
            "duplicates": counts.duplicates,
            "bad_signatures": counts.bad_signatures,
            "by_type": dict(counts.by_type),
            "drained": self.drained,
            "delivery_lag_ms": {"p50": at(0.5), "p99": at(0.99), "max": lags[-1] if lags else None},
        }


HARNESS = SinkHarness()
HARNESS.install()


class QuotingPartner(SimUser):
    """A partner's backend asking for firm quotes it does not take."""

    harness = HARNESS

    @task
    def quote(self) -> None:
        body, _ = self.setup.market.trade(self.rng)
        body["taker"] = self.taker
        headers = {"Authorization": f"Bearer {self.setup.api_key}"}
        with self.client.post(
            "/v2/rfq/request", json=body, headers=headers, name=FIRM, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
                return
            if (response.json().get("data") or {}).get("status") == "quoted":
                self.count("quoted")
