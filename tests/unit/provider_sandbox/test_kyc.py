from __future__ import annotations

from decimal import Decimal

import pytest

from provider_sandbox import kyc
from provider_sandbox.state import SandboxCustomer

DELAY = 30.0


def customer() -> SandboxCustomer:
    return SandboxCustomer(
        id="cus_1",
        type="individual",
        reference="0xabc",
        first_name="Ada",
        last_name="Obi",
        email="a@example.com",
        phone="+234",
        birth_date=None,
        address=None,
        created_at=0.0,
    )


def view(person: SandboxCustomer, now: float) -> dict[str, object]:
    return kyc.review_view(person, now, Decimal("5000000"), "NGN")


def test_no_review_is_not_started() -> None:
    assert view(customer(), 0)["status"] == "not_started"
    assert view(customer(), 0)["requirementsDue"] == ["document", "selfie"]


@pytest.mark.parametrize(
    ("number", "status", "can_deposit", "reasons"),
    [
        ("A1234567", "approved", True, []),
        ("REJECT-42", "declined", False, ["Document image is not legible"]),
        ("NODEPOSIT-1", "approved", False, []),
        ("EXPIRE-1", "approved", True, []),
    ],
)
def test_outcome_by_document_number_after_one_delay(
    number: str, status: str, can_deposit: bool, reasons: list[str]
) -> None:
    person = customer()
    kyc.submit(person, number, now=100.0, delay_s=DELAY)
    assert view(person, 100.0 + DELAY - 0.001)["status"] == "awaiting_review"
    assert view(person, 100.0 + DELAY - 0.001)["canDeposit"] is False
    decided = view(person, 100.0 + DELAY)
    assert decided["status"] == status
    assert decided["canDeposit"] is can_deposit
    assert decided["reasons"] == reasons
    assert decided["maxBuy"] == {"amount": "5000000", "currency": "NGN"}


def test_expire_document_expires_one_more_delay_later() -> None:
    person = customer()
    kyc.submit(person, "EXPIRE-7", now=0.0, delay_s=DELAY)
    assert view(person, 2 * DELAY - 1)["level"] == "tier_1"
    expired = view(person, 2 * DELAY)
    assert expired["status"] == "expired"
    assert expired["requirementsDue"] == ["document"]
    assert expired["canDeposit"] is False


def test_control_decides_a_pending_review_now() -> None:
    person = customer()
    kyc.submit(person, "A1", now=0.0, delay_s=DELAY)
    kyc.decide(person, "reject", now=1.0)
    assert view(person, 1.0)["status"] == "declined"
    with pytest.raises(kyc.ReviewConflict):
        kyc.decide(person, "approve", now=2.0)


def test_control_expires_an_approved_review() -> None:
    person = customer()
    kyc.submit(person, "A1", now=0.0, delay_s=DELAY)
    kyc.decide(person, "expire", now=DELAY + 5)
    assert view(person, DELAY + 5)["status"] == "expired"


def test_control_needs_a_review() -> None:
    with pytest.raises(kyc.ReviewConflict):
        kyc.decide(customer(), "approve", now=0.0)
