"""Customer records with a fake provider: the RA5 admission order, registration (fewer fields,
refusal, update, serialised per wallet), details, KYC submission and review state, the 15 s
re-read throttle that stops once verified, links, the CustomerDirectory and background
re-reads."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from typing import Any

import pytest
from eth_account import Account

from simulator.clock import Clock
from simulator.errors import (
    Forbidden,
    InvalidRequest,
    NotFound,
    ProofOfControlInvalid,
    ProofOfControlRequired,
    ProofOfControlStale,
    ProviderDeclined,
    UpstreamError,
)
from simulator.randomness import RandomSource
from simulator.services.access.proofs import (
    ProofService,
    ProofSettings,
    TakerProof,
    taker_control_message,
)
from simulator.services.ramp.access import RampGate, WalletCall
from simulator.services.ramp.catalog import CatalogSettings, ProviderDirectory, RampCatalog
from simulator.services.ramp.customers import (
    FEWER_FIELDS_REASON,
    CustomerSettings,
    RampCustomers,
)
from simulator.services.ramp.ports import (
    CustomerAddress,
    KycDocument,
    PersonDetails,
    ProviderRefused,
)
from tests.unit.services.fake_provider import REVIEW_DELAY_S, FakeProvider

PERSON = PersonDetails(
    first_name="Ada", last_name="Obi", email="ada@example.com", phone="+2348012345678"
)


class NoChain:
    async def is_valid_signature(self, *args: Any) -> bool:
        return False


class Ramp:
    def __init__(self, *, production: bool = False) -> None:
        self.clock = Clock()
        self.fake = FakeProvider(self.clock)
        directory = ProviderDirectory(["ngnramp"])
        directory.attach(self.fake)
        self.catalog = RampCatalog(self.clock, directory, CatalogSettings(production=production))
        proofs = ProofService(self.clock, NoChain(), ProofSettings())
        self.customers = RampCustomers(
            self.clock,
            RandomSource(1),
            RampGate(proofs, self.catalog),
            self.catalog,
            CustomerSettings(kyc_reread_s=15),
        )
        self.account = Account.create()

    def proof(self, *, account: Any = None, offset_ms: int = 0, chain_id: int = 97) -> TakerProof:
        nonce = os.urandom(32)
        issued = self.clock.millis() + offset_ms
        message = taker_control_message(self.account.address, chain_id, nonce, issued)
        signer = account or self.account
        return TakerProof(nonce, issued, bytes(Account.sign_message(message, signer.key).signature))

    def call(self, proof: TakerProof | None = None, **changes: Any) -> WalletCall:
        call = WalletCall(
            provider="ngnramp",
            wallet=self.account.address,
            chain_id=97,
            proof=proof if proof is not None else self.proof(),
            caller="ip:127.0.0.1",
        )
        return dataclasses.replace(call, **changes)

    def document(self, number: str = "A1234567") -> KycDocument:
        return KycDocument(
            type="passport", number=number, image_front="aGVsbG8=", selfie_image="aGVsbG8="
        )


async def test_admission_order_sandbox_then_proof_then_provider() -> None:
    ramp = Ramp(production=True)
    with pytest.raises(InvalidRequest):  # the sandbox flag first, even without a proof
        await ramp.customers.register(ramp.call(sandbox=True, proof=None), PERSON)
    ramp = Ramp()
    with pytest.raises(ProofOfControlRequired):
        await ramp.customers.register(
            dataclasses.replace(ramp.call(), proof=None, provider="nope"), PERSON
        )
    with pytest.raises(ProofOfControlStale):
        await ramp.customers.details(ramp.call(ramp.proof(offset_ms=-61_000)))
    with pytest.raises(ProofOfControlInvalid):  # signed by someone else
        await ramp.customers.details(ramp.call(ramp.proof(account=Account.create())))
    with pytest.raises(ProofOfControlInvalid):  # signed for another chain
        await ramp.customers.details(ramp.call(ramp.proof(chain_id=56)))
    with pytest.raises(NotFound):
        await ramp.customers.details(ramp.call(provider="nope"))
    with pytest.raises(Forbidden):  # sandbox on a chain without a test account
        await ramp.customers.details(ramp.call(ramp.proof(chain_id=56), sandbox=True, chain_id=56))
    assert ramp.fake.calls["create_customer"] == 0


async def test_full_registration_makes_a_profile() -> None:
    ramp = Ramp()
    view = await ramp.customers.register(ramp.call(), PERSON)
    assert view.has_provider_customer
    assert view.rejection_reason is None
    assert view.kyc_status is None
    assert view.id.startswith("rcu_")
    [customer] = ramp.fake.customers.values()
    assert customer.reference == ramp.account.address.lower()
    record = ramp.customers.record("ngnramp", ramp.account.address.upper().replace("0X", "0x"))
    assert record is not None
    assert record.provider_customer_id == customer.id


async def test_fewer_fields_are_stored_without_a_profile_then_completed() -> None:
    ramp = Ramp()
    view = await ramp.customers.register(ramp.call(), PersonDetails(first_name="Ada"))
    assert not view.has_provider_customer
    assert view.rejection_reason == FEWER_FIELDS_REASON
    assert ramp.fake.calls["create_customer"] == 0
    record = await ramp.customers.details(ramp.call())
    assert record is not None
    assert record.first_name == "Ada"
    assert record.email is None
    completed = await ramp.customers.register(
        ramp.call(), dataclasses.replace(PERSON, first_name=None)
    )
    assert completed.has_provider_customer
    assert completed.id == view.id
    [customer] = ramp.fake.customers.values()
    assert customer.details.first_name == "Ada"


async def test_refusal_is_a_rejection_reason_not_an_error() -> None:
    ramp = Ramp()
    view = await ramp.customers.register(
        ramp.call(), dataclasses.replace(PERSON, last_name="Refused")
    )
    assert not view.has_provider_customer
    assert view.rejection_reason == "We cannot onboard this person"


async def test_update_patches_the_profile_and_forwards_birth_date_and_address() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    address = CustomerAddress(line1="1 Marina", city="Lagos", state="Lagos", postal_code="101001")
    await ramp.customers.register(
        ramp.call(),
        PersonDetails(email="new@example.com", birth_date="01-02-1990", address=address),
    )
    assert ramp.fake.calls["create_customer"] == 1
    assert ramp.fake.calls["update_customer"] == 1
    [customer] = ramp.fake.customers.values()
    assert customer.details.email == "new@example.com"
    assert customer.details.birth_date == "01-02-1990"
    assert customer.details.address == address
    record = await ramp.customers.details(ramp.call())
    assert record is not None
    assert record.email == "new@example.com"
    assert "01-02-1990" not in repr(record)  # the birth date is forwarded, never stored
    assert "Marina" not in repr(record)


async def test_refused_update_is_422_and_keeps_the_details() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)

    async def refuse(*args: Any) -> Any:
        raise ProviderRefused("We cannot change this profile")

    ramp.fake.update_customer = refuse  # type: ignore[method-assign,assignment]
    with pytest.raises(ProviderDeclined):
        await ramp.customers.register(ramp.call(), PersonDetails(email="x@example.com"))
    record = await ramp.customers.details(ramp.call())
    assert record is not None
    assert record.email == PERSON.email


async def test_concurrent_registrations_make_one_profile() -> None:
    ramp = Ramp()
    proof = ramp.proof()  # the identical proof, re-sent: accepted while fresh
    ramp.fake.hold.add("create_customer")
    tasks = [
        asyncio.create_task(ramp.customers.register(ramp.call(proof), PERSON)) for _ in range(6)
    ]
    await asyncio.sleep(0.01)
    ramp.fake.release.set()
    views = await asyncio.gather(*tasks)
    assert len(ramp.fake.customers) == 1
    assert ramp.fake.calls["create_customer"] == 1
    assert {v.id for v in views} == {views[0].id}
    assert all(v.has_provider_customer for v in views)


async def test_unreachable_provider_stores_nothing() -> None:
    ramp = Ramp()
    ramp.fake.down = True
    with pytest.raises(UpstreamError):
        await ramp.customers.register(ramp.call(), PERSON)
    assert await ramp.customers.details(ramp.call()) is None


async def test_kyc_needs_a_profile() -> None:
    ramp = Ramp()
    with pytest.raises(InvalidRequest):
        await ramp.customers.submit_kyc(ramp.call(), ramp.document())
    await ramp.customers.register(ramp.call(), PersonDetails(first_name="Ada"))
    for attempt in (
        ramp.customers.submit_kyc(ramp.call(), ramp.document()),
        ramp.customers.kyc_link(ramp.call()),
    ):
        with pytest.raises(InvalidRequest) as error:
            await attempt
        assert error.value.details == {"reason": "no_provider_profile"}
    assert ramp.fake.calls["submit_kyc"] == 0


async def test_kyc_status_without_record_or_profile() -> None:
    ramp = Ramp()
    assert await ramp.customers.kyc_status(ramp.call(), "NGN") is None
    await ramp.customers.register(ramp.call(), PersonDetails(first_name="Ada"))
    view = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert view is not None
    assert view.state == "unverified"
    assert view.provider_status == "no_profile"
    assert view.max_buy.amount == "5000000"


async def test_review_states_and_the_throttle() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    unverified = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert unverified is not None
    assert unverified.state == "unverified"
    submitted = await ramp.customers.submit_kyc(ramp.call(), ramp.document())
    assert submitted.state == "pending"
    assert submitted.provider_status == "awaiting_review"
    reads = ramp.fake.calls["kyc_review"]
    pending = await ramp.customers.kyc_status(ramp.call(), "NGN")  # read at submission: fresh
    assert pending is not None
    assert pending.state == "pending"
    assert ramp.fake.calls["kyc_review"] == reads
    await ramp.clock.advance(16)
    await asyncio.gather(*(ramp.customers.kyc_status(ramp.call(), "NGN") for _ in range(4)))
    assert ramp.fake.calls["kyc_review"] == reads + 1  # concurrent readers: one provider read
    await ramp.clock.advance(int(REVIEW_DELAY_S))
    verified = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert verified is not None
    assert verified.state == "verified"
    assert verified.can_deposit
    assert verified.level == "tier_1"
    assert verified.max_buy.currency == "NGN"
    await ramp.clock.advance(3600)
    await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert ramp.fake.calls["kyc_review"] == reads + 2  # no re-read once verified


@pytest.mark.parametrize(
    ("number", "state", "can_deposit"),
    [("REJECT-1", "rejected", False), ("NODEPOSIT-1", "verified", False)],
)
async def test_review_outcomes(number: str, state: str, can_deposit: bool) -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    await ramp.customers.submit_kyc(ramp.call(), ramp.document(number))
    await ramp.clock.advance(int(REVIEW_DELAY_S) + 1)
    view = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert view is not None
    assert view.state == state
    assert view.can_deposit is can_deposit
    if state == "rejected":
        assert view.rejection_reasons == ("Document image is not legible",)


async def test_expiry_is_seen_by_a_fresh_read_not_by_kyc_status() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    await ramp.customers.submit_kyc(ramp.call(), ramp.document("EXPIRE-1"))
    await ramp.clock.advance(int(REVIEW_DELAY_S) + 1)
    verified = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert verified is not None
    assert verified.state == "verified"
    await ramp.clock.advance(int(REVIEW_DELAY_S))
    still = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert still is not None
    assert still.state == "verified"
    record = ramp.customers.record("ngnramp", ramp.account.address)
    assert record is not None
    review = await ramp.customers.current_kyc(record, "NGN")
    assert review is not None
    assert review.status == "expired"
    expired = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert expired is not None
    assert expired.state == "expired"
    assert expired.requirements_due == ("document",)


async def test_unreachable_review_read_serves_the_last_one() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    with_no_review = Ramp()
    await with_no_review.customers.register(with_no_review.call(), PERSON)
    with_no_review.fake.down = True
    with pytest.raises(UpstreamError):
        await with_no_review.customers.kyc_status(with_no_review.call(), "NGN")
    await ramp.customers.submit_kyc(ramp.call(), ramp.document())
    ramp.fake.down = True
    await ramp.clock.advance(16)
    view = await ramp.customers.kyc_status(ramp.call(), "NGN")
    assert view is not None
    assert view.state == "pending"


async def test_background_refresh_reads_only_pending_reviews_due() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    assert await ramp.customers.refresh_pending() == 0  # no review yet
    await ramp.customers.submit_kyc(ramp.call(), ramp.document())
    assert await ramp.customers.refresh_pending() == 0  # read at submission
    await ramp.clock.advance(int(REVIEW_DELAY_S) + 1)
    assert await ramp.customers.refresh_pending() == 1
    assert await ramp.customers.refresh_pending() == 0  # verified now


async def test_kyc_link() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), PERSON)
    url = await ramp.customers.kyc_link(ramp.call())
    assert url.startswith("http://provider.invalid/verify/")
