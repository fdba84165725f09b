"""Proof of control by externally owned takers on keyless firm requests: the TakerControl
EIP-712 digest as the spec writes it, a proof accepted, missing, stale or fresh either side of
the 60 s clock window, signed by anyone but the taker or for other contents, nonces replayed
with other contents or from another client IP, the ~12 h grant a proof earns (same taker, chain
and caller only; lapsed after advancing the clock) and the preview, which needs no proof. The
requests and their verdicts are in proof_requests.py; smart-account takers are in
test_auth_proofs_smart_accounts.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_utils.crypto import keccak

from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.tests.proof_requests import (
    CHAIN,
    OTHER_CHAIN,
    PROOF_RULES,
    assert_accepted,
    assert_unauthorized,
    demo_wallet,
    request_body,
    send_request,
)
from conformance.wire.client import Client, fresh_loopback_address, is_loopback_url
from conformance.wire.response_checks import assert_data
from conformance.wire.signing import (
    proof_json,
    random_nonce,
    sign_taker_proof,
    taker_control_digest,
)
from conformance.wire.timing import TimingTolerances

WINDOW_MS = 60_000
GRANT_SECONDS = 12 * 3600


@pytest.fixture
def other_caller(target: Target, http: Client) -> Client:
    """A second client IP, different from ``caller``'s; skips when the IP cannot be chosen."""
    if not is_loopback_url(target.base_url):
        pytest.skip("choosing the client IP needs a target on 127.0.0.0/8")
    return http.from_address(fresh_loopback_address())


def _spec_digest(taker: str, chain_id: int, nonce: bytes, issued_at_ms: int) -> bytes:
    """The TakerControl EIP-712 hash written out from the spec, independent of eth_account."""
    domain_type = keccak(text="EIP712Domain(string name,string version,uint256 chainId)")
    domain = keccak(
        encode(
            ["bytes32", "bytes32", "bytes32", "uint256"],
            [domain_type, keccak(text="Service Taker Control"), keccak(text="1"), chain_id],
        )
    )
    struct_type = keccak(
        text="TakerControl(address taker,uint256 chainId,bytes32 nonce,uint256 issuedAt)"
    )
    struct = keccak(
        encode(
            ["bytes32", "address", "uint256", "bytes32", "uint256"],
            [struct_type, taker, chain_id, nonce, issued_at_ms],
        )
    )
    return keccak(b"\x19\x01" + domain + struct)


# -- externally owned takers -------------------------------------------------------------


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    *PROOF_RULES,
    "rfq/auth/proof-of-control/rule-3",
    "rfq/resources/takerproof/nonce",
    "rfq/resources/takerproof/issuedat",
    "rfq/resources/takerproof/signature",
    "rfq/endpoints/request-body/takerproof",
)
def test_eoa_proof_is_accepted(target: Target, clock: ServiceClock, caller: Client) -> None:
    wallet = demo_wallet(target)
    nonce, now = random_nonce(), clock.now_ms()
    assert taker_control_digest(wallet["address"], CHAIN, nonce, now) == _spec_digest(
        wallet["address"], CHAIN, nonce, now
    )
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now, nonce=nonce
    )
    assert_accepted(send_request(caller, request_body(target, wallet["address"], proof)))


