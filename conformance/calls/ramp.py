"""Black-box helpers for the v2 ramp tests: fresh wallets and their proofs, bodies, customer
registration and KYC verification driven by the clock, and the provider sandbox's controls and
API call counters (through the simulator's ``/_sim/ramp``).

Proofs are the TakerControl signature of :mod:`conformance.wire.signing` with taker = the wallet and
chainId = the body's chainId. Only HTTP is used; nothing here imports the simulator.
"""

from __future__ import annotations

import base64
import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from eth_account import Account

from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client, Response
from conformance.wire.response_checks import assert_request_id
from conformance.wire.signing import sign_taker_proof
from conformance.wire.wording import shown

PROVIDER = "ngnramp"  # the simulator's provider (docs/provider-sandbox.md)
CHAIN = 97  # a chain the provider settles on, live and in the sandbox
REVIEW_DELAY_S = 30  # the sandbox's default review delay (clock seconds)
SWEEP_INTERVAL_S = 300  # spec: the background sweep runs every five minutes
KYC_REREAD_S = 15  # spec: the provider is re-read at most once per 15 s per person
IMAGE_MAX_BYTES = 4 * 1024 * 1024
# Without control: a review takes REVIEW_DELAY_S of real time on the provider's sandbox, seen
# through kyc/status at most every KYC_REREAD_S; a margin on top for a slower deployment.
REAL_REVIEW_WAIT_S = REVIEW_DELAY_S + 2 * KYC_REREAD_S + 30
KYC_POLL_S = 5.0
SHARED_VERIFIED = "ramp_verified_wallet"  # key in Ramp.shared

# Provider API routes as the sandbox counts them (``GET /_sim/ramp/state`` -> ``calls``).
CALL_CAPABILITIES = "GET /api/v1/capabilities"
CALL_BANKS = "GET /api/v1/banks"
CALL_RESOLVE = "POST /api/v1/banks/resolve"
CALL_CREATE_CUSTOMER = "POST /api/v1/customers"
CALL_UPDATE_CUSTOMER = "PATCH /api/v1/customers/{id}"
CALL_SUBMIT_KYC = "POST /api/v1/customers/{id}/kyc"
CALL_READ_KYC = "GET /api/v1/customers/{id}/kyc"
CALL_KYC_LINK = "POST /api/v1/customers/{id}/kyc/link"

PERSON: dict[str, Any] = {
    "firstName": "Ada",
    "lastName": "Obi",
    "email": "ada.obi@example.com",
    "phone": "+2348012345678",
}


def assert_providers(body: Any) -> None:
    """GET /v2/ramp/providers: ``{providers: [...]}``, each provider with every field of the
    spec's table in its type (an empty list is allowed: nobody runs the corridor now)."""
    assert isinstance(body, dict), body
    assert isinstance(body.get("providers"), list), body
    for item in body["providers"]:
        assert isinstance(item["provider"], str)
        assert item["provider"]
        assert isinstance(item["displayName"], str)
        assert item["displayName"]
        for code in (item["fiat"], item["token"]):
            assert re.fullmatch(r"[A-Z][A-Z0-9]{1,9}", code), item
        for key in ("chainIds", "sandboxChainIds"):
            assert isinstance(item[key], list), item
            assert all(isinstance(c, int) and not isinstance(c, bool) for c in item[key]), item
        assert item["sides"], item
        assert set(item["sides"]) <= {"buy", "sell"}, item
        assert set(item["requires"]) == {
            "customerDetails",
            "payoutBankAccount",
            "destinationWallet",
        }, item
        assert all(isinstance(v, bool) for v in item["requires"].values()), item


@dataclass(frozen=True)
class RampWallet:
    address: str  # checksummed
    private_key: str

    @property
    def lower(self) -> str:
        return self.address.lower()


def fresh_wallet() -> RampWallet:
    account = Account.create()
    return RampWallet(address=account.address, private_key="0x" + bytes(account.key).hex())


def image_b64(decoded_bytes: int) -> str:
    """A base64 image whose decoded size is exactly ``decoded_bytes``."""
    return base64.b64encode(b"\x89PNG" + b"\x00" * max(0, decoded_bytes - 4)).decode()


SMALL_IMAGE = image_b64(2048)


def document(number: str = "A12345678", kind: str = "passport", **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "number": number,
        "expiryDate": "2031-05-01",
        "imageFront": SMALL_IMAGE,
        "imageBack": SMALL_IMAGE,
        **extra,
    }


