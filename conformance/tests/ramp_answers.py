"""What the ramp's customer and KYC operations answer, checked the same way by every test of
test_ramp_customers_registration.py, test_ramp_customers_proofs.py and
test_ramp_customers_kyc.py: :func:`ok` is a 200 with its request id whose body is the payload
itself (no ``data`` wrapper), :func:`customer_of` the ``customer`` of a registration (its id and
whether the provider holds a profile) and :func:`kyc_of` a review state with exactly the spec's
fields (:data:`KYC_FIELDS`) and their types.
"""

from __future__ import annotations

from typing import Any

from conformance.wire.client import Response
from conformance.wire.response_checks import assert_request_id

KYC_FIELDS = {
    "state",
    "providerStatus",
    "rejectionReasons",
    "requirementsDue",
    "level",
    "canDeposit",
    "maxBuy",
}


def ok(resp: Response) -> dict[str, Any]:
    assert resp.status == 200, f"{resp.describe()}: {resp.raw[:500]!r}"
    assert_request_id(resp)
    body = resp.json()
    assert isinstance(body, dict), body
    assert "data" not in body, body
    return body


def customer_of(resp: Response) -> dict[str, Any]:
    customer = ok(resp)["customer"]
    assert isinstance(customer["id"], str)
    assert customer["id"]
    assert isinstance(customer["hasProviderCustomer"], bool)
    return dict(customer)


def kyc_of(resp: Response) -> dict[str, Any]:
    kyc = ok(resp)["kyc"]
    assert isinstance(kyc, dict), kyc
    assert set(kyc) >= KYC_FIELDS, kyc
    assert kyc["state"] in {"unverified", "pending", "verified", "rejected", "expired"}
    assert isinstance(kyc["providerStatus"], str)
    assert isinstance(kyc["rejectionReasons"], list)
    assert isinstance(kyc["requirementsDue"], list)
    assert kyc["level"] is None or isinstance(kyc["level"], str)
    assert isinstance(kyc["canDeposit"], bool)
    assert {"amount", "currency"} <= set(kyc["maxBuy"]), kyc
    return dict(kyc)