@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-6",
    "rfq/endpoints/request-body/behaviour-1",
    "rfq/endpoints/request-body/takerproof",
    "rfq/errors/401-unauthorized",
    "rfq/errors/envelope",
)
def test_keyless_request_without_proof_or_grant_is_401(target: Target, caller: Client) -> None:
    # A wallet nobody ever proved: no grant can exist, whoever the caller is.
    assert_unauthorized(
        send_request(caller, request_body(target, Account.create().address)),
        "proof_of_control_required",
    )


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-1",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/limits/proof-clock-window",
    "rfq/errors/401-unauthorized",
)
@pytest.mark.parametrize("side", [-1, 1], ids=["past", "future"])
def test_proof_outside_the_clock_window_is_stale(
    target: Target, clock: ServiceClock, caller: Client, side: int, tolerances: TimingTolerances
) -> None:
    # Just outside the window: 60 s and the --clock-window-tolerance-ms margin away.
    skew_ms = side * (WINDOW_MS + round(tolerances.clock_window_ms))
    wallet = demo_wallet(target)
    now = clock.now_ms()
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now + skew_ms
    )
    error = assert_unauthorized(
        send_request(caller, request_body(target, wallet["address"], proof)),
        "proof_of_control_stale",
    )
    details = error["details"]
    assert details.get("issuedAt") == now + skew_ms, details
    assert details.get("windowMs") == WINDOW_MS, details
    server_time = details.get("serverTime")
    assert isinstance(server_time, int), details
    assert abs(server_time - now) < 10_000, f"serverTime {server_time} vs service clock {now}"


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec("rfq/auth/proof-of-control/rule-1", "rfq/limits/proof-clock-window")
@pytest.mark.parametrize("side", [-1, 1], ids=["past", "future"])
def test_proof_inside_the_clock_window_is_accepted(
    target: Target, clock: ServiceClock, caller: Client, side: int, tolerances: TimingTolerances
) -> None:
    # Just inside the window: the --clock-window-tolerance-ms margin short of 60 s.
    skew_ms = side * max(0, WINDOW_MS - round(tolerances.clock_window_ms))
    wallet = demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms() + skew_ms
    )
    assert_accepted(send_request(caller, request_body(target, wallet["address"], proof)))


def _stranger_signature(wallet: Mapping[str, str], nonce: bytes, now: int) -> Mapping[str, Any]:
    return sign_taker_proof(
        Account.create().key, wallet["address"], CHAIN, issued_at_ms=now, nonce=nonce
    )


def _other_chain_signature(wallet: Mapping[str, str], nonce: bytes, now: int) -> Mapping[str, Any]:
    return sign_taker_proof(
        wallet["private_key"], wallet["address"], OTHER_CHAIN, issued_at_ms=now, nonce=nonce
    )


def _other_taker_signature(wallet: Mapping[str, str], nonce: bytes, now: int) -> Mapping[str, Any]:
    other = Account.create()
    return sign_taker_proof(other.key, other.address, CHAIN, issued_at_ms=now, nonce=nonce)


def _zero_signature(wallet: Mapping[str, str], nonce: bytes, now: int) -> Mapping[str, Any]:
    return proof_json(nonce, now, bytes(65))


def _other_issued_at_signature(
    wallet: Mapping[str, str], nonce: bytes, now: int
) -> Mapping[str, Any]:
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now + 1, nonce=nonce
    )
    # The signature is valid for issuedAt now+1 but the body claims now.
    return {**proof, "issuedAt": now}


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-3",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/auth/proof-of-control/typed-data-domain",
    "rfq/auth/proof-of-control/message",
    "rfq/errors/401-unauthorized",
)
@pytest.mark.parametrize(
    "make_proof",
    [
        _stranger_signature,
        _other_chain_signature,
        _other_taker_signature,
        _other_issued_at_signature,
        _zero_signature,
    ],
    ids=[
        "signed-by-stranger",
        "signed-for-other-chain",
        "signed-for-other-taker",
        "signed-for-other-issuedAt",
        "all-zero",
    ],
)
def test_signature_not_by_the_taker_is_invalid(
    target: Target,
    clock: ServiceClock,
    caller: Client,
    make_proof: Callable[[Mapping[str, str], bytes, int], Mapping[str, Any]],
) -> None:
    wallet = demo_wallet(target)
    proof = make_proof(wallet, random_nonce(), clock.now_ms())
    assert_unauthorized(
        send_request(caller, request_body(target, wallet["address"], proof)),
        "proof_of_control_invalid",
    )


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-2",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/errors/401-unauthorized",
)
@pytest.mark.parametrize(
    "variant", ["other-issuedAt", "other-signature", "other-taker", "other-chain"]
)
def test_nonce_reused_with_other_contents_is_replayed(
    target: Target, clock: ServiceClock, caller: Client, variant: str
) -> None:
    wallet = demo_wallet(target, 0)
    other = demo_wallet(target, 1) if variant == "other-taker" else None
    nonce, now = random_nonce(), clock.now_ms()
    first = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now, nonce=nonce
    )
    assert_accepted(send_request(caller, request_body(target, wallet["address"], first)))
    taker, chain_id = wallet["address"], CHAIN
    if variant == "other-issuedAt":
        second = sign_taker_proof(
            wallet["private_key"], taker, CHAIN, issued_at_ms=now + 1, nonce=nonce
        )
    elif variant == "other-signature":
        second = {**first, "signature": _stranger_signature(wallet, nonce, now)["signature"]}
    elif other is not None:  # other-taker
        taker = other["address"]
        second = sign_taker_proof(other["private_key"], taker, CHAIN, issued_at_ms=now, nonce=nonce)
    else:
        chain_id = OTHER_CHAIN
        second = sign_taker_proof(
            wallet["private_key"], taker, OTHER_CHAIN, issued_at_ms=now, nonce=nonce
        )
    assert_unauthorized(
        send_request(caller, request_body(target, taker, second, chain_id=chain_id)),
        "proof_of_control_replayed",
    )


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec("rfq/auth/proof-of-control/rule-2")
def test_identical_proof_resent_by_the_same_caller_is_accepted(
    target: Target, clock: ServiceClock, caller: Client
) -> None:
    wallet = demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    first = assert_accepted(send_request(caller, request_body(target, wallet["address"], proof)))
    second = assert_accepted(send_request(caller, request_body(target, wallet["address"], proof)))
    assert first["rfqId"] != second["rfqId"], "each accepted request is its own RFQ"


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-2",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/errors/401-unauthorized",
)
def test_identical_proof_from_another_client_ip_is_replayed(
    target: Target, clock: ServiceClock, caller: Client, other_caller: Client
) -> None:
    first_ip, second_ip = caller, other_caller
    wallet = demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    assert_accepted(send_request(first_ip, request_body(target, wallet["address"], proof)))
    assert_unauthorized(
        send_request(second_ip, request_body(target, wallet["address"], proof)),
        "proof_of_control_replayed",
    )
    # The caller that first sent it still may.
    assert_accepted(send_request(first_ip, request_body(target, wallet["address"], proof)))