@dataclass
class Ramp:
    """One test's view of the ramp: the public API plus (when a simulator) its controls."""

    http: Client
    sim: SimControl | None
    provider: str = PROVIDER
    chain_id: int = CHAIN
    _proofs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Kept for the whole test process (the target's cache): see shared_verified.
    shared: dict[str, Any] = field(default_factory=dict)

    # -- time and proofs -----------------------------------------------------------------

    def now_ms(self) -> int:
        return self.sim.now_ms() if self.sim is not None else int(time.time() * 1000)

    def stale_issued_at_ms(self) -> int:
        """An issuedAt a second past the 60 s window of the service clock and of this machine's
        wall clock: stale by the spec's rule, and for a simulator whose clock a test moved and
        which then also judges by the wall clock (rfqsim does, for clients signing with their
        own clock). Signed 61 s before the service clock alone, it would be fresh by the wall
        clock while the service clock leads it by 1-121 s."""
        return min(self.now_ms(), int(time.time() * 1000)) - 61_000

    def proof(
        self,
        wallet: RampWallet,
        *,
        chain_id: int | None = None,
        issued_at_ms: int | None = None,
        signer: RampWallet | None = None,
        nonce: bytes | None = None,
    ) -> dict[str, Any]:
        """A fresh proof for ``wallet`` (signed by ``signer``, default the wallet itself)."""
        return sign_taker_proof(
            (signer or wallet).private_key,
            wallet.address,
            self.chain_id if chain_id is None else chain_id,
            issued_at_ms=self.now_ms() if issued_at_ms is None else issued_at_ms,
            nonce=nonce,
        )

    def wallet_body(
        self, wallet: RampWallet, proof: dict[str, Any] | None = None, **extra: Any
    ) -> dict[str, Any]:
        """``{provider, wallet, chainId, proof, ...extra}`` with a fresh proof unless given."""
        body: dict[str, Any] = {
            "provider": self.provider,
            "wallet": wallet.address,
            "chainId": self.chain_id,
            "proof": proof if proof is not None else self.proof(wallet),
        }
        body.update(extra)
        return body

    # -- the public API ---------------------------------------------------------------------

    def post(self, path: str, body: Any) -> Response:
        resp = self.http.post(f"/v2/ramp/{path.lstrip('/')}", json=body)
        assert_request_id(resp)
        return resp

    def providers(self, **query: Any) -> Response:
        resp = self.http.get("/v2/ramp/providers", params=query or None)
        assert_request_id(resp)
        return resp

    def banks(self, **query: Any) -> Response:
        resp = self.http.get("/v2/ramp/banks", params={"provider": self.provider, **query})
        assert_request_id(resp)
        return resp

    def register(self, wallet: RampWallet, **fields: Any) -> Response:
        """POST /customers with acceptedTerms and ``fields`` (default: the four of PERSON)."""
        person = fields if fields else dict(PERSON)
        return self.post("customers", self.wallet_body(wallet, acceptedTerms=True, **person))

    def details(self, wallet: RampWallet) -> Response:
        return self.post("customers/details", self.wallet_body(wallet))

    def submit_kyc(
        self, wallet: RampWallet, number: str = "A12345678", **document_fields: Any
    ) -> Response:
        body = self.wallet_body(
            wallet, document=document(number, **document_fields), selfieImage=SMALL_IMAGE
        )
        return self.post("customers/kyc", body)

    def kyc_status(self, wallet: RampWallet, **extra: Any) -> Response:
        return self.post("customers/kyc/status", self.wallet_body(wallet, **extra))

    def kyc_link(self, wallet: RampWallet) -> Response:
        return self.post("customers/kyc/link", self.wallet_body(wallet))

    def registered(self, wallet: RampWallet, **fields: Any) -> dict[str, Any]:
        """Register with a provider profile; returns ``customer``."""
        resp = self.register(wallet, **fields)
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:500])}"
        customer: dict[str, Any] = resp.json()["customer"]
        assert customer["hasProviderCustomer"] is True, customer
        return customer

    def verified(self, wallet: RampWallet, number: str = "A12345678") -> dict[str, Any]:
        """Register, submit documents, let the review clear; returns ``kyc``. On a simulator
        the clock is moved past the review; elsewhere the provider's sandbox reviews in real
        time, so this polls ``kyc/status`` (re-read at most every 15 s) for up to
        :data:`REAL_REVIEW_WAIT_S`."""
        customer = self.registered(wallet)
        resp = self.submit_kyc(wallet, number)
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:500])}"
        kyc = self.review_cleared(wallet)
        assert kyc is not None, customer
        assert kyc["state"] == "verified", (customer, kyc)
        return dict(kyc)

    def review_cleared(self, wallet: RampWallet) -> dict[str, Any] | None:
        """The ``kyc`` of ``wallet`` once its pending review has an outcome: on a simulator the
        clock is moved past the review delay; elsewhere ``kyc/status`` is polled in real time
        (the provider re-read at most every 15 s) for up to :data:`REAL_REVIEW_WAIT_S`."""
        if self.sim is not None:
            self.advance(REVIEW_DELAY_S + 1)
            kyc: dict[str, Any] | None = self.kyc_status(wallet).json()["kyc"]
            return kyc
        deadline = time.monotonic() + REAL_REVIEW_WAIT_S
        while True:
            kyc = self.kyc_status(wallet).json()["kyc"]
            if kyc is None or kyc["state"] != "pending" or time.monotonic() > deadline:
                return kyc
            time.sleep(KYC_POLL_S)

    def shared_verified(self) -> RampWallet:
        """A verified wallet made once per test process (``shared``) for tests that book
        nothing with it: without control each verification waits a real review."""
        cached = self.shared.get(SHARED_VERIFIED)
        if isinstance(cached, RampWallet):
            return cached
        wallet = fresh_wallet()
        self.verified(wallet)
        self.shared[SHARED_VERIFIED] = wallet
        return wallet

    # -- simulator controls -------------------------------------------------------------------

    def _control(self) -> SimControl:
        assert self.sim is not None, "needs the simulator's /_sim control API"
        return self.sim

    def advance(self, seconds: int) -> None:
        self._control().advance(seconds)

    def lead_wall_clock(self, seconds: int) -> None:
        """The service clock at least ``seconds`` ahead of the wall clock (SimControl's)."""
        self._control().lead_wall_clock(seconds)

    def state(self) -> dict[str, Any]:
        data = self._control().call("GET", "ramp/state")
        assert isinstance(data, dict)
        return data

    def calls(self, route: str) -> int:
        """How many provider API calls the sandbox has counted for ``route``."""
        return int(self.state().get("calls", {}).get(route, 0))

    def settle_background(self, route: str = CALL_READ_KYC, timeout_s: float = 10.0) -> int:
        """Let every review (or other provider work) left by earlier tests finish: move the
        clock past a background sweep and wait until the sandbox's count for ``route`` stops
        moving. Returns the settled count, a baseline no one else will move."""
        self.advance(SWEEP_INTERVAL_S + 1)
        deadline = time.monotonic() + timeout_s
        last = self.calls(route)
        while time.monotonic() < deadline:
            time.sleep(0.3)
            now = self.calls(route)
            if now == last:
                return now
            last = now
        raise AssertionError(f"provider calls of {route} kept moving for {timeout_s} s")

    def provider_customers(self, wallet: RampWallet) -> list[dict[str, Any]]:
        """The sandbox's customer profiles whose reference is this wallet."""
        customers = self.state()["customers"]
        return [c for c in customers if str(c.get("reference")).lower() == wallet.lower]

    def switches(self, **switches: Any) -> dict[str, Any]:
        data = self._control().call("PUT", "ramp/switches", switches)
        assert isinstance(data, dict)
        return data

    def set_reachable(self, reachable: bool) -> None:
        self._control().call("PUT", "ramp/reachability", {"reachable": reachable})

    def configure(self, **config: Any) -> dict[str, Any]:
        data = self._control().call("PUT", "ramp/config", config)
        assert isinstance(data, dict)
        return data

    @contextlib.contextmanager
    def restoring(self) -> Iterator[Ramp]:
        """Restores the sandbox's switches, reachability and config after the block."""
        before = self.state()
        caps, config = before["capabilities"], before["config"]
        try:
            yield self
        finally:
            self.set_reachable(True)
            self.switches(
                enabled=caps["enabled"],
                sides={"buy": "buy" in caps["sides"], "sell": "sell" in caps["sides"]},
                chains=caps["chains"],
                sandboxChains=caps["sandboxChains"],
                businessProfileSells=caps["businessProfileSells"],
            )
            self.configure(
                reviewDelaySeconds=config["reviewDelaySeconds"],
                stepDelaySeconds=config["stepDelaySeconds"],
                maxBuy=config["maxBuy"],
                apiLatencyMs=config["apiLatencyMs"],
            )
