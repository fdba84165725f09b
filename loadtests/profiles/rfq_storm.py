"""rfq_storm: firm RFQs from many takers, judged against the 750 ms reply budget.

Each user is one taker wallet (fresh, funded on the test chain at setup) asking for firm quotes
over the chain's RFQ corridors in both directions (USDT→NGNS, NGNS→USDT, USDC↔USDT, WBNB↔USDT)
with a realistic size mix (mostly small, a thin tail up to $500; 20 % exact-output). Most users
hold an API key (raised limits, tier ``unlimited``); ``--keyless-share`` of them have none: they
sign the EIP-712 TakerControl proof on their first request and ride the 12 h grant after that.
A quote the taker does not want is cancelled after a short look (``--cancel-share``), the rest
lapse. No quote is executed: the storm measures quoting, not settlement.

Judged: both firm-request names. Answers counted for no_quote: the same.
"""

from __future__ import annotations

import time
from typing import Any

from locust import task

from conformance.wire.signing import sign_taker_proof
from loadtests.harness import Harness
from loadtests.users import CANCEL, FIRM, FIRM_KEYLESS, ProfileShape, SimUser, describe_failure

__all__ = ["KeyedTaker", "KeylessTaker", "ProfileShape"]

THINK_BEFORE_CANCEL_S = (0.1, 1.0)


class StormHarness(Harness):
    def configure(self, options: Any) -> None:
        share = float(options.keyless_share)
        cancel = float(options.cancel_share)
        if not 0 <= share <= 1 or not 0 <= cancel <= 1:
            raise ValueError("--keyless-share and --cancel-share must be between 0 and 1")
        KeylessTaker.weight = round(share * 100)
        KeyedTaker.weight = 100 - KeylessTaker.weight


HARNESS = StormHarness("rfq_storm", judged={FIRM, FIRM_KEYLESS}, statused={FIRM, FIRM_KEYLESS})
HARNESS.install()


class _Taker(SimUser):
    abstract = True
    harness = HARNESS

    def on_start(self) -> None:
        super().on_start()
        self.cancel_share = float(self.environment.parsed_options.cancel_share)

    def firm(self, name: str, headers: dict[str, str], extra: dict[str, Any]) -> dict[str, Any]:
        """One firm request; the answer's data (empty when it failed)."""
        body, band = self.setup.market.trade(self.rng)
        body.update(taker=self.taker, **extra)
        with self.client.post(
            "/v2/rfq/request", json=body, headers=headers, name=name, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
                return {}
            data = response.json().get("data") or {}
            self.count(f"size_{band}")
            return dict(data)

    def after_quote(self, data: dict[str, Any], headers: dict[str, str]) -> None:
        """Cancel a quote the taker will not take (``--cancel-share``), or let it lapse."""
        if data.get("status") != "quoted":
            return
        self.count("quoted")
        if self.rng.random() >= self.cancel_share:
            self.count("left_to_lapse")
            return
        time.sleep(self.rng.uniform(*THINK_BEFORE_CANCEL_S))
        with self.client.post(
            f"/v2/rfq/{data['rfqId']}/cancel", headers=headers, name=CANCEL, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
            else:
                self.count("cancelled")


class KeyedTaker(_Taker):
    """A taker with an API key: no proof, its own (unlimited) rate budget."""

    weight = 80

    @task
    def storm(self) -> None:
        headers = {"Authorization": f"Bearer {self.setup.api_key}"}
        self.after_quote(self.firm(FIRM, headers, {}), headers)


class KeylessTaker(_Taker):
    """A taker without a key: proves control of its wallet once, then rides the grant."""

    weight = 20

    def on_start(self) -> None:
        super().on_start()
        self.proved = False

    @task
    def storm(self) -> None:
        extra: dict[str, Any] = {}
        if not self.proved:
            extra["takerProof"] = sign_taker_proof(
                self.taker_key,
                self.taker,
                self.setup.market.chain_id,
                issued_at_ms=self.setup.service_now_ms(),
            )
            self.count("keyless_proofs")
        data = self.firm(FIRM_KEYLESS, {}, extra)
        if data:
            self.proved = True
            claim = str(data.get("claimToken", ""))
            self.after_quote(data, {"X-Rfq-Claim": claim})
