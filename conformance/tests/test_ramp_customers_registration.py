"""Ramp customer registration and stored details: the four fields make a provider profile,
fewer fields are stored without one until completed, terms must be accepted, the provider's
refusal becomes a rejection reason, calling again updates the profile, birth date and address
are forwarded but never returned, person fields are validated, parallel registrations of one
wallet make exactly one profile, an unreachable provider stores nothing, an unknown provider is
404, and an email of 254 characters registers. Every test uses fresh wallets; those that read
the provider's call counters or change its config are ``sim_only`` (they use ``/_sim/ramp``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from conformance.calls.ramp import (
    CALL_CREATE_CUSTOMER,
    CALL_UPDATE_CUSTOMER,
    PERSON,
    Ramp,
    fresh_wallet,
)
from conformance.checks.stable_reads import KINDS, ReadPair, a_second_later, assert_stable
from conformance.deployment.sim_control import SimControl
from conformance.tests.ramp_answers import customer_of, ok
from conformance.wire.client import Client, Response
from conformance.wire.response_checks import assert_error, assert_issues

DETAILS_FIELDS = {"firstName", "lastName", "email", "phone", "registered"}
ADDRESS = {"line1": "1 Marina Road", "city": "Lagos", "state": "Lagos", "postalCode": "101001"}


@pytest.fixture
def controlled(sim: SimControl, http: Client) -> Iterator[Ramp]:
    with Ramp(http, sim).restoring() as ramp:
        yield ramp


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers",
    "ramp/resources/customer/response-of-registration",
    "ramp/endpoints/post-v2-ramp-customers/firstname-lastname-email-phone",
    "ramp/resources/customer/stored-service-first-name",
    "ramp/endpoints/post-v2-ramp-customers-details",
    "ramp/resources/customer/stored-details-response-details",
    "ramp/endpoints/every-wallet-naming-post-carries",
    "ramp/overview/properties-that-must-hold/no-api-key-no",
    "ramp/auth/item-1",
)
def test_registration_with_the_four_fields_makes_a_profile(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    customer = customer_of(ramp.register(wallet))
    assert customer["hasProviderCustomer"] is True
    assert customer["kycStatus"] is None, "null before any review"
    assert "rejectionReason" not in customer, customer
    details = ok(ramp.details(wallet))["details"]
    assert details == {**PERSON, "registered": True}
    if ramp.sim is not None:
        [profile] = ramp.provider_customers(wallet)
        assert profile["type"] == "individual"
        assert (profile["firstName"], profile["email"]) == (PERSON["firstName"], PERSON["email"])


@pytest.mark.spec(
    "ramp/resources/customer/stored-details-response-details",
    "ramp/endpoints/post-v2-ramp-customers-details",
)
def test_details_null_when_nobody_registered(ramp: Ramp) -> None:
    assert ok(ramp.details(fresh_wallet())) == {"details": None}


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/acceptedterms",
    "ramp/errors/400-invalid_request",
)
@pytest.mark.parametrize("terms", ["missing", False, None, "true", 1])
def test_accepted_terms_must_be_true(ramp: Ramp, terms: Any) -> None:
    wallet = fresh_wallet()
    before = ramp.calls(CALL_CREATE_CUSTOMER) if ramp.sim is not None else 0
    extra = {} if terms == "missing" else {"acceptedTerms": terms}
    resp = ramp.post("customers", ramp.wallet_body(wallet, **PERSON, **extra))
    assert_issues(assert_error(resp, 400, "invalid_request"), "acceptedTerms")
    assert ok(ramp.details(wallet))["details"] is None, "nothing stored"
    if ramp.sim is not None:
        assert ramp.calls(CALL_CREATE_CUSTOMER) == before, "the provider is never asked"


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/if-fewer-details-sent",
    "ramp/endpoints/post-v2-ramp-customers/firstname-lastname-email-phone",
    "ramp/endpoints/post-v2-ramp-customers/calling-again-same-wallet",
    "ramp/resources/customer/response-of-registration",
)
def test_fewer_fields_succeed_without_a_profile_until_completed(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    first = customer_of(ramp.register(wallet, firstName="Ada", email="ada@example.com"))
    assert first["hasProviderCustomer"] is False
    assert isinstance(first["rejectionReason"], str)
    assert first["rejectionReason"]
    details = ok(ramp.details(wallet))["details"]
    assert details == {
        "firstName": "Ada",
        "lastName": None,
        "email": "ada@example.com",
        "phone": None,
        "registered": False,
    }
    if ramp.sim is not None:
        assert ramp.provider_customers(wallet) == []
    done = customer_of(ramp.register(wallet, lastName="Obi", phone="+2348012345678"))
    assert done["hasProviderCustomer"] is True
    assert done["id"] == first["id"], "one record per wallet"
    assert "rejectionReason" not in done
    assert ok(ramp.details(wallet))["details"]["registered"] is True


@pytest.mark.sim_only(because="provider")
@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/if-fewer-details-sent",
    "ramp/resources/customer/response-of-registration",
)
def test_provider_refusal_is_a_rejection_reason(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    customer = customer_of(ramp.register(wallet, **{**PERSON, "lastName": "Refused"}))
    assert customer["hasProviderCustomer"] is False
    assert customer["rejectionReason"] == "We cannot onboard this person"
    assert ramp.provider_customers(wallet) == []
    assert ok(ramp.details(wallet))["details"]["registered"] is False


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/calling-again-same-wallet",
    "ramp/resources/customer/stored-service-first-name",
)
def test_calling_again_updates_the_profile(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    first = customer_of(ramp.register(wallet))
    patches = ramp.calls(CALL_UPDATE_CUSTOMER)
    again = customer_of(
        ramp.register(wallet, email="ada.new@example.com", birthDate="02-03-1991", address=ADDRESS)
    )
    assert again["id"] == first["id"]
    assert again["hasProviderCustomer"] is True
    assert ramp.calls(CALL_UPDATE_CUSTOMER) == patches + 1
    [profile] = ramp.provider_customers(wallet)
    assert profile["email"] == "ada.new@example.com"
    assert profile["lastName"] == PERSON["lastName"], "fields not sent are kept"
    assert ok(ramp.details(wallet))["details"]["email"] == "ada.new@example.com"


@pytest.mark.spec(
    "ramp/resources/customer/birth-date-address-forwarded",
    "ramp/endpoints/post-v2-ramp-customers/birthdate",
    "ramp/endpoints/post-v2-ramp-customers/address",
)
def test_birth_date_and_address_are_never_returned(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    address = {**ADDRESS, "line2": "Flat 4"}
    resp = ramp.register(wallet, **PERSON, birthDate="29-02-1992", address=address)
    customer = customer_of(resp)
    assert customer["hasProviderCustomer"] is True
    details = ok(ramp.details(wallet))["details"]
    assert set(details) >= DETAILS_FIELDS
    for raw in (resp.raw, ramp.details(wallet).raw):
        assert b"1992" not in raw
        assert b"Marina" not in raw
    if ramp.sim is not None:
        state = str(ramp.provider_customers(wallet))
        assert "1992" not in state, "not even the provider's view shows it back"


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-details",
    *KINDS["ramp_customer"].rules,
    *KINDS["ramp_customer_details"].rules,
)
def test_a_customer_reads_the_same_a_second_later_and_after_the_same_registration(
    ramp: Ramp,
) -> None:
    """One record per wallet: its details read twice a second apart are the same, and so are
    the customer and its details after the same registration is sent again (birth date and
    address are sent each time, and never returned)."""
    wallet = fresh_wallet()
    person = {**PERSON, "birthDate": "29-02-1992", "address": ADDRESS}
    customer = customer_of(ramp.register(wallet, **person))
    details = ok(ramp.details(wallet))["details"]
    read_at = time.monotonic()
    later = a_second_later(read_at, "details")
    again = ok(ramp.details(wallet))["details"]
    assert_stable("ramp_customer_details", wallet.address, details, again, what=later)
    resent = ReadPair("registration sent again")
    again = customer_of(ramp.register(wallet, **person))
    assert_stable("ramp_customer", customer["id"], customer, again, what=resent)
    again = ok(ramp.details(wallet))["details"]
    assert_stable("ramp_customer_details", wallet.address, details, again, what=resent)


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/birthdate",
    "ramp/endpoints/post-v2-ramp-customers/address",
    "ramp/errors/400-invalid_request",
)
@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"birthDate": "1990-01-02"}, "birthDate"),
        ({"birthDate": "31-02-1990"}, "birthDate"),
        ({"birthDate": "1-2-1990"}, "birthDate"),
        ({"address": {"line1": "1 Marina", "state": "Lagos", "postalCode": "101001"}}, "city"),
        ({"address": {**ADDRESS, "postalCode": ""}}, "postalCode"),
        ({"address": {**ADDRESS, "country": "GB"}}, "country"),
        ({"email": "not-an-email"}, "email"),
        ({"phone": "call me"}, "phone"),
        ({"firstName": ""}, "firstName"),
    ],
)
def test_person_fields_are_validated(ramp: Ramp, fields: dict[str, Any], named: str) -> None:
    wallet = fresh_wallet()
    resp = ramp.post(
        "customers", ramp.wallet_body(wallet, acceptedTerms=True, **{**PERSON, **fields})
    )
    assert_issues(assert_error(resp, 400, "invalid_request"), named)
    assert ok(ramp.details(wallet))["details"] is None


@pytest.mark.sim_only(because="provider")
@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/registration-serialized-per-wallet",
    "ramp/resources/proof-object/one-signature-valid-60",
)
def test_parallel_registrations_make_exactly_one_profile(controlled: Ramp) -> None:
    ramp = controlled
    ramp.configure(apiLatencyMs=300)  # each provider call is in flight long enough to race
    wallet = fresh_wallet()
    proof = ramp.proof(wallet)  # the identical proof, re-sent by every request
    body = ramp.wallet_body(wallet, proof, acceptedTerms=True, **PERSON)
    before = ramp.calls(CALL_CREATE_CUSTOMER)
    parallel = 8
    start = threading.Barrier(parallel)

    def register(_: int) -> Response:
        start.wait()
        return ramp.http.post("/v2/ramp/customers", json=body)

    with ThreadPoolExecutor(parallel) as pool:
        answers = list(pool.map(register, range(parallel)))
    customers = [customer_of(resp) for resp in answers]
    assert {c["id"] for c in customers} == {customers[0]["id"]}
    assert all(c["hasProviderCustomer"] for c in customers)
    assert len(ramp.provider_customers(wallet)) == 1
    assert ramp.calls(CALL_CREATE_CUSTOMER) == before + 1


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec("ramp/errors/502-upstream_error")
def test_unreachable_provider_stores_nothing(controlled: Ramp) -> None:
    ramp = controlled
    wallet = fresh_wallet()
    ramp.set_reachable(False)
    assert_error(ramp.register(wallet), 502, "upstream_error", "provider_unreachable")
    ramp.set_reachable(True)
    assert ok(ramp.details(wallet))["details"] is None
    assert customer_of(ramp.register(wallet))["hasProviderCustomer"] is True


@pytest.mark.spec("ramp/errors/404-not_found")
def test_unknown_provider_is_404(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    body = ramp.wallet_body(wallet, acceptedTerms=True, **PERSON)
    body["provider"] = "no-such-provider"
    assert_error(ramp.post("customers", body), 404, "not_found")


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers/firstname-lastname-email-phone",
    "ramp/resources/customer/stored-service-first-name",
)
def test_a_long_email_of_254_characters_registers(ramp: Ramp) -> None:
    # An address is at most 254 characters (RFC 5321); the provider must take what we accept.
    wallet = fresh_wallet()
    email = "a" * 63 + "@" + ".".join(c * 60 for c in "bcd") + ".example"  # 63 + 1 + 190
    assert len(email) == 254
    customer = ramp.registered(wallet, **{**PERSON, "email": email})
    assert customer["hasProviderCustomer"] is True
    details = ramp.details(wallet).json()["details"]
    assert details["email"] == email
