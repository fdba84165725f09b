"""Transfer creation with the fake provider: the check order, idempotency per intentKey (RA13,
RA44), quote drift (RA14), reads with the 8 s re-check (RA22), list, support, emails."""

from __future__ import annotations

import asyncio
import dataclasses
from decimal import Decimal
from typing import Any

import pytest

from simulator.errors import (
    InvalidRequest,
    KycRequired,
    NotFound,
    ProofOfControlRequired,
    ProviderDeclined,
    QuoteDrift,
    RampCustomerRequired,
    UpstreamError,
)
from simulator.services.ramp.ports import Money, ProviderTransfer, ProviderUnreachable
from tests.unit.services.ramp_harness import PAYOUT, PERSON, Ramp


async def test_buy_is_created_with_a_claim_token_and_an_instructions_email() -> None:
    ramp = Ramp()
    await ramp.verified()
    created = await ramp.create(email="buyer@example.com")
    record = created.record
    assert not created.replay
    assert record.id.startswith("rtr_")
    assert record.status == "AWAITING_FUNDS"
    assert record.provider_status == "awaiting_funds"
    assert [(e.status, e.provider_status) for e in record.timeline] == [
        ("AWAITING_FUNDS", "awaiting_funds")
    ]
    assert created.claim_token.startswith("rcl_")
    assert record.has_email
    [booked] = ramp.fake.transfers.values()
    assert booked.reference == record.id
    assert record.provider_transfer_id == booked.id
    [email] = ramp.outbox.find(transfer_id=record.id)
    assert email.kind == "instructions"
    assert email.to == "buyer@example.com"
    link = f"http://front.test/ramp/transfers/{record.id}#claim={created.claim_token}"
    assert link in email.body
    view = await ramp.reads.read(record.id, claim=created.claim_token)
    assert view.id == record.id


async def test_email_falls_back_to_the_customer_record_and_none_means_none() -> None:
    ramp = Ramp()
    await ramp.verified()
    created = await ramp.create()
    assert created.record.email == PERSON.email
    assert [e.to for e in ramp.outbox.emails] == [PERSON.email]

    other = Ramp()
    await other.register(dataclasses.replace(PERSON, email=None))
    sell = await other.create("sell", intent_key="sell-without-mail")
    assert not sell.record.has_email
    assert other.outbox.emails == []


async def test_replay_returns_the_same_transfer_with_a_fresh_token() -> None:
    ramp = Ramp()
    await ramp.verified()
    first = await ramp.create()
    again = await ramp.create()
    assert again.replay
    assert again.record is first.record
    assert again.claim_token != first.claim_token
    assert ramp.fake.calls["create_transfer"] == 1
    for token in (first.claim_token, again.claim_token):  # every token issued stays valid
        assert (await ramp.reads.read(first.record.id, claim=token)).id == first.record.id
    assert len(ramp.outbox.emails) == 1  # one instructions email, not one per replay


async def test_same_key_different_body_after_booking_is_refused() -> None:
    ramp = Ramp()
    await ramp.verified()
    await ramp.create()
    with pytest.raises(InvalidRequest) as refused:
        await ramp.create(amount="20000")
    assert refused.value.details == {"reason": "intent_key_reused"}


async def test_parallel_duplicates_make_exactly_one_transfer() -> None:
    ramp = Ramp()
    await ramp.verified()
    ramp.fake.hold.add("create_transfer")
    first = asyncio.create_task(ramp.create())
    for _ in range(1000):  # until the first create waits inside the provider call
        if ramp.fake.calls["create_transfer"]:
            break
        await asyncio.sleep(0)
    results = await asyncio.gather(*(ramp.create() for _ in range(5)), return_exceptions=True)
    for result in results:
        assert isinstance(result, UpstreamError)
        assert result.details == {"reason": "intent_in_flight"}
    ramp.fake.release.set()
    created = await first
    assert len(ramp.fake.transfers) == 1
    assert len(ramp.store.records) == 1
    replay = await ramp.create()
    assert replay.record is created.record


async def test_a_provider_failure_before_booking_frees_the_key() -> None:
    ramp = Ramp()
    await ramp.verified()
    ramp.fake.hold.add("quote")
    ramp.fake.down = True
    ramp.fake.release.set()
    with pytest.raises(UpstreamError):
        await ramp.create()
    ramp.fake.down = False
    assert ramp.store.intents == {}
    created = await ramp.create()
    assert not created.replay


