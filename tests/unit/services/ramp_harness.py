"""The ramp's transfer services wired to the in-memory fake provider, for unit tests."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from eth_account import Account

from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.proofs import ProofService, ProofSettings, TakerProof, taker_control_message
from simulator.services.ramp_access import RampGate, WalletCall
from simulator.services.ramp_catalog import CatalogSettings, ProviderDirectory, RampCatalog
from simulator.services.ramp_customers import CustomerSettings, KycDocument, RampCustomers
from simulator.services.ramp_emails import Outbox
from simulator.services.ramp_model import TransferRecord
from simulator.services.ramp_ports import PersonDetails
from simulator.services.ramp_retry import RampRetries, RetrySettings
from simulator.services.ramp_store import TransferStore
from simulator.services.ramp_sweep import RampSweep
from simulator.services.ramp_tracking import TrackingSettings, TransferTracker
from simulator.services.ramp_transfers import (
    Created,
    CreateRequest,
    PayoutRequest,
    RampTransfers,
    TransferSettings,
)
from simulator.services.ramp_webhooks import ProviderWebhooks
from tests.unit.services.fake_provider import REVIEW_DELAY_S, FakeProvider

PERSON = PersonDetails(
    first_name="Ada", last_name="Obi", email="ada@example.com", phone="+2348012345678"
)
PAYOUT = PayoutRequest(bank_code="058", account_number="0123456789", account_name="Ada Obi")
SECRET = "whsec_unit_test_secret"


class NoChain:
    async def is_valid_signature(self, *args: Any) -> bool:
        return False


def parse_transfer_stub(data: dict[str, Any]) -> Any:
    raise AssertionError("tests hand ProviderTransfer objects to the webhook parser directly")


class Ramp:
    def __init__(self) -> None:
        self.clock = Clock()
        self.fake = FakeProvider(self.clock)
        directory = ProviderDirectory(["ngnramp"])
        directory.attach(self.fake)
        self.catalog = RampCatalog(self.clock, directory, CatalogSettings(production=False))
        proofs = ProofService(self.clock, NoChain(), ProofSettings())
        gate = RampGate(proofs, self.catalog)
        self.customers = RampCustomers(
            self.clock, RandomSource(1), gate, self.catalog, CustomerSettings(kyc_reread_s=15)
        )
        self.outbox = Outbox(self.clock, RandomSource(2), "http://front.test")
        self.store = TransferStore()
        self.tracker = TransferTracker(
            self.clock, directory.attached, self.outbox, TrackingSettings()
        )
        self.transfers = RampTransfers(
            self.clock,
            RandomSource(3),
            gate,
            self.catalog,
            self.customers,
            self.store,
            self.tracker,
            self.outbox,
            TransferSettings(),
        )
        self.retries = RampRetries(
            self.clock,
            RandomSource(4),
            gate,
            self.customers,
            self.store,
            self.tracker,
            RetrySettings(),
        )
        self.parsed: dict[str, Any] = {}
        self.webhooks = ProviderWebhooks(
            self.store, self.tracker, {"ngnramp": SECRET}, lambda data: self.parsed[data["id"]]
        )
        self.sweep = RampSweep(self.clock, self.store, self.tracker, self.customers)
        self.account = Account.create()

    def proof(self, *, account: Any = None, chain_id: int = 97) -> TakerProof:
        """Signed by `account` (default: the harness wallet) for its own address."""
        nonce = os.urandom(32)
        issued = self.clock.millis()
        signer = account or self.account
        message = taker_control_message(signer.address, chain_id, nonce, issued)
        return TakerProof(nonce, issued, bytes(Account.sign_message(message, signer.key).signature))

    def call(self, **changes: Any) -> WalletCall:
        call = WalletCall(
            provider="ngnramp",
            wallet=self.account.address,
            chain_id=97,
            proof=self.proof(),
            caller="ip:127.0.0.1",
        )
        return dataclasses.replace(call, **changes)

    def request(self, side: str = "buy", **changes: Any) -> CreateRequest:
        call_changes = {k: changes.pop(k) for k in ("proof", "provider", "sandbox") if k in changes}
        request = CreateRequest(
            call=self.call(**call_changes),
            side=side,  # type: ignore[arg-type]
            fiat="NGN",
            token="NGNS",
            amount="10000" if side == "buy" else "100",
            intent_key="intent-key-000001",
            email=None,
            payout=PAYOUT if side == "sell" else None,
        )
        return dataclasses.replace(request, **changes)

    async def register(self, person: PersonDetails = PERSON) -> None:
        await self.customers.register(self.call(), person)

    async def verified(self, number: str = "A1234567") -> None:
        """Registered, documents submitted, the review cleared."""
        await self.register()
        await self.customers.submit_kyc(
            self.call(),
            KycDocument(
                type="passport", number=number, image_front="aGVsbG8=", selfie_image="aGVsbG8="
            ),
        )
        await self.clock.advance(REVIEW_DELAY_S + 1)

    async def create(self, side: str = "buy", **changes: Any) -> Created:
        return await self.transfers.create(self.request(side, **changes))

    def move(self, record: TransferRecord, status: str, **changes: Any) -> None:
        """The provider moves the transfer; nobody told us yet."""
        self.fake.set_status(record.provider_transfer_id, status, **changes)
