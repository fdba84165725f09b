"""KYC review: the outcome is fixed when documents arrive (test values by document number) and
becomes visible one review delay later; what a reader sees is computed against the clock, so
advancing the clock is all it takes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from provider_sandbox.state import Review, SandboxCustomer

DECLINE_REASON = "Document image is not legible"
TEST_PREFIXES: tuple[tuple[str, Literal["reject", "nodeposit"]], ...] = (
    ("REJECT", "reject"),
    ("NODEPOSIT", "nodeposit"),
)
EXPIRE_PREFIX = "EXPIRE"


class ReviewConflict(Exception):
    """The control cannot decide this review (none submitted, or already decided)."""


def submit(customer: SandboxCustomer, document_number: str, now: float, delay_s: float) -> Review:
    outcome: Literal["approve", "reject", "nodeposit"] = "approve"
    for prefix, planned in TEST_PREFIXES:
        if document_number.upper().startswith(prefix):
            outcome = planned
    decide_at = now + delay_s
    expire_at = decide_at + delay_s if document_number.upper().startswith(EXPIRE_PREFIX) else None
    customer.review = Review(
        submitted_at=now,
        document_number=document_number,
        outcome=outcome,
        decide_at=decide_at,
        expire_at=expire_at,
    )
    return customer.review


def status_at(review: Review | None, now: float) -> str:
    if review is None:
        return "not_started"
    if now < review.decide_at:
        return "awaiting_review"
    if review.outcome == "reject":
        return "declined"
    if review.expire_at is not None and now >= review.expire_at:
        return "expired"
    return "approved"


def can_deposit(customer: SandboxCustomer, now: float) -> bool:
    review = customer.review
    return (
        status_at(review, now) == "approved" and review is not None and review.outcome == "approve"
    )


def review_view(
    customer: SandboxCustomer, now: float, max_buy: Decimal, fiat: str
) -> dict[str, Any]:
    status = status_at(customer.review, now)
    requirements = {
        "not_started": ["document", "selfie"],
        "declined": ["document", "selfie"],
        "expired": ["document"],
    }.get(status, [])
    return {
        "status": status,
        "reasons": [DECLINE_REASON] if status == "declined" else [],
        "requirementsDue": requirements,
        "level": "tier_1" if status == "approved" else None,
        "canDeposit": can_deposit(customer, now),
        "maxBuy": {"amount": f"{max_buy:f}", "currency": fiat},
    }


def decide(customer: SandboxCustomer, outcome: str, now: float) -> None:
    """The /sandbox control: approve or reject a pending review now, or expire a pending or
    approved one now."""
    review = customer.review
    status = status_at(review, now)
    if review is None:
        raise ReviewConflict("No KYC review has been submitted for this customer")
    if outcome == "expire":
        if status not in ("awaiting_review", "approved"):
            raise ReviewConflict(f"A review that is {status} cannot expire")
        review.outcome = "approve"
        review.decide_at = min(review.decide_at, now)
        review.expire_at = now
        return
    if status != "awaiting_review":
        raise ReviewConflict(f"The review is already {status}")
    review.outcome = "approve" if outcome == "approve" else "reject"
    review.decide_at = now
    review.expire_at = None
