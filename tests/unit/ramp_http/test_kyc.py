"""``POST /v2/ramp/customers/kyc``, ``/kyc/status`` and ``/kyc/link`` over real loopback HTTP
with the fake provider: submission, status and the link; a record without a provider profile;
schema failures naming the field, an oversize image named (RA11: 4 MB decoded) at any size up
to the route's 64 MiB transport cap, the status's
fiat as an uppercase code, and an unreachable provider answered 502 on every KYC call."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.ramp_http.edge import (
    IMAGE,
    IMAGE_MAX_BYTES,
    Edge,
    error,
    image_of,
    invalid,
    ok,
    operation_body,
)
from tests.unit.services.fake_provider import MAX_BUY, REVIEW_DELAY_S


async def test_kyc_submission_status_and_link(edge: Edge) -> None:
    assert await ok(await edge.post("customers/kyc/status", edge.body())) == {"kyc": None}
    await edge.register()
    submitted = await ok(
        await edge.post(
            "customers/kyc",
            edge.body(
                document={
                    "type": "national-id",
                    "number": "A1234567",
                    "expiryDate": "2031-12-31",
                    "imageFront": "data:image/png;base64," + IMAGE,
                    "imageBack": IMAGE,
                },
                selfieImage="data:image/jpeg;base64,c2VsZmll",
            ),
        )
    )
    pending: dict[str, Any] = {
        "state": "pending",
        "providerStatus": "awaiting_review",
        "rejectionReasons": [],
        "requirementsDue": [],
        "level": None,
        "canDeposit": False,
        "maxBuy": {"amount": MAX_BUY, "currency": "NGN"},
    }
    assert submitted == {"kyc": pending}
    [(document, selfie)] = edge.fake.submissions
    assert document == {
        "type": "national-id",
        "number": "A1234567",
        "expiryDate": "2031-12-31",
        "imageFront": IMAGE,  # the data: prefix stripped
        "imageBack": IMAGE,
    }
    assert selfie == "c2VsZmll"
    assert await ok(await edge.post("customers/kyc/status", edge.body())) == {"kyc": pending}
    customer = (await edge.register(email="ada@example.org"))["customer"]
    assert customer["kycStatus"] == "pending"
    await edge.clock.advance(REVIEW_DELAY_S + 1)
    verified = await ok(await edge.post("customers/kyc/status", edge.body(fiat="NGN")))
    assert verified == {
        "kyc": {
            **pending,
            "state": "verified",
            "providerStatus": "approved",
            "level": "tier_1",
            "canDeposit": True,
        }
    }
    link = await ok(await edge.post("customers/kyc/link", edge.body()))
    [profile_id] = edge.fake.customers
    assert link == {"url": f"http://provider.invalid/verify/{profile_id}"}


async def test_a_record_without_a_profile(edge: Edge) -> None:
    for path in ("customers/kyc", "customers/kyc/link"):
        body = operation_body(edge, path)
        envelope = await error(await edge.post(path, body), 400, "invalid_request")
        assert envelope["details"]["reason"] == "no_provider_profile"  # no record at all
    await edge.register(firstName="Ada")
    for path in ("customers/kyc", "customers/kyc/link"):
        body = operation_body(edge, path)
        envelope = await error(await edge.post(path, body), 400, "invalid_request")
        assert envelope["details"]["reason"] == "no_provider_profile"
    assert edge.fake.calls["submit_kyc"] + edge.fake.calls["kyc_link"] == 0
    status = await ok(await edge.post("customers/kyc/status", edge.body()))
    assert status == {
        "kyc": {
            "state": "unverified",
            "providerStatus": "no_profile",
            "rejectionReasons": [],
            "requirementsDue": ["customerDetails"],
            "level": None,
            "canDeposit": False,
            "maxBuy": {"amount": MAX_BUY, "currency": "NGN"},
        }
    }


@pytest.mark.parametrize(
    ("document", "selfie", "field_name"),
    [
        ({"type": "visa"}, IMAGE, "document.type"),
        ({"type": "Passport"}, IMAGE, "document.type"),
        ({"number": "-A123"}, IMAGE, "document.number"),
        ({"expiryDate": "31-12-2031"}, IMAGE, "document.expiryDate"),
        ({"expiryDate": "2031-02-30"}, IMAGE, "document.expiryDate"),
        ({"imageFront": "not base64!"}, IMAGE, "document.imageFront"),
        ({"imageBack": "aGVsbG8"}, IMAGE, "document.imageBack"),  # unpadded
        ({}, "data:image/png,aGVsbG8=", "selfieImage"),  # a data: URL that is not base64
        ({}, "aGVs bG8=", "selfieImage"),
    ],
)
async def test_kyc_schema_failures_name_the_field(
    edge: Edge, document: dict[str, Any], selfie: str, field_name: str
) -> None:
    await edge.register()
    body = edge.kyc_body(selfieImage=selfie)
    body["document"] = {**body["document"], **document}
    assert await invalid(await edge.post("customers/kyc", body)) == [field_name]
    assert edge.fake.calls["submit_kyc"] == 0


@pytest.mark.parametrize("field_name", ["document.imageFront", "document.imageBack", "selfieImage"])
async def test_an_oversize_image_is_400_naming_it(edge: Edge, field_name: str) -> None:
    await edge.register()
    body = edge.kyc_body()
    place, _, name = field_name.rpartition(".")
    target = body["document"] if place else body
    target[name] = image_of(IMAGE_MAX_BYTES + 1)
    envelope = await error(await edge.post("customers/kyc", body), 400, "invalid_request")
    assert envelope["details"]["issues"][0]["field"] == field_name  # RA11: 400, not 413
    assert edge.fake.calls["submit_kyc"] == 0
    target[name] = "data:image/png;base64," + image_of(IMAGE_MAX_BYTES)  # the most allowed
    body["proof"] = edge.proof()
    await ok(await edge.post("customers/kyc", body))
    assert edge.fake.calls["submit_kyc"] == 1


@pytest.mark.parametrize(
    ("field_name", "mib"),
    [
        ("document.imageFront", 20),
        ("document.imageBack", 20),
        ("selfieImage", 20),
        ("selfieImage", 44),
    ],
)
async def test_an_image_far_over_the_limit_is_still_400_naming_it(
    edge: Edge, field_name: str, mib: int
) -> None:
    """Not 413: the whole body (a 20 MiB image was 413 under a 24 MiB route cap) is read up to
    the route's 64 MiB transport cap, so the answer can name the field (RA11)."""
    await edge.register()
    body = edge.kyc_body()
    place, _, name = field_name.rpartition(".")
    (body["document"] if place else body)[name] = image_of(mib * 1024 * 1024)
    envelope = await error(await edge.post("customers/kyc", body), 400, "invalid_request")
    issues = envelope["details"]["issues"]
    assert [issue["field"] for issue in issues] == [field_name]
    assert issues[0]["type"] == "value_error"
    assert f"at most {IMAGE_MAX_BYTES}" in issues[0]["message"]
    assert edge.fake.calls["submit_kyc"] == 0


async def test_kyc_status_fiat_is_an_uppercase_code(edge: Edge) -> None:
    await edge.register()
    assert await invalid(await edge.post("customers/kyc/status", edge.body(fiat="ngn"))) == ["fiat"]


async def test_an_unreachable_provider_is_502_on_the_kyc_calls(edge: Edge) -> None:
    await edge.register()
    edge.fake.down = True
    for path in ("customers/kyc", "customers/kyc/status", "customers/kyc/link"):
        resp = await edge.post(path, operation_body(edge, path))
        envelope = await error(resp, 502, "upstream_error")  # kyc/status: no review read yet
        assert envelope["details"]["reason"] == "provider_unreachable"
