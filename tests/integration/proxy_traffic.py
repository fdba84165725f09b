"""One pass of scripted client traffic through a proxy in front of `rfqsim serve` (with its
control API): the calls an integrator's app and a QA team's probes make, in the spec's order,
touching every surface the mutation catalogue breaks. The calls go through ``url``; the
simulator's controls (``/_sim``, to pay a ramp transfer in, to read its clock) go to it
directly.

Each step is independent: a mutated answer may leave a later call of the same step without
what it needs (no claim token, no rfqId), so a step that cannot go on stops there and the next
one starts afresh.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eth_account import Account

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers, wait_until
from conformance.deployment.sim_control import SimControl
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client, Response, fresh_loopback_address
from conformance.wire.signing import sign_taker_proof

CHAIN = 97
ONE_USDC = 10**6
STALE_PROOF_MS = 120_000  # twice the proof window: stale whatever the skew
# What a mutated answer can make a step trip over.
BROKEN_ANSWER = (AssertionError, KeyError, TypeError, ValueError, IndexError, AttributeError)


@dataclass
class Traffic:
    url: str  # the proxy the traffic goes through
    sim: SimControl  # the simulator's control API, called directly
    chain: VenueChain
    key: str  # an API key with trades and webhooks scopes, unlimited tier
    taker: str  # a funded demo wallet
    ticker: str  # a feed ticker with trades on it

    def keyed(self) -> Client:
        return Client(self.url, headers={"Authorization": f"Bearer {self.key}"})

    def keyless(self) -> Client:
        """A client IP of its own (the per-IP limiter, lowered by the test, and grants start
        fresh): every call without a key comes from one."""
        return Client(self.url).from_address(fresh_loopback_address())

    def firm_body(self, **extra: Any) -> dict[str, Any]:
        return {
            "chainId": CHAIN,
            "sellToken": self.chain.token("USDC").address,
            "buyToken": self.chain.token("USDT").address,
            "sellAmount": str(ONE_USDC),
            "taker": self.taker,
            **extra,
        }

    def run(self) -> None:
        steps: list[Callable[[], None]] = [
            self.conventions,
            self.validation,
            self.ladder,
            self.firm_submit_cancel,
            self.firm_cancel,
            self.wrong_claim,
            self.no_quote,
            self.stale_proof,
            self.bad_keys,
            self.rate_limited,
            self.webhooks,
            self.feed,
            self.ramp,
        ]
        for step in steps:
            with contextlib.suppress(*BROKEN_ANSWER):
                step()

    # -- the steps ----------------------------------------------------------------------------

    def conventions(self) -> None:
        http = self.keyless()
        http.get("/v2/health")
        http.get("/v1/health")
        http.get("/v2/openapi.json")
        http.get(f"/v2/no-such-path-{secrets.token_hex(6)}")
        http.delete("/v2/health")
        oversized = b'{"pad": "' + b"x" * (1024 * 1024) + b'"}'
        http.post("/v2/rfq/preview", data=oversized, headers={"Content-Type": "application/json"})

    def validation(self) -> None:
        body = self.firm_body()
        del body["taker"]
        self.keyed().post("/v2/rfq/request", json=body)

    def ladder(self) -> None:
        self.keyless().get("/v2/rfq/levels", params={"chainId": CHAIN})

    def firm_submit_cancel(self) -> None:
        keyed = self.keyed()
        data = keyed.post("/v2/rfq/request", json=self.firm_body(), timeout=75).json()["data"]
        rfq = f"/v2/rfq/{data['rfqId']}"
        claim = {"X-Rfq-Claim": data["claimToken"]}
        self.keyless().get(rfq, headers=claim)
        keyed.post(f"{rfq}/submit", json={"txHash": "0x1234"})
        keyed.post(f"{rfq}/submit", json={"txHash": "0x" + secrets.token_hex(32)})
        keyed.post(f"{rfq}/cancel")  # submitted: 409

    def firm_cancel(self) -> None:
        keyed = self.keyed()
        data = keyed.post("/v2/rfq/request", json=self.firm_body(), timeout=75).json()["data"]
        keyed.post(f"/v2/rfq/{data['rfqId']}/cancel")

    def wrong_claim(self) -> None:
        self.keyless().get(
            f"/v2/rfq/rfq_{secrets.token_hex(12)}", headers={"X-Rfq-Claim": "rfqc_x"}
        )

    def no_quote(self) -> None:
        nobody = Account.create().address  # no maker: restricted to it, nobody quotes
        self.keyed().post(
            "/v2/rfq/request", json=self.firm_body(restrictedLiquidityWallets=[nobody]), timeout=75
        )

    def stale_proof(self) -> None:
        wallet = Account.create()
        proof = sign_taker_proof(
            wallet.key, wallet.address, CHAIN, issued_at_ms=self.sim.now_ms() - STALE_PROOF_MS
        )
        body = self.firm_body(taker=wallet.address, takerProof=proof)
        self.keyless().post("/v2/rfq/request", json=body)

    def bad_keys(self) -> None:
        rfq = f"/v2/rfq/rfq_{secrets.token_hex(12)}"
        self.keyless().get(rfq, headers={"Authorization": "Bearer not-a-key"})
        self.keyless().get(rfq, headers={"X-API-Key": "tx_test_000000000000.unknownsecret"})

    def rate_limited(self) -> None:
        """One client IP past the keyless budget the test lowered to 3 a minute."""
        client = self.keyless()
        claim = {"X-Rfq-Claim": "rfqc_x"}
        for _ in range(4):
            client.get(f"/v2/rfq/rfq_{secrets.token_hex(12)}", headers=claim)

    def webhooks(self) -> None:
        keyed = self.keyed()
        body = {"url": "https://127.0.0.1:1/rfqsim-proxy-traffic", "eventTypes": ["rfq.filled"]}
        created = keyed.post("/v1/webhooks", json=body).json()["data"]
        keyed.get("/v1/webhooks")
        keyed.delete(f"/v1/webhooks/{created['id']}")

    def feed(self) -> None:
        http = self.keyless()
        http.get("/pairs")
        http.get("/tickers")
        http.get("/historical_trades", params={"ticker_id": self.ticker})
        http.get("/tickers", params={"ticker_id": "NOPE_NOPE"})

    def ramp(self) -> None:
        """A sell transfer read before and after its funds arrive, then once more."""
        ramp = Ramp(self.keyless(), self.sim)
        ramp.providers()
        wallet = fresh_wallet()
        ramp.registered(wallet)
        transfers = Transfers(ramp)
        created = transfers.create(transfers.body(wallet, "sell", "500"))

        def read() -> Response:
            return transfers.get(created.id, claim=created.claim_token)

        read()
        transfers.pay_in(created.id)

        def moved() -> bool | None:
            return True if read().json()["transfer"]["status"] != "AWAITING_FUNDS" else None

        try:
            wait_until(moved, timeout=10.0, what="the funds to arrive")
        except AssertionError:
            ramp.advance(13)  # the provider's step, then the 8 s re-check
            wait_until(moved, timeout=10.0, what="the funds to arrive")
        read()
