"""``POST /v2/ramp/customers`` and ``/customers/details`` over real loopback HTTP with the fake
provider: the four fields make a provider profile (birth date and address forwarded, not
stored), fewer fields are stored without one until completed, the provider's refusal is a 200
with its sentence and a refused update a 422 that changes nothing, terms not accepted and schema
failures are 400 naming the field and ask nobody, an unregistered wallet's details are null, an
unreachable provider stores no first registration, and the provider switches do not apply."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from simulator.services.ramp.customers import FEWER_FIELDS_REASON
from tests.unit.ramp_http.edge import PERSON, UPDATE_REFUSAL, Edge, error, invalid, ok


async def test_registration_with_the_four_fields_makes_a_provider_profile(edge: Edge) -> None:
    address = {"line1": "1 Marina", "city": "Lagos", "state": "Lagos", "postalCode": "100001"}
    body = await edge.register(**PERSON, birthDate="31-01-1990", address=address)
    customer = body["customer"]
    assert set(body) == {"customer"}
    assert customer["id"].startswith("rcu_")
    assert customer == {"id": customer["id"], "kycStatus": None, "hasProviderCustomer": True}
    [profile] = edge.fake.customers.values()
    assert profile.reference == edge.wallet.lower()
    assert profile.details.birth_date == "31-01-1990"  # forwarded, not stored
    assert profile.details.address is not None
    assert profile.details.address.postal_code == "100001"
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details == {"details": {**PERSON, "registered": True}}


async def test_registration_with_fewer_fields_stores_them_without_a_profile(edge: Edge) -> None:
    body = await edge.register(firstName="Ada", email="ada@example.com")
    assert body["customer"]["hasProviderCustomer"] is False
    assert body["customer"]["rejectionReason"] == FEWER_FIELDS_REASON
    assert edge.fake.calls["create_customer"] == 0
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details == {
        "details": {
            "firstName": "Ada",
            "lastName": None,
            "email": "ada@example.com",
            "phone": None,
            "registered": False,
        }
    }
    # Calling again completes the four fields (RA35): the profile is made on that call.
    body = await edge.register(lastName="Obi", phone="+2348012345678")
    assert body["customer"] == {
        "id": body["customer"]["id"],
        "kycStatus": None,
        "hasProviderCustomer": True,
    }
    assert edge.fake.calls["create_customer"] == 1


async def test_a_refused_person_is_200_with_the_providers_sentence(edge: Edge) -> None:
    body = await edge.register(**{**PERSON, "lastName": "Refused"})
    assert body["customer"]["hasProviderCustomer"] is False
    assert body["customer"]["rejectionReason"] == "We cannot onboard this person"


async def test_a_refused_update_is_422_and_changes_nothing(edge: Edge) -> None:
    await edge.register()
    resp = await edge.post("customers", edge.body(acceptedTerms=True, lastName="Refused"))
    envelope = await error(resp, 422, "provider_refused")
    assert envelope["message"] == UPDATE_REFUSAL
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details["details"]["lastName"] == "Obi"


@pytest.mark.parametrize("terms", [False, None, 1, "true", "missing"])
async def test_terms_not_accepted_is_400_and_asks_nobody(edge: Edge, terms: Any) -> None:
    body = edge.body(**PERSON)
    if terms != "missing":
        body["acceptedTerms"] = terms
    assert await invalid(await edge.post("customers", body)) == ["acceptedTerms"]
    assert edge.fake.calls["create_customer"] == 0
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


@pytest.mark.parametrize(
    ("changes", "field_name"),
    [
        ({"birthDate": "1990-01-31"}, "birthDate"),  # yyyy-mm-dd: the spec's is dd-mm-yyyy
        ({"birthDate": "31/01/1990"}, "birthDate"),
        ({"birthDate": "31-02-1990"}, "birthDate"),  # not a calendar date
        ({"birthDate": "31-01-1899"}, "birthDate"),
        ({"email": "ada.example.com"}, "email"),
        ({"phone": "12345"}, "phone"),
        ({"firstName": "   "}, "firstName"),
        ({"lastName": "x" * 101}, "lastName"),
        (
            {"address": {"line1": "1 Marina", "state": "Lagos", "postalCode": "100001"}},
            "address.city",
        ),
        (
            {
                "address": {
                    "line1": "1 Marina",
                    "city": "Lagos",
                    "state": "Lagos",
                    "postalCode": "100001",
                    "country": "NG",
                }
            },
            "address.country",
        ),
        ({"chainId": "97"}, "chainId"),
        ({"wallet": "0x1234"}, "wallet"),
        ({"nickname": "ada"}, "nickname"),
    ],
)
async def test_customer_schema_failures_name_the_field(
    edge: Edge, changes: dict[str, Any], field_name: str
) -> None:
    body = edge.body(acceptedTerms=True, **{**PERSON, **changes})
    assert await invalid(await edge.post("customers", body)) == [field_name]
    assert edge.fake.calls["create_customer"] == 0


async def test_details_of_an_unregistered_wallet_are_null(edge: Edge) -> None:
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


async def test_an_unreachable_provider_stores_no_first_registration(edge: Edge) -> None:
    edge.fake.down = True
    envelope = await error(
        await edge.post("customers", edge.body(acceptedTerms=True, **PERSON)),
        502,
        "upstream_error",
    )
    assert envelope["details"]["reason"] == "provider_unreachable"
    edge.fake.down = False
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


async def test_customer_calls_ignore_the_switches(edge: Edge) -> None:
    edge.fake.caps = replace(edge.fake.caps, enabled=False, sides=())  # RA32
    assert (await edge.register())["customer"]["hasProviderCustomer"] is True
    await ok(await edge.post("customers/kyc/link", edge.body()))
