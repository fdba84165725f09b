"""Black-box helpers for the v2 ramp transfer tests: bodies, creates and reads, the sandbox's
transfer controls and webhook mode, the simulator's email outbox, forged provider webhooks, and
the on-chain side (reading a payout's receipt, a wallet sending its own deposit).

Built on :mod:`conformance.calls.ramp` (wallets, proofs, registration, KYC) and
:mod:`conformance.deployment.venue`, :mod:`conformance.wire.chain` and
:mod:`conformance.deployment.funding` (chains and tokens, JSON-RPC, funding a wallet). Only HTTP and
JSON-RPC are used.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from conformance.calls.ramp import Ramp, RampWallet
from conformance.deployment.funding import fund_wallet
from conformance.deployment.venue import VenueChain, whole
from conformance.wire.client import Response
from conformance.wire.response_checks import assert_request_id, parse_iso_utc
from conformance.wire.wording import shown
from rfqkit.wallets import Wallet

T = TypeVar("T")

TRANSFER_FIELDS = {
    "id",
    "providerTransferId",
    "provider",
    "sandbox",
    "side",
    "fiat",
    "token",
    "chainId",
    "sourceAmount",
    "targetAmount",
    "rateLabel",
    "feeLabel",
    "status",
    "providerStatus",
    "retryOfId",
    "payIn",
    "payOut",
    "hasEmail",
    "timeline",
    "expiresAt",
    "createdAt",
}
STATUSES = {
    "AWAITING_FUNDS",
    "PROCESSING",
    "SENDING",
    "COMPLETED",
    "FAILED",
    "REFUNDED",
    "CANCELLED",
    "EXPIRED",
}
SETTLED = {"COMPLETED", "REFUNDED", "CANCELLED"}
# Forward order for checking a timeline (EXPIRED sits apart: it is left only for an outcome).
RANK = {"AWAITING_FUNDS": 0, "PROCESSING": 1, "SENDING": 2, "FAILED": 3, "COMPLETED": 4}
RANK |= {"REFUNDED": 4, "CANCELLED": 4, "EXPIRED": 1}
STEP_DELAY_S = 5  # the sandbox's default clock seconds per provider step
PAYMENT_WINDOW_S = 1800  # the sandbox's payment window (expiresAt - createdAt)
EXPIRE_AFTER_S = 600  # spec: EXPIRED 10 minutes after expiresAt
RETRY_AFTER_S = 1200  # spec: stuck at funds_converted 20 minutes
RECHECK_S = 8  # spec: one provider re-check per 8 s per transfer
SWEEP_S = 300  # spec: the background sweep runs every five minutes
TRANSFER_ROUTE = "GET /api/v1/transfers/{id}"  # the sandbox's call counter for re-checks
SANDBOX_BANK = "058"
ACCOUNT = "0123456789"


def wait_until(probe: Callable[[], T | None], *, timeout: float = 30.0, what: str = "it") -> T:
    """Poll ``probe`` (wall time: background tasks and chains) until it returns a value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


def intent_key() -> str:
    return "conf-" + secrets.token_hex(10)


def check_transfer(transfer: Any) -> dict[str, Any]:
    """The spec's Transfer resource: every field, the right types, a forward timeline."""
    assert isinstance(transfer, dict), transfer
    assert set(transfer) >= TRANSFER_FIELDS, set(transfer) ^ TRANSFER_FIELDS
    assert transfer["status"] in STATUSES
    assert transfer["side"] in ("buy", "sell")
    for name in ("id", "providerTransferId", "provider", "fiat", "token", "providerStatus"):
        assert isinstance(transfer[name], str)
        assert transfer[name], name
    for name in ("sourceAmount", "targetAmount"):
        assert Decimal(transfer[name]) > 0, transfer[name]
    assert isinstance(transfer["chainId"], int)
    assert isinstance(transfer["sandbox"], bool)
    assert isinstance(transfer["hasEmail"], bool)
    assert transfer["retryOfId"] is None or isinstance(transfer["retryOfId"], str)
    assert isinstance(transfer["rateLabel"], str)
    assert isinstance(transfer["feeLabel"], str)
    created = parse_iso_utc(transfer["createdAt"])
    assert parse_iso_utc(transfer["expiresAt"]) > created
    timeline = transfer["timeline"]
    assert timeline, "a timeline entry is recorded at creation"
    previous = None
    for entry in timeline:
        assert {"status", "providerStatus", "at"} <= set(entry), entry
        at = parse_iso_utc(entry["at"])
        if previous is not None:
            assert at >= previous, timeline
        previous = at
    last = timeline[-1]
    assert (last["status"], last["providerStatus"]) == (
        transfer["status"],
        transfer["providerStatus"],
    ), transfer
    return transfer