async def test_an_unanswered_booking_is_found_by_reference_not_booked_twice() -> None:
    ramp = Ramp()
    await ramp.verified()
    real = ramp.fake.create_transfer

    async def booked_then_lost(**kwargs: object) -> ProviderTransfer:
        await real(**kwargs)  # type: ignore[arg-type]
        raise ProviderUnreachable("connection reset after the provider booked it")

    ramp.fake.create_transfer = booked_then_lost  # type: ignore[method-assign]
    with pytest.raises(UpstreamError):
        await ramp.create()
    ramp.fake.create_transfer = real  # type: ignore[method-assign]
    created = await ramp.create()
    assert ramp.fake.calls["transfer_by_reference"] == 1
    assert len(ramp.fake.transfers) == 1
    [booked] = ramp.fake.transfers.values()
    assert booked.reference == created.record.id
    with pytest.raises(InvalidRequest):  # the key is still bound to that request
        await ramp.create(amount="20000", intent_key="intent-key-000001")


async def test_quote_drift_books_nothing_then_the_same_key_accepts() -> None:
    ramp = Ramp()
    await ramp.verified()
    shown = "9850.500000"
    ramp.fake.rate_shift = Decimal("-0.02")
    with pytest.raises(QuoteDrift) as drift:
        await ramp.create(expected_target_amount=shown)
    extra = drift.value.extra
    assert extra["expectedTargetAmount"] == shown
    assert Decimal(extra["actualTargetAmount"]) < Decimal(shown) * Decimal("0.99")
    assert set(extra) == {"expectedTargetAmount", "actualTargetAmount", "rateLabel", "feeLabel"}
    assert ramp.fake.calls["create_transfer"] == 0
    assert ramp.store.records == {}
    created = await ramp.create(expected_target_amount=extra["actualTargetAmount"])
    assert created.record.target_amount == extra["actualTargetAmount"]


async def test_drift_inside_one_percent_executes() -> None:
    ramp = Ramp()
    await ramp.verified()
    ramp.fake.rate_shift = Decimal("-0.005")
    created = await ramp.create(expected_target_amount="9850.500000")
    assert created.record.status == "AWAITING_FUNDS"


async def test_sell_drift_carries_the_recipient_and_the_retry_reuses_it() -> None:
    ramp = Ramp()
    await ramp.register()
    ramp.fake.rate_shift = Decimal("0.05")
    with pytest.raises(QuoteDrift) as drift:
        await ramp.create("sell", expected_target_amount="98.50")
    recipient_id = drift.value.extra["providerRecipientId"]
    assert recipient_id in ramp.fake.recipients
    payout = dataclasses.replace(PAYOUT, provider_recipient_id=recipient_id)
    created = await ramp.create("sell", payout=payout)
    assert created.record.recipient_id == recipient_id
    assert ramp.fake.calls["create_recipient"] == 1
    other = Ramp()
    other.store.recipients.update(ramp.store.recipients)
    await other.register()
    with pytest.raises(InvalidRequest):  # another wallet cannot borrow it
        await other.create("sell", payout=payout, intent_key="intent-key-000002")


async def test_customer_profile_and_kyc_rules() -> None:
    ramp = Ramp()
    with pytest.raises(InvalidRequest) as none:
        await ramp.create()
    assert none.value.details == {"reason": "no_customer_record"}
    await ramp.customers.register(ramp.call(), dataclasses.replace(PERSON, phone=None))
    with pytest.raises(RampCustomerRequired):
        await ramp.create()
    sell = await ramp.create("sell")  # RA8: the business profile
    assert sell.record.customer_id is None
    ramp.fake.caps = dataclasses.replace(ramp.fake.caps, business_profile_sells=False)
    with pytest.raises(RampCustomerRequired):
        await ramp.create("sell", intent_key="intent-key-000002")
    await ramp.register()
    with pytest.raises(KycRequired) as kyc:
        await ramp.create(intent_key="intent-key-000003")
    assert kyc.value.extra["kyc"].state == "unverified"
    assert kyc.value.extra["kyc"].max_buy == Money(amount="5000000", currency="NGN")


async def test_pending_and_nodeposit_reviews_are_kyc_required() -> None:
    ramp = Ramp()
    await ramp.verified(number="NODEPOSIT1")
    with pytest.raises(KycRequired) as kyc:
        await ramp.create()
    assert kyc.value.extra["kyc"].state == "verified"
    assert kyc.value.extra["kyc"].can_deposit is False


async def test_provider_refusals_are_422_with_its_sentence() -> None:
    ramp = Ramp()
    await ramp.verified()
    with pytest.raises(ProviderDeclined) as cap:
        await ramp.create(amount="5000001")
    assert cap.value.message == "Deposit exceeds the single-deposit limit"
    with pytest.raises(ProviderDeclined) as account:
        await ramp.create(
            "sell",
            payout=dataclasses.replace(PAYOUT, account_number="1230000"),
            intent_key="k" * 12,
        )
    assert account.value.message == "We could not verify this bank account"
    assert ramp.store.intents == {}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"amount": "0"}, "amount"),
        ({"amount": "0.00"}, "amount"),
        ({"amount": "1.001"}, "amount"),
        ({"expected_target_amount": "0"}, "expectedTargetAmount"),
        ({"accepted_terms": False}, "acceptedTerms"),
        ({"payout": PAYOUT}, "payout"),
    ],
)
async def test_shape_rules_are_400_before_the_proof(changes: dict[str, Any], field: str) -> None:
    ramp = Ramp()
    with pytest.raises(InvalidRequest) as bad:
        await ramp.create("buy", proof=None, **changes)
    assert bad.value.details is not None
    assert bad.value.details["issues"][0]["field"] == field