# -- grants ------------------------------------------------------------------------------


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-4",
    "rfq/endpoints/request-body/takerproof",
    "rfq/auth/proof-of-control/rule-6",
)
def test_grant_covers_the_same_taker_chain_and_caller_only(
    target: Target, clock: ServiceClock, caller: Client, other_caller: Client
) -> None:
    prover, bystander = caller, other_caller
    wallet, other = demo_wallet(target, 0), Account.create()
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=clock.now_ms()
    )
    assert_accepted(send_request(prover, request_body(target, wallet["address"], proof)))
    # Same caller, taker and chain: the proof may be omitted.
    assert_accepted(send_request(prover, request_body(target, wallet["address"])))
    # Another taker, another chain or another client IP has no grant.
    assert_unauthorized(
        send_request(prover, request_body(target, other.address)), "proof_of_control_required"
    )
    assert_unauthorized(
        send_request(prover, request_body(target, wallet["address"], chain_id=OTHER_CHAIN)),
        "proof_of_control_required",
    )
    assert_unauthorized(
        send_request(bystander, request_body(target, wallet["address"])),
        "proof_of_control_required",
    )


@pytest.mark.sim_only(because="clock")
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-4",
    "rfq/limits/proof-clock-window",
    "rfq/auth/proof-of-control/rule-6",
)
def test_grant_lapses_after_twelve_hours(
    target: Target, sim: SimControl, caller: Client, tolerances: TimingTolerances
) -> None:
    # "About 12 hours": still live --grant-tolerance-s before 12 h, lapsed as long after.
    margin_s = max(1, round(tolerances.grant_s))
    wallet = demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms()
    )
    assert_accepted(send_request(caller, request_body(target, wallet["address"], proof)))
    sim.advance(GRANT_SECONDS - margin_s)
    assert_accepted(send_request(caller, request_body(target, wallet["address"])))
    sim.advance(2 * margin_s)
    assert_unauthorized(
        send_request(caller, request_body(target, wallet["address"])), "proof_of_control_required"
    )


# -- where no proof is needed ------------------------------------------------------------


@pytest.mark.needs("taker_wallet")
@pytest.mark.spec("rfq/auth/proof-of-control/rule-5", "rfq/endpoints/post-v2-rfq-preview")
def test_preview_needs_no_proof(target: Target, caller: Client) -> None:
    body = request_body(target, demo_wallet(target)["address"])
    del body["taker"]
    data = assert_data(caller.post("/v2/rfq/preview", json=body))
    assert data.get("status") in ("preview", "no_quote"), data
