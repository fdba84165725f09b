"""Every row of the ramp error table, as POST /v2/ramp/transfers and the transfer reads meet it:
malformed fields (400), no customer record (400), proof faults (401), capabilities and switches
(403), unknown provider (404), profile rules (409), KYC and provider refusals (422), the per-IP
backstop (429) and an unreachable provider (502). Nothing is booked by a refused create.

Fresh wallets throughout; tests that flip the sandbox's switches, move its clock or read its
books need its controls (``sim_only``) and restore them; the rest run against any deployment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from conformance.calls.ramp import REVIEW_DELAY_S, Ramp, fresh_wallet
from conformance.calls.ramp_transfers import SANDBOX_BANK, Transfers
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
    fresh_loopback_address,
    is_loopback_url,
    on_one_connection,
)
from conformance.wire.response_checks import (
    assert_error,
    assert_issues,
    assert_no_rate_limit_headers,
    assert_retry_after,
)


@pytest.fixture
def http(http: Client) -> Iterator[Client]:
    """One instance's per-IP backstop: conformance.wire.client `on_one_connection`."""
    yield from on_one_connection(http)


@pytest.fixture
def ramp(target: Target, http: Client) -> Iterator[Ramp]:
    """The ramp; on a simulator its sandbox's switches are restored after the test."""
    if not target.controllable:
        yield Ramp(http, None, shared=target.cache)
        return
    with Ramp(http, target.sim()).restoring() as controlled:
        yield controlled


def nothing_booked(ramp: Ramp, transfers: Transfers, wallet: Any) -> None:
    """No transfer in the wallet's list, none at the provider paying out to it."""
    assert transfers.listed(wallet)["transfers"] == []
    if ramp.sim is None:
        return  # the provider's own books are seen only through the sandbox's controls
    paying = [
        t
        for t in ramp.state()["transfers"]
        if (t.get("payOut") or {}).get("address") == wallet.address
    ]
    assert paying == []


# -- 400 -------------------------------------------------------------------------------------

MALFORMED: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    ("side", lambda b: {**b, "side": "hold"}, "side"),
    ("fiat lowercase", lambda b: {**b, "fiat": "ngn"}, "fiat"),
    ("chainId as a string", lambda b: {**b, "chainId": "97"}, "chainId"),
    ("wallet", lambda b: {**b, "wallet": "0x1234"}, "wallet"),
    ("unknown member", lambda b: {**b, "colour": "blue"}, "colour"),
    ("amount exponent", lambda b: {**b, "amount": "1e4"}, "amount"),
    ("amount negative", lambda b: {**b, "amount": "-5"}, "amount"),
    ("amount as a number", lambda b: {**b, "amount": 10000}, "amount"),
    ("amount zero", lambda b: {**b, "amount": "0"}, "amount"),
    ("amount zero decimals", lambda b: {**b, "amount": "0.00"}, "amount"),
    ("amount beyond NGN decimals", lambda b: {**b, "amount": "100.001"}, "amount"),
    ("no intentKey", lambda b: {k: v for k, v in b.items() if k != "intentKey"}, "intentKey"),
    ("intentKey short", lambda b: {**b, "intentKey": "a" * 11}, "intentKey"),
    ("intentKey long", lambda b: {**b, "intentKey": "a" * 65}, "intentKey"),
    ("intentKey character", lambda b: {**b, "intentKey": "intent key 0001"}, "intentKey"),
    ("intentKey non-ASCII", lambda b: {**b, "intentKey": "intent-key-é001"}, "intentKey"),
    ("email", lambda b: {**b, "email": "not-an-email"}, "email"),
    ("expectedTargetAmount", lambda b: {**b, "expectedTargetAmount": "0"}, "expectedTargetAmount"),
    ("acceptedTerms false", lambda b: {**b, "acceptedTerms": False}, "acceptedTerms"),
    ("payout on a buy", lambda b: {**b, "payout": {"bankCode": "058"}}, "payout"),
    ("proof shape", lambda b: {**b, "proof": {"nonce": "0x00"}}, "proof"),
]