async def test_sell_without_payout_and_missing_proof() -> None:
    ramp = Ramp()
    with pytest.raises(InvalidRequest) as bad:
        await ramp.create("sell", payout=None)
    assert bad.value.details is not None
    assert bad.value.details["issues"][0]["field"] == "payout"
    with pytest.raises(ProofOfControlRequired):
        await ramp.create(proof=None)


async def test_reads_need_the_claim_or_the_wallet() -> None:
    ramp = Ramp()
    await ramp.register()
    created = await ramp.create("sell", email="x@example.com")
    record = created.record
    full = await ramp.reads.read(record.id, claim=created.claim_token)
    assert full.pay_out["accountNumber"] == "0123456789"
    masked = await ramp.reads.read(record.id, wallet=ramp.account.address.lower())
    assert masked.pay_out["accountNumber"] == "6789"
    wrong: tuple[dict[str, str], ...] = (
        {"claim": "rcl_wrong"},
        {"wallet": "0x" + "22" * 20},
        {},
    )
    for kwargs in wrong:
        with pytest.raises(NotFound):
            await ramp.reads.read(record.id, **kwargs)
    with pytest.raises(NotFound):
        await ramp.reads.read("rtr_nope", claim=created.claim_token)


async def test_read_recheck_is_throttled_to_one_call_per_8s_and_shared() -> None:
    ramp = Ramp()
    await ramp.register()
    created = await ramp.create("sell")
    record = created.record
    ramp.move(record, "funds_received")
    await ramp.reads.read(record.id, claim=created.claim_token)
    assert ramp.fake.calls["transfer"] == 0  # fresh: served from storage
    await ramp.clock.advance(5)
    await ramp.reads.read(record.id, claim=created.claim_token)
    assert ramp.fake.calls["transfer"] == 0
    await ramp.clock.advance(4)
    views = await asyncio.gather(
        *(ramp.reads.read(record.id, claim=created.claim_token) for _ in range(10))
    )
    assert ramp.fake.calls["transfer"] == 1
    assert {v.status for v in views} == {"PROCESSING"}
    await ramp.clock.advance(9)
    ramp.fake.down = True  # an unreachable provider leaves the stored state served
    view = await ramp.reads.read(record.id, claim=created.claim_token)
    assert view.status == "PROCESSING"
    assert ramp.fake.calls["transfer"] == 2
    await ramp.reads.read(record.id, claim=created.claim_token)
    assert ramp.fake.calls["transfer"] == 2  # the failed call counts for the throttle
    ramp.fake.down = False
    ramp.move(record, "completed")
    await ramp.clock.advance(9)
    assert (await ramp.reads.read(record.id, claim=created.claim_token)).status == "COMPLETED"
    await ramp.clock.advance(60)
    await ramp.reads.read(record.id, claim=created.claim_token)
    assert ramp.fake.calls["transfer"] == 3  # settled: storage only


async def test_list_pages_newest_first_and_support_lookup() -> None:
    ramp = Ramp()
    await ramp.register()
    ids = []
    for n in range(5):
        created = await ramp.create("sell", intent_key=f"intent-key-list-{n}")
        ids.append(created.record.id)
    page = ramp.reads.list(ramp.account.address, 2, None)
    assert [v.id for v in page.transfers] == ids[::-1][:2]
    assert page.transfers[0].pay_out["accountNumber"] == "6789"
    page2 = ramp.reads.list(ramp.account.address, 2, page.next_cursor)
    page3 = ramp.reads.list(ramp.account.address, 2, page2.next_cursor)
    assert [v.id for v in page2.transfers + page3.transfers] == ids[::-1][2:]
    assert page3.next_cursor is None
    assert ramp.reads.list("0x" + "33" * 20, 20, None).transfers == []
    with pytest.raises(InvalidRequest):
        ramp.reads.list(ramp.account.address, 2, "rtr_unknown")
    record = ramp.store.records[ids[0]]
    by_ours = ramp.reads.support(record.id)
    by_theirs = ramp.reads.support(record.provider_transfer_id)
    assert by_ours == by_theirs
    assert by_ours.pay_out["accountNumber"] == "******6789"
    with pytest.raises(NotFound):
        ramp.reads.support("ptr_unknown")
