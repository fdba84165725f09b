"""preview: indicative prices, ``POST /v2/rfq/preview``, with the ladder alongside.

Users act like a wallet's swap screen: mostly previews over every RFQ corridor and direction
with the storm's size mix (a share exact-output, a share steered to one or two maker wallets
with ``preferredLiquidityWallets``), and now and then a ladder refresh. Previews are public,
lock nothing and price from the makers' published levels. Judged: previews and ladder reads
against ``--budget-ms``; no_quote counted over previews.
"""

from __future__ import annotations

from typing import Any

from locust import task

from loadtests.control import Control
from loadtests.harness import Harness
from loadtests.users import LEVELS, PREVIEW, ProfileShape, SimUser, describe_failure

__all__ = ["PreviewUser", "ProfileShape"]

STEERED_SHARE = 0.1  # previews naming preferred maker wallets


class PreviewHarness(Harness):
    needs_takers = False

    def prepare(
        self, control: Control, info: dict[str, Any], setup: dict[str, Any]
    ) -> dict[str, Any]:
        return {"maker_wallets": [str(m["address"]) for m in info.get("maker_wallets", [])]}


HARNESS = PreviewHarness("preview", judged={PREVIEW, LEVELS}, statused={PREVIEW})
HARNESS.install()


class PreviewUser(SimUser):
    harness = HARNESS

    @task(6)
    def preview(self) -> None:
        body, band = self.setup.market.trade(self.rng)
        wallets = list(self.setup.extra.get("maker_wallets", []))
        if wallets and self.rng.random() < STEERED_SHARE:
            body["preferredLiquidityWallets"] = self.rng.sample(wallets, min(2, len(wallets)))
            self.count("steered")
        with self.client.post(
            "/v2/rfq/preview", json=body, name=PREVIEW, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
            else:
                self.count(f"size_{band}")

    @task(1)
    def ladder(self) -> None:
        chain_id = self.setup.market.chain_id
        with self.client.get(
            f"/v2/rfq/levels?chainId={chain_id}", name=LEVELS, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(describe_failure(response))