FORWARD = ("AWAITING_FUNDS", "PROCESSING", "SENDING", "COMPLETED")


def assert_moved_forward(before: str | None, transfer: Mapping[str, Any]) -> None:
    """Spec 2 "Transfer status": from the status ``before`` (an earlier read of the same
    transfer, None for the first) the transfer only moved forward, and a settled one stayed."""
    status = str(transfer["status"])
    if before is not None and before != status:
        assert before not in SETTLED, f"settled {before} became {status}: {transfer}"
        if before in FORWARD and status in FORWARD:
            assert FORWARD.index(status) > FORWARD.index(before), (
                f"status moved backwards from {before} to {status}: {transfer}"
            )


@dataclass
class Created:
    transfer: dict[str, Any]
    claim_token: str

    @property
    def id(self) -> str:
        return str(self.transfer["id"])


@dataclass
class Transfers:
    """The transfer API and the sandbox's transfer controls for one test."""

    ramp: Ramp
    seen: dict[str, str] = field(default_factory=dict)  # transfer id -> last status read

    # -- bodies and the public API --------------------------------------------------------

    def body(
        self, wallet: RampWallet, side: str = "buy", amount: str | None = None, **extra: Any
    ) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "side": side,
            "fiat": "NGN",
            "token": "NGNS",
            "amount": amount or ("10000" if side == "buy" else "500"),
            "intentKey": intent_key(),
        }
        if side == "sell":
            fields["payout"] = self.payout()
        fields.update(extra)
        return self.ramp.wallet_body(wallet, **fields)

    def payout(self, account_number: str = ACCOUNT, **extra: Any) -> dict[str, Any]:
        """A payout account resolved through the banks step."""
        resp = self.ramp.post(
            "banks/resolve",
            {
                "provider": self.ramp.provider,
                "bankCode": SANDBOX_BANK,
                "accountNumber": account_number,
            },
        )
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:300])}"
        name = resp.json()["accountName"]
        return {
            "bankCode": SANDBOX_BANK,
            "accountNumber": account_number,
            "accountName": name,
            **extra,
        }

    def post(self, body: dict[str, Any]) -> Response:
        return self.ramp.post("transfers", body)

    def create(self, body: dict[str, Any]) -> Created:
        resp = self.post(body)
        assert resp.status == 201, f"{resp.describe()}: {shown(resp.raw[:800])}"
        answer = resp.json()
        assert {"transfer", "claimToken"} <= set(answer), answer
        assert isinstance(answer["claimToken"], str)
        assert answer["claimToken"]
        return Created(check_transfer(answer["transfer"]), answer["claimToken"])

    def get(
        self, transfer_id: str, *, claim: str | None = None, wallet: str | None = None
    ) -> Response:
        headers = {"X-Ramp-Claim": claim} if claim is not None else None
        params = {"wallet": wallet} if wallet is not None else None
        resp = self.ramp.http.get(
            f"/v2/ramp/transfers/{transfer_id}", headers=headers, params=params
        )
        assert_request_id(resp)
        return resp

    def read(self, created: Created) -> dict[str, Any]:
        """The full view (the read re-checks the provider when the state is older than 8 s)."""
        resp = self.get(created.id, claim=created.claim_token)
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:500])}"
        transfer = check_transfer(resp.json()["transfer"])
        self._forward_only(transfer)
        return transfer

    def _forward_only(self, transfer: dict[str, Any]) -> None:
        """Spec 2 "Transfer status": statuses only move forward and a settled transfer never
        changes again, across every read this test made."""
        key = str(transfer["id"])
        assert_moved_forward(self.seen.get(key), transfer)
        self.seen[key] = str(transfer["status"])

    def listed(
        self, wallet: RampWallet, first: int = 20, after: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"wallet": wallet.address, "first": first}
        if after is not None:
            body["after"] = after
        resp = self.ramp.post("transfers/list", body)
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:500])}"
        answer = resp.json()
        assert {"transfers", "nextCursor"} <= set(answer), answer
        return dict(answer)

    def stored(self, wallet: RampWallet, transfer_id: str) -> dict[str, Any]:
        """The stored state through the list (which never re-checks the provider)."""
        for transfer in self.listed(wallet, first=100)["transfers"]:
            if transfer["id"] == transfer_id:
                return check_transfer(transfer)
        raise AssertionError(f"{transfer_id} is not in its wallet's list")

    def support(self, reference: str) -> Response:
        return self.ramp.post("support/transfer", {"reference": reference})

    def retry_body(self, wallet: RampWallet, **extra: Any) -> dict[str, Any]:
        return {
            "wallet": wallet.address,
            "chainId": self.ramp.chain_id,
            "proof": self.ramp.proof(wallet),
            **extra,
        }

    # -- the sandbox's transfer controls (our transfer id) ------------------------------------

    def control(self, transfer_id: str, action: str, body: Any = None) -> dict[str, Any]:
        sim = self.ramp._control()
        data = sim.call(
            "POST", f"ramp/transfers/{transfer_id}/{action}", body if body is not None else {}
        )
        assert isinstance(data, dict)
        return data

    def pay_in(self, transfer_id: str, mode: str = "exact") -> dict[str, Any]:
        return self.control(transfer_id, "pay-in", {"mode": mode})

    def provider_view(self, provider_transfer_id: str) -> dict[str, Any]:
        for transfer in self.ramp.state()["transfers"]:
            if transfer["id"] == provider_transfer_id:
                return dict(transfer)
        raise AssertionError(f"the sandbox has no transfer {provider_transfer_id}")

    @contextlib.contextmanager
    def webhooks(self, mode: str) -> Iterator[None]:
        """The sandbox's outgoing webhooks in ``mode`` for the block, delivered again after."""
        sim = self.ramp._control()
        sim.call("PUT", "ramp/webhooks", {"mode": mode})
        try:
            yield
        finally:
            sim.call("PUT", "ramp/webhooks", {"mode": "deliver"})

    @contextlib.contextmanager
    def rates_shifted(self, percent: float) -> Iterator[None]:
        """Move the sandbox's mid rate by ``percent`` for the block, then back."""
        sim = self.ramp._control()
        sim.call("POST", "ramp/rates/shift", {"percent": percent})
        try:
            yield
        finally:
            back = (1 / (1 + percent / 100) - 1) * 100
            sim.call("POST", "ramp/rates/shift", {"percent": back})

    # -- time ------------------------------------------------------------------------------

    def drive(
        self,
        created: Created,
        until: Callable[[dict[str, Any]], bool],
        *,
        step_s: int = STEP_DELAY_S + RECHECK_S,
        rounds: int = 12,
        what: str = "the transfer to move",
    ) -> dict[str, Any]:
        """Advance the clock a step at a time, reading (full view) until ``until(transfer)``;
        what follows an advance in the background (webhooks, chain receipts) is polled for
        briefly in wall time."""
        transfer = self.read(created)
        for _ in range(rounds):
            if until(transfer):
                return transfer
            self.ramp.advance(step_s)
            with contextlib.suppress(AssertionError):
                return wait_until(
                    lambda: t if until(t := self.read(created)) else None, timeout=2.0, what=what
                )
            transfer = self.read(created)
        assert until(transfer), f"{what}: {transfer}"
        return transfer

    # -- the simulator's outbox --------------------------------------------------------------

    def outbox(self, transfer_id: str) -> list[dict[str, Any]]:
        resp = self.ramp.http.get("/_sim/outbox", params={"transferId": transfer_id})
        assert resp.status == 200, f"{resp.describe()}: {shown(resp.raw[:300])}"
        emails = resp.json()["data"]["emails"]
        assert isinstance(emails, list)
        return emails

    # -- inbound provider webhooks (forged with the simulator's secret) ---------------------

    def send_webhook(
        self, transfer: dict[str, Any], *, event_id: str | None = None, secret: str | None = None
    ) -> Response:
        """POST a correctly signed provider webhook carrying ``transfer`` (the provider's
        object), as the provider would."""
        info = self.ramp._control().call("GET", "ramp")
        body = json.dumps(
            {
                "id": event_id or "evt_conf_" + secrets.token_hex(8),
                "type": "transfer.updated",
                "created": transfer.get("updatedAt"),
                "data": {"transfer": transfer},
            },
            separators=(",", ":"),
        ).encode()
        timestamp = int(time.time())
        key = (secret or info["webhook_secret"]).encode()
        digest = hmac.new(key, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        return self.ramp.http.post(
            f"/_provider/{self.ramp.provider}/webhooks",
            data=body,
            headers={
                "Content-Type": "application/json",
                "X-Provider-Signature": f"t={timestamp},v1={digest}",
            },
        )


# -- the chain side --------------------------------------------------------------------------


def ngns(chain: VenueChain) -> str:
    return chain.token("NGNS").address


def funded_ramp_wallet(
    chain: VenueChain, source: Wallet, ngns_amount: str
) -> tuple[RampWallet, Wallet]:
    """A fresh wallet holding ``ngns_amount`` NGNS and gas, from a demo wallet."""
    token = chain.token("NGNS")
    wallet = fund_wallet(chain, source, {token.address: whole(ngns_amount, token.decimals)})
    return RampWallet(address=wallet.address, private_key=wallet.private_key), wallet


def receipt_of(chain: VenueChain, tx_hash: str) -> dict[str, Any]:
    receipt = chain.rpc().rpc("eth_getTransactionReceipt", [tx_hash])
    assert isinstance(receipt, dict), f"no receipt for {tx_hash}"
    return receipt
