"""Ramp customers and identity verification: registration (terms, the four fields, refusal,
updates, serialised per wallet), stored details, the proof of control on every wallet call,
KYC submission (document types, images), the review state machine driven by the provider's
test values and the clock, the kyc/status re-read throttle, and the verification link.

Every test uses fresh wallets. Tests that read the provider's call counters or change its
config are ``sim_only`` (they use ``/_sim/ramp``)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from conformance.client import Client, Response
from conformance.ramp import (
    CALL_CREATE_CUSTOMER,
    CALL_KYC_LINK,
    CALL_READ_KYC,
    CALL_SUBMIT_KYC,
    CALL_UPDATE_CUSTOMER,
    IMAGE_MAX_BYTES,
    KYC_REREAD_S,
    PERSON,
    REVIEW_DELAY_S,
    SMALL_IMAGE,
    Ramp,
    document,
    fresh_wallet,
    image_b64,
)
from conformance.response_checks import assert_error, assert_issues, assert_request_id
from conformance.sim_control import SimControl

KYC_FIELDS = {
    "state",
    "providerStatus",
    "rejectionReasons",
    "requirementsDue",
    "level",
    "canDeposit",
    "maxBuy",
}
DETAILS_FIELDS = {"firstName", "lastName", "email", "phone", "registered"}
ADDRESS = {"line1": "1 Marina Road", "city": "Lagos", "state": "Lagos", "postalCode": "101001"}


@pytest.fixture
def controlled(sim: SimControl, http: Client) -> Iterator[Ramp]:
    with Ramp(http, sim).restoring() as ramp:
        yield ramp


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
    assert set(kyc) == KYC_FIELDS, kyc
    assert kyc["state"] in {"unverified", "pending", "verified", "rejected", "expired"}
    assert isinstance(kyc["providerStatus"], str)
    assert isinstance(kyc["rejectionReasons"], list)
    assert isinstance(kyc["requirementsDue"], list)
    assert kyc["level"] is None or isinstance(kyc["level"], str)
    assert isinstance(kyc["canDeposit"], bool)
    assert set(kyc["maxBuy"]) == {"amount", "currency"}, kyc
    return dict(kyc)


# -- registration --------------------------------------------------------------------------


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


@pytest.mark.sim_only
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
    assert set(details) == DETAILS_FIELDS
    for raw in (resp.raw, ramp.details(wallet).raw):
        assert b"1992" not in raw
        assert b"Marina" not in raw
    if ramp.sim is not None:
        state = str(ramp.provider_customers(wallet))
        assert "1992" not in state, "not even the provider's view shows it back"


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


@pytest.mark.sim_only
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


@pytest.mark.sim_only
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


# -- proof of control ----------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/auth/item-2",
    "ramp/errors/401-unauthorized",
    "ramp/resources/proof-object/nonce-issuedat-signature-takercontrol",
    "ramp/limits/proof-validity",
    "ramp/endpoints/post-v2-ramp-customers/no-read-without-proof",
    "ramp/auth/item-1",
)
def test_proof_rules_on_every_wallet_call(ramp: Ramp) -> None:
    wallet, other = fresh_wallet(), fresh_wallet()
    now = ramp.now_ms()
    bad_proofs = {
        "proof_of_control_required": None,
        "proof_of_control_stale": ramp.proof(wallet, issued_at_ms=now - 61_000),
        "proof_of_control_invalid": ramp.proof(wallet, signer=other),
    }
    wrong_chain = ramp.proof(wallet, chain_id=56)
    for path in ("customers", "customers/details", "customers/kyc", "customers/kyc/status"):
        extra: dict[str, Any] = {"acceptedTerms": True} if path == "customers" else {}
        if path == "customers/kyc":
            extra = {"document": document(), "selfieImage": SMALL_IMAGE}
        for reason, proof in bad_proofs.items():
            body = ramp.wallet_body(wallet, **extra)
            body["proof"] = proof
            assert_error(ramp.post(path, body), 401, "unauthorized", reason)
        body = ramp.wallet_body(wallet, wrong_chain, **extra)
        assert_error(ramp.post(path, body), 401, "unauthorized", "proof_of_control_invalid")
    assert ok(ramp.details(wallet))["details"] is None, "nothing was registered"


@pytest.mark.spec("ramp/auth/item-2", "ramp/errors/401-unauthorized")
def test_replayed_nonce_is_refused(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    nonce = secrets.token_bytes(32)
    now = ramp.now_ms()
    first = ramp.proof(wallet, nonce=nonce, issued_at_ms=now)
    ok(ramp.post("customers/details", ramp.wallet_body(wallet, first)))
    replayed = ramp.proof(wallet, nonce=nonce, issued_at_ms=now - 1000)  # same nonce, new contents
    resp = ramp.post("customers/details", ramp.wallet_body(wallet, replayed))
    assert_error(resp, 401, "unauthorized", "proof_of_control_replayed")


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/resources/proof-object/one-signature-valid-60",
    "ramp/limits/proof-validity",
)
def test_one_signature_serves_details_kyc_and_status_for_60_seconds(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    proof = ramp.proof(wallet)
    customer_of(
        ramp.post("customers", ramp.wallet_body(wallet, proof, acceptedTerms=True, **PERSON))
    )
    ok(ramp.post("customers/details", ramp.wallet_body(wallet, proof)))
    kyc = ramp.wallet_body(wallet, proof, document=document(), selfieImage=SMALL_IMAGE)
    assert kyc_of(ramp.post("customers/kyc", kyc))["state"] == "pending"
    kyc_of(ramp.post("customers/kyc/status", ramp.wallet_body(wallet, proof)))
    ok(ramp.post("customers/kyc/link", ramp.wallet_body(wallet, proof)))
    ramp.advance(61)
    resp = ramp.post("customers/details", ramp.wallet_body(wallet, proof))
    assert_error(resp, 401, "unauthorized", "proof_of_control_stale")


# -- KYC submission ------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc",
    "ramp/endpoints/post-v2-ramp-customers-kyc/body-adds-document-type",
    "ramp/endpoints/post-v2-ramp-customers-kyc/response-review-state-right",
    "ramp/states/kyc-state/unverified-documents-submitted",
    "ramp/resources/kyc-review-state/state",
    "ramp/resources/kyc-review-state/providerstatus",
)
@pytest.mark.parametrize("kind", ["passport", "national-id", "drivers-license"])
def test_kyc_accepts_the_three_document_types(ramp: Ramp, kind: str) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    assert kyc_of(ramp.kyc_status(wallet))["state"] == "unverified"
    kyc = kyc_of(ramp.submit_kyc(wallet, kind=kind))
    assert kyc["state"] == "pending"
    assert kyc["providerStatus"] == "awaiting_review"


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc/body-adds-document-type",
    "ramp/errors/400-invalid_request",
)
@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"type": "visa"}, "type"),
        ({"expiryDate": "01-05-2031"}, "expiryDate"),
        ({"number": ""}, "number"),
        ({"imageFront": "not base64!"}, "imageFront"),
        ({"imageFront": "data:image/png,aGVsbG8="}, "imageFront"),
    ],
)
def test_kyc_document_is_validated(ramp: Ramp, change: dict[str, Any], named: str) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = ramp.wallet_body(wallet, document=document(**change), selfieImage=SMALL_IMAGE)
    assert_issues(assert_error(ramp.post("customers/kyc", body), 400, "invalid_request"), named)


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc/data-url-prefix-stripped",
    "ramp/endpoints/post-v2-ramp-customers-kyc/documents-forwarded-not-kept",
)
def test_kyc_data_url_prefix_is_stripped(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    prefixed = "data:image/jpeg;base64," + SMALL_IMAGE
    body = ramp.wallet_body(
        wallet,
        document=document(imageFront=prefixed, imageBack=prefixed),
        selfieImage="data:image/png;base64," + SMALL_IMAGE,
    )
    assert kyc_of(ramp.post("customers/kyc", body))["state"] == "pending"
    # Not kept: nothing of the documents comes back anywhere.
    assert SMALL_IMAGE[:64].encode() not in ramp.details(wallet).raw


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc/oversize-image-400-naming",
    "ramp/limits/images",
    "ramp/errors/400-invalid_request",
)
@pytest.mark.parametrize("field", ["imageFront", "imageBack", "selfieImage"])
def test_kyc_oversize_image_is_400_naming_it(ramp: Ramp, field: str) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    before = ramp.calls(CALL_SUBMIT_KYC) if ramp.sim is not None else 0
    big = image_b64(IMAGE_MAX_BYTES + 1)
    body = ramp.wallet_body(wallet, document=document(), selfieImage=SMALL_IMAGE)
    if field == "selfieImage":
        body["selfieImage"] = "data:image/png;base64," + big
    else:
        body["document"][field] = big
    error = assert_error(ramp.post("customers/kyc", body), 400, "invalid_request")
    [issue] = assert_issues(error, field)
    assert issue["field"] in (field, f"document.{field}")
    if ramp.sim is not None:
        assert ramp.calls(CALL_SUBMIT_KYC) == before, "nothing forwarded"


@pytest.mark.spec("ramp/limits/images", "ramp/endpoints/post-v2-ramp-customers-kyc")
def test_kyc_images_of_exactly_four_megabytes_are_accepted(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    full = image_b64(IMAGE_MAX_BYTES)
    body = ramp.wallet_body(
        wallet, document=document(imageFront=full, imageBack=full), selfieImage=full
    )
    resp = ramp.http.post("/v2/ramp/customers/kyc", json=body, timeout=60)
    assert kyc_of(resp)["state"] == "pending"


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc/wallet-needs-provider-profile",
    "ramp/endpoints/post-v2-ramp-customers-kyc-link",
    "ramp/errors/400-invalid_request",
)
def test_kyc_and_link_need_a_provider_profile(ramp: Ramp) -> None:
    nobody, partial = fresh_wallet(), fresh_wallet()
    customer_of(ramp.register(partial, firstName="Ada"))
    for wallet in (nobody, partial):
        assert_error(ramp.submit_kyc(wallet), 400, "invalid_request", "no_provider_profile")
        assert_error(ramp.kyc_link(wallet), 400, "invalid_request", "no_provider_profile")


# -- KYC review state ----------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc-status",
    "ramp/resources/kyc-review-state/state",
)
def test_kyc_status_without_a_record_or_profile(ramp: Ramp) -> None:
    assert ok(ramp.kyc_status(fresh_wallet())) == {"kyc": None}
    wallet = fresh_wallet()
    customer_of(ramp.register(wallet, firstName="Ada"))
    kyc = kyc_of(ramp.kyc_status(wallet))
    assert kyc["state"] == "unverified"
    assert kyc["canDeposit"] is False


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/states/kyc-state/unverified-documents-submitted",
    "ramp/states/kyc-state/pending-provider-review-cleared",
    "ramp/states/kyc-state/provider-sends-no-webhook",
    "ramp/resources/kyc-review-state/state",
    "ramp/resources/kyc-review-state/providerstatus",
    "ramp/resources/kyc-review-state/level",
    "ramp/resources/kyc-review-state/candeposit",
    "ramp/resources/kyc-review-state/maxbuy",
    "ramp/resources/kyc-review-state/requirementsdue",
    "ramp/overview/flows/buy",
)
def test_review_clears_to_verified_on_the_clock(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    customer = ramp.registered(wallet)
    unverified = kyc_of(ramp.kyc_status(wallet))
    assert unverified["state"] == "unverified"
    assert unverified["canDeposit"] is False
    assert kyc_of(ramp.submit_kyc(wallet))["state"] == "pending"
    ramp.advance(REVIEW_DELAY_S + 1)
    kyc = kyc_of(ramp.kyc_status(wallet))
    assert kyc["state"] == "verified"
    assert kyc["providerStatus"] == "approved"
    assert kyc["level"] == "tier_1"
    assert kyc["canDeposit"] is True
    assert kyc["rejectionReasons"] == []
    assert kyc["requirementsDue"] == []
    assert kyc["maxBuy"] == {"amount": "5000000", "currency": "NGN"}
    again = customer_of(ramp.register(wallet, phone="+2348099999999"))
    assert again["id"] == customer["id"]
    assert again["kycStatus"] == "verified"


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/states/kyc-state/pending-provider-declined",
    "ramp/resources/kyc-review-state/rejectionreasons",
    "ramp/resources/kyc-review-state/requirementsdue",
)
def test_review_declined_is_rejected_with_reasons(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    kyc_of(ramp.submit_kyc(wallet, "REJECT-0001"))
    ramp.advance(REVIEW_DELAY_S + 1)
    kyc = kyc_of(ramp.kyc_status(wallet))
    assert kyc["state"] == "rejected"
    assert kyc["providerStatus"] == "declined"
    assert kyc["rejectionReasons"] == ["Document image is not legible"]
    assert kyc["canDeposit"] is False
    assert kyc["requirementsDue"], "the form is shown again"
    # Documents sent again go back to review.
    assert kyc_of(ramp.submit_kyc(wallet, "A7654321"))["state"] == "pending"


@pytest.mark.sim_only
@pytest.mark.spec("ramp/resources/kyc-review-state/candeposit")
def test_verified_without_deposits(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    kyc_of(ramp.submit_kyc(wallet, "NODEPOSIT-1"))
    ramp.advance(REVIEW_DELAY_S + 1)
    kyc = kyc_of(ramp.kyc_status(wallet))
    assert kyc["state"] == "verified"
    assert kyc["canDeposit"] is False


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/states/kyc-state/verified-provider-wants-fresh-documents",
    "ramp/states/kyc-state/buy-can-run-only",
    "ramp/errors/422-kyc_required",
)
def test_verified_then_expired_is_seen_by_the_next_buy(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet, "EXPIRE-0001")
    ramp.advance(REVIEW_DELAY_S + 1)  # the provider now wants fresh documents
    buy = ramp.wallet_body(
        wallet,
        side="buy",
        fiat="NGN",
        token="NGNS",
        amount="10000",
        intentKey="expired-" + secrets.token_hex(8),
        acceptedTerms=True,
    )
    error = assert_error(ramp.post("transfers", buy), 422, "kyc_required")
    assert error["kyc"]["state"] == "expired"
    assert error["kyc"]["requirementsDue"] == ["document"]
    kyc = kyc_of(ramp.kyc_status(wallet))
    assert kyc["state"] == "expired"
    assert kyc["providerStatus"] == "expired"


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/limits/kyc-provider-re-read-throttle",
    "ramp/states/kyc-state/provider-sends-no-webhook",
    "ramp/endpoints/post-v2-ramp-customers-kyc-status",
)
def test_kyc_status_rereads_at_most_every_15_seconds_until_verified(ramp: Ramp) -> None:
    ramp.settle_background()  # reviews other tests left pending are decided and read
    wallet = fresh_wallet()
    ramp.registered(wallet)
    kyc_of(ramp.submit_kyc(wallet))
    reads = ramp.calls(CALL_READ_KYC)
    for _ in range(3):
        assert kyc_of(ramp.kyc_status(wallet))["state"] == "pending"
    assert ramp.calls(CALL_READ_KYC) == reads, "the submission's answer is fresh"
    ramp.advance(KYC_REREAD_S + 1)
    for _ in range(3):
        assert kyc_of(ramp.kyc_status(wallet))["state"] == "pending"
    # Exactly one provider read for this person since the clock moved (by these polls or by the
    # background re-read of pending reviews, whichever came first).
    assert ramp.calls(CALL_READ_KYC) == reads + 1
    ramp.advance(KYC_REREAD_S + 1)  # 32 s after submission: the review has cleared
    assert kyc_of(ramp.kyc_status(wallet))["state"] == "verified"
    assert ramp.calls(CALL_READ_KYC) == reads + 2
    for _ in range(3):
        ramp.advance(KYC_REREAD_S + 1)
        assert kyc_of(ramp.kyc_status(wallet))["state"] == "verified"
    assert ramp.calls(CALL_READ_KYC) == reads + 2, "no re-read once verified"


@pytest.mark.sim_only
@pytest.mark.spec("ramp/endpoints/post-v2-ramp-customers-kyc-link")
def test_kyc_link_is_a_provider_hosted_page(ramp: Ramp) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    before = ramp.calls(CALL_KYC_LINK)
    body = ok(ramp.kyc_link(wallet))
    assert set(body) == {"url"}
    assert body["url"].startswith("http")
    assert "/sandbox/verify/" in body["url"]
    assert ramp.calls(CALL_KYC_LINK) == before + 1


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-customers-kyc/response-review-state-right",
    "ramp/states/kyc-state/unverified-documents-submitted",
)
def test_documents_sent_again_during_a_review_answer_the_review(ramp: Ramp) -> None:
    # docs/ramp.md RA64: nothing to review twice, and nothing a retry could fix: 200 with the
    # review as it stands, pending and then verified, never a transient 502.
    wallet = fresh_wallet()
    ramp.registered(wallet)
    first = ramp.submit_kyc(wallet)
    assert first.status == 200, first.raw
    assert first.json()["kyc"]["state"] == "pending"
    again = ramp.submit_kyc(wallet, "B7654321")
    assert again.status == 200, again.raw
    assert again.json()["kyc"]["state"] == "pending"
    ramp.advance(REVIEW_DELAY_S + 1)
    after = ramp.submit_kyc(wallet)
    assert after.status == 200, after.raw
    assert after.json()["kyc"]["state"] == "verified"


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