@pytest.mark.needs("time<=90s")  # without control: one real KYC review per process
@pytest.mark.parametrize(("what", "mutate", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
@pytest.mark.spec(
    "ramp/limits/intentkey",
    "ramp/errors/400-invalid_request",
    "ramp/endpoints/post-v2-ramp-transfers/intentkey",
    "ramp/endpoints/post-v2-ramp-transfers/amount",
    "ramp/overview/conventions",
)
def test_malformed_creates_are_400_naming_the_field(
    ramp: Ramp,
    transfers: Transfers,
    what: str,
    mutate: Callable[[dict[str, Any]], dict[str, Any]],
    field: str,
) -> None:
    if ramp.sim is None:
        wallet = ramp.shared_verified()  # books nothing: one verified wallet serves every case
    else:
        wallet = fresh_wallet()
        ramp.verified(wallet)
    error = assert_error(
        transfers.post(mutate(transfers.body(wallet, "buy"))), 400, "invalid_request"
    )
    assert_issues(error, field)
    nothing_booked(ramp, transfers, wallet)


@pytest.mark.spec(
    "ramp/errors/400-invalid_request",
    "ramp/endpoints/post-v2-ramp-transfers/payout",
)
def test_sell_without_payout_and_a_wallet_without_a_record_are_400(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell")
    del body["payout"]
    assert_issues(assert_error(transfers.post(body), 400, "invalid_request"), "payout")
    stranger = fresh_wallet()  # never registered: no customer record at all
    assert_error(
        transfers.post(transfers.body(stranger, "sell")),
        400,
        "invalid_request",
        "no_customer_record",
    )
    assert_error(
        transfers.post(transfers.body(stranger, "buy")),
        400,
        "invalid_request",
        "no_customer_record",
    )
    resp = ramp.http.post(
        "/v2/ramp/transfers", data=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_error(resp, 400, "invalid_request")
    nothing_booked(ramp, transfers, wallet)


# -- 401 -------------------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/limits/proof-validity",
    "ramp/errors/401-unauthorized",
    "ramp/auth/item-1",
    "ramp/auth/item-2",
    "ramp/resources/proof-object/nonce-issuedat-signature-takercontrol",
    "ramp/resources/proof-object/one-signature-valid-60",
    "ramp/endpoints/post-v2-ramp-transfers/proof",
)
def test_proof_faults_are_401(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell")
    missing = {k: v for k, v in body.items() if k != "proof"}
    assert_error(transfers.post(missing), 401, "unauthorized", "proof_of_control_required")
    stale = ramp.proof(wallet, issued_at_ms=ramp.stale_issued_at_ms())
    assert_error(
        transfers.post({**body, "proof": stale}), 401, "unauthorized", "proof_of_control_stale"
    )
    other = ramp.proof(wallet, signer=fresh_wallet())
    assert_error(
        transfers.post({**body, "proof": other}), 401, "unauthorized", "proof_of_control_invalid"
    )
    for_56 = ramp.proof(wallet, chain_id=56)  # bound to another chain than the body's
    assert_error(
        transfers.post({**body, "proof": for_56}), 401, "unauthorized", "proof_of_control_invalid"
    )
    # The same nonce with other contents is a replay.
    used = ramp.proof(wallet)
    created = transfers.create({**body, "proof": used})
    nonce = bytes.fromhex(used["nonce"][2:])
    replayed = ramp.proof(wallet, nonce=nonce, issued_at_ms=used["issuedAt"] + 1)
    assert_error(
        transfers.post({**body, "intentKey": "conf-replay-000000", "proof": replayed}),
        401,
        "unauthorized",
        "proof_of_control_replayed",
    )
    # One signature can be reused within its 60 s: the identical proof again is fine.
    again = transfers.create({**body, "proof": used})
    assert again.id == created.id


# -- 403 -------------------------------------------------------------------------------------


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/errors/403-forbidden",
    "ramp/endpoints/post-v2-ramp-transfers/provider-side-fiat-token-chainid",
    "ramp/resources/provider/chainids",
    "ramp/resources/provider/sides",
    "ramp/resources/provider/empty-list-means-nobody",
    "ramp/overview/item-7",
)
def test_capabilities_and_switches_are_403(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    assert_error(transfers.post(transfers.body(wallet, "buy", fiat="USD")), 403, "forbidden")
    assert_error(transfers.post(transfers.body(wallet, "buy", token="USDT")), 403, "forbidden")
    chain_1 = {
        **transfers.body(wallet, "buy"),
        "chainId": 1,
        "proof": ramp.proof(wallet, chain_id=1),
    }
    assert_error(transfers.post(chain_1), 403, "forbidden")
    # Sandbox where the provider has no test account on that chain.
    sandbox_56 = {
        **transfers.body(wallet, "buy", sandbox=True),
        "chainId": 56,
        "proof": ramp.proof(wallet, chain_id=56),
    }
    assert_error(transfers.post(sandbox_56), 403, "forbidden")
    ramp.switches(sides={"buy": False, "sell": True})
    assert_error(transfers.post(transfers.body(wallet, "buy")), 403, "forbidden")
    ramp.switches(sides={"buy": True, "sell": True}, chains=[56])
    assert_error(transfers.post(transfers.body(wallet, "buy")), 403, "forbidden")
    ramp.switches(chains=[56, 97], enabled=False)
    assert_error(transfers.post(transfers.body(wallet, "buy")), 403, "forbidden")
    ramp.switches(enabled=True)
    nothing_booked(ramp, transfers, wallet)
    # In the sandbox on its test chain the same buy runs.
    created = transfers.create(transfers.body(wallet, "buy", sandbox=True))
    assert created.transfer["sandbox"] is True


# -- 404 -------------------------------------------------------------------------------------


@pytest.mark.spec("ramp/errors/404-not_found")
def test_unknown_provider_is_404(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    assert_error(
        transfers.post(transfers.body(wallet, "sell", provider="nobank")), 404, "not_found"
    )
    assert_error(transfers.support("nothing-like-a-reference"), 404, "not_found")


# -- 409 -------------------------------------------------------------------------------------


@pytest.mark.spec(
    "ramp/errors/409-ramp_customer_required",
    "ramp/endpoints/post-v2-ramp-transfers/behaviour-3",
    "ramp/endpoints/post-v2-ramp-customers/hasprovidercustomer-true-lets-buy",
    "ramp/overview/properties-that-must-hold/buy-requires-registered-verified",
)
def test_a_missing_provider_profile_is_409(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    customer = ramp.register(wallet, firstName="Only").json()["customer"]
    assert customer["hasProviderCustomer"] is False
    assert_error(transfers.post(transfers.body(wallet, "buy")), 409, "ramp_customer_required")
    assert transfers.listed(wallet)["transfers"] == []


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/errors/409-ramp_customer_required",
    "ramp/endpoints/post-v2-ramp-transfers/behaviour-3",
)
def test_sells_without_a_provider_profile_need_the_business_profile(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    customer = ramp.register(wallet, firstName="Only").json()["customer"]
    assert customer["hasProviderCustomer"] is False
    sell = transfers.create(transfers.body(wallet, "sell"))  # the business profile
    assert sell.transfer["status"] == "AWAITING_FUNDS"
    ramp.switches(businessProfileSells=False)
    assert_error(transfers.post(transfers.body(wallet, "sell")), 409, "ramp_customer_required")


# -- 422 -------------------------------------------------------------------------------------


@pytest.mark.needs("time<=90s")  # without control the review clears in real time
@pytest.mark.spec(
    "ramp/errors/422-kyc_required",
    "ramp/endpoints/post-v2-ramp-transfers/behaviour-3",
    "ramp/states/kyc-state/buy-can-run-only",
)
def test_an_unverified_person_is_422_kyc_required_with_the_review(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    error = assert_error(transfers.post(transfers.body(wallet, "buy")), 422, "kyc_required")
    assert error["kyc"]["state"] == "unverified"
    assert set(error["kyc"]) == {
        "state",
        "providerStatus",
        "rejectionReasons",
        "requirementsDue",
        "level",
        "canDeposit",
        "maxBuy",
    }
    ramp.submit_kyc(wallet)
    pending = assert_error(transfers.post(transfers.body(wallet, "buy")), 422, "kyc_required")
    assert pending["kyc"]["state"] == "pending"
    assert pending["kyc"]["canDeposit"] is False
    cleared = ramp.review_cleared(wallet)
    assert cleared is not None
    assert cleared["state"] == "verified", cleared
    assert transfers.create(transfers.body(wallet, "buy")).transfer["status"] == "AWAITING_FUNDS"


@pytest.mark.sim_only(because="provider")
@pytest.mark.spec(
    "ramp/errors/422-kyc_required",
    "ramp/states/kyc-state/buy-can-run-only",
)
def test_a_verified_person_the_provider_takes_no_deposits_from_is_422(
    ramp: Ramp, transfers: Transfers
) -> None:
    no_deposit = fresh_wallet()
    ramp.registered(no_deposit)
    ramp.submit_kyc(no_deposit, "NODEPOSIT-1")
    ramp.advance(REVIEW_DELAY_S + 1)
    refused = assert_error(transfers.post(transfers.body(no_deposit, "buy")), 422, "kyc_required")
    assert (refused["kyc"]["state"], refused["kyc"]["canDeposit"]) == ("verified", False)


@pytest.mark.sim_only(because="provider")
@pytest.mark.spec(
    "ramp/errors/422-provider_refused",
    "ramp/resources/kyc-review-state/maxbuy",
)
def test_provider_refusals_are_422_with_its_sentence(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.verified(wallet)
    above = assert_error(
        transfers.post(transfers.body(wallet, "buy", "5000001")), 422, "provider_refused"
    )
    assert above["message"] == "Deposit exceeds the single-deposit limit"
    blocked = fresh_wallet()
    ramp.registered(
        blocked, firstName="Bo", lastName="Blocked", email="b@example.com", phone="+2348000000001"
    )
    person = assert_error(transfers.post(transfers.body(blocked, "sell")), 422, "provider_refused")
    assert person["message"] == "This customer is not allowed to transact"
    bad_account = {
        "bankCode": SANDBOX_BANK,
        "accountNumber": "1230000",
        "accountName": "Nobody",
    }
    account = assert_error(
        transfers.post(transfers.body(wallet, "sell", payout=bad_account)), 422, "provider_refused"
    )
    assert account["message"] == "We could not verify this bank account"
    assert transfers.listed(wallet)["transfers"] == []
    nothing_booked(ramp, transfers, blocked)


# -- 429 and 502 ---------------------------------------------------------------------------


@pytest.mark.sim_only
@pytest.mark.spec(
    "ramp/errors/429-rate_limited",
    "ramp/limits/rate-limit",
)
def test_the_per_ip_backstop_is_429_with_retry_after(
    target: Target, sim: SimControl, ramp: Ramp, transfers: Transfers
) -> None:
    if not is_loopback_url(target.base_url):
        pytest.skip("needs a target on 127.0.0.0/8 to choose a client IP")
    original = sim.limits()
    caller = ramp.http.from_address(fresh_loopback_address())
    wallet = fresh_wallet()
    ramp.registered(wallet)
    try:
        sim.set_limits(ip_backstop_per_minute=2, reset_windows=True)
        for _ in range(2):
            caller.post("/v2/ramp/transfers/list", json={"wallet": wallet.address})
        resp = caller.post("/v2/ramp/transfers", json=transfers.body(wallet, "sell"))
        assert_error(resp, 429, "rate_limited")
        assert_retry_after(resp)
        assert_no_rate_limit_headers(resp)  # the ramp carries no per-key limiter headers
    finally:
        sim.set_limits(**original, reset_windows=True)
    assert transfers.listed(wallet)["transfers"] == []


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(
    "ramp/errors/502-upstream_error",
    "ramp/endpoints/post-v2-ramp-transfers/idempotent-per-intentkey",
)
def test_an_unreachable_provider_is_502_and_books_nothing(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell")
    ramp.set_reachable(False)
    assert_error(transfers.post(body), 502, "upstream_error", "provider_unreachable")
    assert transfers.listed(wallet)["transfers"] == []
    ramp.set_reachable(True)
    created = transfers.create({**body, "proof": ramp.proof(wallet)})  # the same key again
    assert created.transfer["status"] == "AWAITING_FUNDS"
    # Reads keep serving the stored transfer while the provider is away (RA22).
    ramp.set_reachable(False)
    ramp.advance(9)
    assert transfers.read(created)["id"] == created.id


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec("ramp/errors/500-internal", "ramp/errors/envelope")
def test_a_server_fault_is_500_internal_and_loses_nothing(
    sim: SimControl, ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell")
    try:
        sim.call("POST", "faults", {"internal_errors": 1})
        error = assert_error(transfers.post(body), 500, "internal")
        assert "Traceback" not in error["message"]
    finally:
        sim.call("DELETE", "faults")
    created = transfers.create({**body, "proof": ramp.proof(wallet)})  # the same intentKey
    assert [t["id"] for t in transfers.listed(wallet)["transfers"]] == [created.id]
