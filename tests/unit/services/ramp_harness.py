"""The ramp's transfer services wired to the in-memory fake provider, for unit tests; the
TakerControl proof signer; and the app over real loopback HTTP without chains (`serve_ramp`),
with the fake provider attached on demand (`attach_fake`), for tests of the ramp's HTTP edge."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from eth_account import Account

from simulator.api.http.appkeys import CLOCK, RAMP
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.app import create_app
from simulator.runtime.ramp import build_ramp
from simulator.services.access.proofs import (
    ProofService,
    ProofSettings,
    TakerProof,
    taker_control_message,
)
from simulator.services.ramp.access import WalletCall
from simulator.services.ramp.area import RampArea
from simulator.services.ramp.history import TRANSFER_STEPS
from simulator.services.ramp.model import TransferRecord
from simulator.services.ramp.ports import KycDocument, PersonDetails
from simulator.services.ramp.transfers import (
    CreateRequest,
    PayoutRequest,
    TransferCreation,
)
from simulator.services.shared.timelines import Timelines
from simulator.settings import RampSettings, load_settings
from tests.unit.services.fake_provider import REVIEW_DELAY_S, FakeProvider

Client = TestClient[web.Request, web.Application]

PERSON = PersonDetails(
    first_name="Ada", last_name="Obi", email="ada@example.com", phone="+2348012345678"
)
PAYOUT = PayoutRequest(bank_code="058", account_number="0123456789", account_name="Ada Obi")
SECRET = "whsec_unit_test_secret"


class NoChain:
    """The on-chain signature check for an EOA (no contract code): a signature that did not
    recover to the taker is simply not valid."""

    async def is_valid_signature(self, *args: Any) -> bool:
        return False


def sign_proof(
    clock: Clock,
    account: Any,
    chain_id: int = 97,
    *,
    taker: str | None = None,
    issued_at_ms: int | None = None,
) -> TakerProof:
    """A TakerControl proof signed by `account` for `taker` (default: its own address), issued
    now on `clock` unless `issued_at_ms` is given, with a fresh random nonce."""
    nonce = os.urandom(32)
    issued = clock.millis() if issued_at_ms is None else issued_at_ms
    message = taker_control_message(taker or account.address, chain_id, nonce, issued)
    return TakerProof(nonce, issued, bytes(Account.sign_message(message, account.key).signature))


def proof_json(proof: TakerProof) -> dict[str, Any]:
    """The wire shape of a proof (`proof` on every wallet-naming ramp POST)."""
    return {
        "nonce": "0x" + proof.nonce.hex(),
        "issuedAt": proof.issued_at_ms,
        "signature": "0x" + proof.signature.hex(),
    }


@asynccontextmanager
async def serve_ramp(overrides: dict[str, Any] | None = None) -> AsyncIterator[Client]:
    """The app without chains (seed 3, then `overrides` on the settings) behind a loopback test
    server. No provider is attached (see `attach_fake`). A proof signature that does not recover
    to the wallet is invalid (401): the chain-less app runs no chain to check a contract wallet
    on, and a chain it does not run answers "not valid" (adapters/access/signatures.py)."""
    app = create_app(load_settings(overrides={"seed": 3, **(overrides or {})}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


def client_app(client: Client) -> web.Application:
    app = client.app
    assert app is not None
    return app


def ramp_of(client: Client) -> RampArea:
    return client_app(client)[RAMP]


def attach_fake(client: Client, fake: FakeProvider | None = None) -> FakeProvider:
    """Put the fake provider (default: a new one on the app's clock) behind the ramp's port."""
    fake = fake or FakeProvider(client_app(client)[CLOCK])
    ramp_of(client).providers.attach(fake)
    return fake


class Ramp:
    """The ramp area as the app builds it (runtime/ramp.py `build_ramp`), with the fake provider
    attached behind its port and no contract wallets on any chain."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.fake = FakeProvider(self.clock)
        self.parsed: dict[str, Any] = {}  # what the provider's webhook bodies parse to, by id
        proofs = ProofService(self.clock, NoChain(), ProofSettings())
        self.area = build_ramp(
            RampSettings(reopen_url_base="http://front.test", webhook_secret=SECRET),
            self.clock,
            RandomSource(1),
            proofs,
            production=False,
            parse_transfer=lambda data: self.parsed[data["id"]],
            history=Timelines("transfers", self.clock.time, TRANSFER_STEPS, capacity=1000),
        )
        self.area.providers.attach(self.fake)
        self.catalog = self.area.catalog
        self.customers = self.area.customers
        self.outbox = self.area.emails
        self.store = self.area.transfers.store
        self.history = self.area.history
        self.tracker = self.area.tracker
        self.transfers = self.area.transfers
        self.reads = self.area.reads
        self.retries = self.area.retry
        self.webhooks = self.area.webhooks
        self.sweep = self.area.sweep
        self.account = Account.create()

    def proof(self, *, account: Any = None, chain_id: int = 97) -> TakerProof:
        """Signed by `account` (default: the harness wallet) for its own address."""
        return sign_proof(self.clock, account or self.account, chain_id)

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

    async def create(self, side: str = "buy", **changes: Any) -> TransferCreation:
        return await self.transfers.create(self.request(side, **changes))

    def move(self, record: TransferRecord, status: str, **changes: Any) -> None:
        """The provider moves the transfer; nobody told us yet."""
        self.fake.set_status(record.provider_transfer_id, status, **changes)
