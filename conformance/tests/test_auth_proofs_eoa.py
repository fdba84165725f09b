"""Proof of control for keyless firm requests (takerProof, grants, smart accounts).

Every request here is keyless and comes from its own loopback client IP, so grants, nonces bound
to a caller and the keyless per-IP rate limit never leak between tests. Requests restrict the
auction to a random wallet that is no maker, so a request that passes authentication and the
proof-of-funds check answers the deterministic no-quote ``no_restricted_liquidity`` and never
holds an outstanding-RFQ slot or maker inventory.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from conformance.client import Client, Response, fresh_loopback_address, is_loopback_url
from conformance.json_rpc import hex_to_int, rpc
from conformance.response_checks import assert_data, assert_error, assert_rate_limit_headers
from conformance.signing import (
    create_account_calldata,
    proof_json,
    random_nonce,
    sign_digest_raw,
    sign_taker_proof,
    taker_control_digest,
    wrap_erc6492,
)
from conformance.sim_control import SimControl
from conformance.target import Target
from conformance.timing import TimingTolerances

CHAIN = 97  # test environment: minimum size 0.01
OTHER_CHAIN = 56
ONE_TOKEN = 10**18  # 1 USDT (18 decimals): above the minimum on both chains
WINDOW_MS = 60_000
GRANT_SECONDS = 12 * 3600
GAS_PRICE = 10 * 10**9
GAS_LIMIT = 500_000
RECEIPT_TIMEOUT = 30.0

PROOF_RULES = (
    "rfq/auth/proof-of-control/post-v2-rfq-request",
    "rfq/auth/proof-of-control/typed-data-domain",
    "rfq/auth/proof-of-control/primary-type-takercontrol-fields",
    "rfq/auth/proof-of-control/message",
    "rfq/auth/proof-of-control/sent-takerproof-nonce-issuedat",
)


# -- callers and bodies ------------------------------------------------------------------


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    """A keyless client from a loopback address no other test uses (when the target allows)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


@pytest.fixture
def other_caller(target: Target, http: Client) -> Client:
    """A second client IP, different from ``caller``'s; skips when the IP cannot be chosen."""
    if not is_loopback_url(target.base_url):
        pytest.skip("choosing the client IP needs a target on 127.0.0.0/8")
    return http.from_address(fresh_loopback_address())


def _token(target: Target, chain_id: int, symbol: str) -> str:
    for token in target.chain(chain_id).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {chain_id}")


def _demo_wallet(target: Target, index: int = 0) -> Mapping[str, str]:
    wallets = (target.info or {}).get("demo_wallets") or []
    assert len(wallets) > index, f"the simulator has {len(wallets)} demo wallets"
    wallet: Mapping[str, str] = wallets[index]
    return wallet


def _body(
    target: Target,
    taker: str,
    proof: Mapping[str, Any] | None = None,
    *,
    chain_id: int = CHAIN,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": chain_id,
        "sellToken": _token(target, chain_id, "USDT"),
        "buyToken": _token(target, chain_id, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "taker": taker,
        # No maker funds this wallet: the auction is deterministic and holds nothing.
        "restrictedLiquidityWallets": [Account.create().address],
    }
    if proof is not None:
        body["takerProof"] = dict(proof)
    return body


def _request(client: Client, body: Mapping[str, Any]) -> Response:
    return client.post("/v2/rfq/request", json=body)


def _assert_accepted(resp: Response) -> dict[str, Any]:
    """Authentication passed: 200 with the request's no-quote (rate accounted as keyless)."""
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    assert data.get("status") == "no_quote", f"{resp.describe()}: {data!r}"
    assert data.get("reason") == "no_restricted_liquidity", f"{resp.describe()}: {data!r}"
    assert str(data.get("rfqId", "")).startswith("rfq_"), data
    assert str(data.get("claimToken", "")).startswith("rfqc_"), data
    assert_rate_limit_headers(resp)
    return data


def _assert_unauthorized(resp: Response, reason: str) -> dict[str, Any]:
    error = assert_error(resp, 401, "unauthorized", reason)
    # A proof failure is answered by the service after the keyless limiter counted it.
    assert_rate_limit_headers(resp)
    return error


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


@pytest.mark.sim_only
@pytest.mark.spec(
    *PROOF_RULES,
    "rfq/auth/proof-of-control/rule-3",
    "rfq/resources/takerproof/nonce",
    "rfq/resources/takerproof/issuedat",
    "rfq/resources/takerproof/signature",
    "rfq/endpoints/request-body/takerproof",
)
def test_eoa_proof_is_accepted(target: Target, sim: SimControl, caller: Client) -> None:
    wallet = _demo_wallet(target)
    nonce, now = random_nonce(), sim.now_ms()
    assert taker_control_digest(wallet["address"], CHAIN, nonce, now) == _spec_digest(
        wallet["address"], CHAIN, nonce, now
    )
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now, nonce=nonce
    )
    _assert_accepted(_request(caller, _body(target, wallet["address"], proof)))


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-6",
    "rfq/endpoints/request-body/behaviour-1",
    "rfq/endpoints/request-body/takerproof",
    "rfq/errors/401-unauthorized",
    "rfq/errors/envelope",
)
def test_keyless_request_without_proof_or_grant_is_401(target: Target, caller: Client) -> None:
    # A wallet nobody ever proved: no grant can exist, whoever the caller is.
    _assert_unauthorized(
        _request(caller, _body(target, Account.create().address)), "proof_of_control_required"
    )


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-1",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/limits/proof-clock-window",
    "rfq/errors/401-unauthorized",
)
@pytest.mark.parametrize("side", [-1, 1], ids=["past", "future"])
def test_proof_outside_the_clock_window_is_stale(
    target: Target, sim: SimControl, caller: Client, side: int, tolerances: TimingTolerances
) -> None:
    # Just outside the window: 60 s and the --clock-window-tolerance-ms margin away.
    skew_ms = side * (WINDOW_MS + round(tolerances.clock_window_ms))
    wallet = _demo_wallet(target)
    now = sim.now_ms()
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now + skew_ms
    )
    error = _assert_unauthorized(
        _request(caller, _body(target, wallet["address"], proof)), "proof_of_control_stale"
    )
    details = error["details"]
    assert details.get("issuedAt") == now + skew_ms, details
    assert details.get("windowMs") == WINDOW_MS, details
    server_time = details.get("serverTime")
    assert isinstance(server_time, int), details
    assert abs(server_time - now) < 10_000, f"serverTime {server_time} vs service clock {now}"


@pytest.mark.sim_only
@pytest.mark.spec("rfq/auth/proof-of-control/rule-1", "rfq/limits/proof-clock-window")
@pytest.mark.parametrize("side", [-1, 1], ids=["past", "future"])
def test_proof_inside_the_clock_window_is_accepted(
    target: Target, sim: SimControl, caller: Client, side: int, tolerances: TimingTolerances
) -> None:
    # Just inside the window: the --clock-window-tolerance-ms margin short of 60 s.
    skew_ms = side * max(0, WINDOW_MS - round(tolerances.clock_window_ms))
    wallet = _demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms() + skew_ms
    )
    _assert_accepted(_request(caller, _body(target, wallet["address"], proof)))


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


@pytest.mark.sim_only
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
    sim: SimControl,
    caller: Client,
    make_proof: Callable[[Mapping[str, str], bytes, int], Mapping[str, Any]],
) -> None:
    wallet = _demo_wallet(target)
    proof = make_proof(wallet, random_nonce(), sim.now_ms())
    _assert_unauthorized(
        _request(caller, _body(target, wallet["address"], proof)), "proof_of_control_invalid"
    )


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-2",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/errors/401-unauthorized",
)
@pytest.mark.parametrize(
    "variant", ["other-issuedAt", "other-signature", "other-taker", "other-chain"]
)
def test_nonce_reused_with_other_contents_is_replayed(
    target: Target, sim: SimControl, caller: Client, variant: str
) -> None:
    wallet, other = _demo_wallet(target, 0), _demo_wallet(target, 1)
    nonce, now = random_nonce(), sim.now_ms()
    first = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=now, nonce=nonce
    )
    _assert_accepted(_request(caller, _body(target, wallet["address"], first)))
    taker, chain_id = wallet["address"], CHAIN
    if variant == "other-issuedAt":
        second = sign_taker_proof(
            wallet["private_key"], taker, CHAIN, issued_at_ms=now + 1, nonce=nonce
        )
    elif variant == "other-signature":
        second = {**first, "signature": _stranger_signature(wallet, nonce, now)["signature"]}
    elif variant == "other-taker":
        taker = other["address"]
        second = sign_taker_proof(other["private_key"], taker, CHAIN, issued_at_ms=now, nonce=nonce)
    else:
        chain_id = OTHER_CHAIN
        second = sign_taker_proof(
            wallet["private_key"], taker, OTHER_CHAIN, issued_at_ms=now, nonce=nonce
        )
    _assert_unauthorized(
        _request(caller, _body(target, taker, second, chain_id=chain_id)),
        "proof_of_control_replayed",
    )


@pytest.mark.sim_only
@pytest.mark.spec("rfq/auth/proof-of-control/rule-2")
def test_identical_proof_resent_by_the_same_caller_is_accepted(
    target: Target, sim: SimControl, caller: Client
) -> None:
    wallet = _demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms()
    )
    first = _assert_accepted(_request(caller, _body(target, wallet["address"], proof)))
    second = _assert_accepted(_request(caller, _body(target, wallet["address"], proof)))
    assert first["rfqId"] != second["rfqId"], "each accepted request is its own RFQ"


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-2",
    "rfq/auth/proof-of-control/rule-6",
    "rfq/errors/401-unauthorized",
)
def test_identical_proof_from_another_client_ip_is_replayed(
    target: Target, sim: SimControl, caller: Client, other_caller: Client
) -> None:
    first_ip, second_ip = caller, other_caller
    wallet = _demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms()
    )
    _assert_accepted(_request(first_ip, _body(target, wallet["address"], proof)))
    _assert_unauthorized(
        _request(second_ip, _body(target, wallet["address"], proof)), "proof_of_control_replayed"
    )
    # The caller that first sent it still may.
    _assert_accepted(_request(first_ip, _body(target, wallet["address"], proof)))


# -- grants ------------------------------------------------------------------------------


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-4",
    "rfq/endpoints/request-body/takerproof",
    "rfq/auth/proof-of-control/rule-6",
)
def test_grant_covers_the_same_taker_chain_and_caller_only(
    target: Target, sim: SimControl, caller: Client, other_caller: Client
) -> None:
    prover, bystander = caller, other_caller
    wallet, other = _demo_wallet(target, 0), Account.create()
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms()
    )
    _assert_accepted(_request(prover, _body(target, wallet["address"], proof)))
    # Same caller, taker and chain: the proof may be omitted.
    _assert_accepted(_request(prover, _body(target, wallet["address"])))
    # Another taker, another chain or another client IP has no grant.
    _assert_unauthorized(
        _request(prover, _body(target, other.address)), "proof_of_control_required"
    )
    _assert_unauthorized(
        _request(prover, _body(target, wallet["address"], chain_id=OTHER_CHAIN)),
        "proof_of_control_required",
    )
    _assert_unauthorized(
        _request(bystander, _body(target, wallet["address"])), "proof_of_control_required"
    )


@pytest.mark.sim_only
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
    wallet = _demo_wallet(target)
    proof = sign_taker_proof(
        wallet["private_key"], wallet["address"], CHAIN, issued_at_ms=sim.now_ms()
    )
    _assert_accepted(_request(caller, _body(target, wallet["address"], proof)))
    sim.advance(GRANT_SECONDS - margin_s)
    _assert_accepted(_request(caller, _body(target, wallet["address"])))
    sim.advance(2 * margin_s)
    _assert_unauthorized(
        _request(caller, _body(target, wallet["address"])), "proof_of_control_required"
    )


# -- smart accounts ----------------------------------------------------------------------


def _selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


def _send_transaction(
    target: Target, chain_id: int, private_key: str, to: str, data: bytes
) -> dict[str, Any]:
    """Sign a legacy transaction locally, broadcast it and wait for a successful receipt."""
    url = target.rpc_url(chain_id)
    sender = Account.from_key(private_key)
    nonce = hex_to_int(rpc(url, "eth_getTransactionCount", [sender.address, "pending"]))
    signed = Account.sign_transaction(
        {
            "to": to,
            "data": data,
            "value": 0,
            "gas": GAS_LIMIT,
            "gasPrice": GAS_PRICE,
            "nonce": nonce,
            "chainId": chain_id,
        },
        private_key,
    )
    tx_hash = rpc(url, "eth_sendRawTransaction", ["0x" + bytes(signed.raw_transaction).hex()])
    deadline = time.monotonic() + RECEIPT_TIMEOUT
    while time.monotonic() < deadline:
        receipt = rpc(url, "eth_getTransactionReceipt", [tx_hash])
        if isinstance(receipt, dict):
            assert receipt.get("status") == "0x1", f"transaction {tx_hash} reverted: {receipt}"
            return receipt
        time.sleep(0.1)
    raise AssertionError(f"no receipt for {tx_hash} within {RECEIPT_TIMEOUT} s")


def _code(target: Target, chain_id: int, address: str) -> str:
    code = rpc(target.rpc_url(chain_id), "eth_getCode", [address, "latest"])
    assert isinstance(code, str), code
    return code


class SmartAccount:
    """A SmartWallet of a fresh owner: counterfactual until :meth:`deploy`, funded to trade."""

    def __init__(self, target: Target, chain_id: int = CHAIN) -> None:
        self.target = target
        self.chain_id = chain_id
        self.owner = Account.create()
        self.salt = secrets.randbits(64)
        self.factory = str(target.chain(chain_id)["contracts"]["wallet_factory"])
        self.funder = _demo_wallet(target, 2)
        call = _selector("getAddress(address,uint256)") + encode(
            ["address", "uint256"], [self.owner.address, self.salt]
        )
        result = rpc(
            target.rpc_url(chain_id),
            "eth_call",
            [{"to": self.factory, "data": "0x" + call.hex()}, "latest"],
        )
        assert isinstance(result, str), result
        self.address = to_checksum_address("0x" + result[-40:])
        assert _code(target, chain_id, self.address) == "0x", "fresh wallet already deployed"

    @property
    def factory_calldata(self) -> bytes:
        return create_account_calldata(self.owner.address, self.salt)

    def fund(self, amount: int = ONE_TOKEN) -> None:
        """Send sell tokens to the (possibly counterfactual) address: proof of funds passes."""
        transfer = _selector("transfer(address,uint256)") + encode(
            ["address", "uint256"], [self.address, amount]
        )
        token = _token(self.target, self.chain_id, "USDT")
        _send_transaction(self.target, self.chain_id, self.funder["private_key"], token, transfer)

    def deploy(self) -> None:
        _send_transaction(
            self.target,
            self.chain_id,
            self.funder["private_key"],
            self.factory,
            self.factory_calldata,
        )
        assert _code(self.target, self.chain_id, self.address) != "0x", "deploy left no code"

    def proof(self, issued_at_ms: int, *, erc6492: bool, signer: Any = None) -> dict[str, Any]:
        """takerProof: the owner (or ``signer``) signs the TakerControl digest raw."""
        nonce = random_nonce()
        digest = taker_control_digest(self.address, self.chain_id, nonce, issued_at_ms)
        inner = sign_digest_raw((signer or self.owner).key, digest)
        signature = wrap_erc6492(self.factory, self.factory_calldata, inner) if erc6492 else inner
        return proof_json(nonce, issued_at_ms, signature)


@pytest.mark.sim_only
@pytest.mark.spec(*PROOF_RULES, "rfq/auth/proof-of-control/rule-3")
def test_deployed_smart_account_proves_with_erc1271(
    target: Target, sim: SimControl, caller: Client
) -> None:
    account = SmartAccount(target)
    account.deploy()
    account.fund()
    now = sim.now_ms()
    _assert_accepted(
        _request(caller, _body(target, account.address, account.proof(now, erc6492=False)))
    )
    stranger = Account.create()
    _assert_unauthorized(
        _request(
            caller,
            _body(target, account.address, account.proof(now, erc6492=False, signer=stranger)),
        ),
        "proof_of_control_invalid",
    )


@pytest.mark.sim_only
@pytest.mark.spec(*PROOF_RULES, "rfq/auth/proof-of-control/rule-3", "rfq/errors/401-unauthorized")
def test_counterfactual_smart_account_proves_with_erc6492(
    target: Target, sim: SimControl, caller: Client
) -> None:
    account = SmartAccount(target)
    account.fund()
    now = sim.now_ms()
    _assert_accepted(
        _request(caller, _body(target, account.address, account.proof(now, erc6492=True)))
    )
    # Verification simulates the deployment; it never sends it.
    assert _code(target, CHAIN, account.address) == "0x", "the proof deployed the wallet"
    stranger = Account.create()
    _assert_unauthorized(
        _request(
            caller,
            _body(target, account.address, account.proof(now, erc6492=True, signer=stranger)),
        ),
        "proof_of_control_invalid",
    )
    # Without the ERC-6492 wrapper nothing at the address can vouch for the owner's signature.
    _assert_unauthorized(
        _request(caller, _body(target, account.address, account.proof(now, erc6492=False))),
        "proof_of_control_invalid",
    )


@pytest.fixture
def faults(sim: SimControl) -> Iterator[SimControl]:
    """Yields the control API; afterwards the fault switches are as they were before."""
    before = sim.call("GET", "faults")
    try:
        yield sim
    finally:
        sim.call("DELETE", "faults")
        if before.get("chain_unreachable") or before.get("venue_paused"):
            sim.call("POST", "faults", before)


@pytest.mark.sim_only
@pytest.mark.spec(
    "rfq/auth/proof-of-control/rule-6",
    "rfq/errors/502-upstream_error",
    "rfq/errors/429-502-503-transient",
)
@pytest.mark.parametrize("deployed", [True, False], ids=["erc1271", "erc6492"])
def test_unreadable_smart_account_check_is_502_and_the_same_proof_retries(
    target: Target, faults: SimControl, caller: Client, deployed: bool
) -> None:
    account = SmartAccount(target)
    if deployed:
        account.deploy()
    account.fund()
    body = _body(target, account.address, account.proof(faults.now_ms(), erc6492=not deployed))
    faults.call("POST", "faults", {"chain_unreachable": [CHAIN]})
    try:
        resp = _request(caller, body)
    finally:
        faults.call("DELETE", "faults")
    assert_error(resp, 502, "upstream_error", "taker_control_unverifiable")
    # Transient: the very same proof, still fresh, goes through once the chain answers.
    _assert_accepted(_request(caller, body))


# -- where no proof is needed ------------------------------------------------------------


@pytest.mark.sim_only
@pytest.mark.spec("rfq/auth/proof-of-control/rule-5", "rfq/endpoints/post-v2-rfq-preview")
def test_preview_needs_no_proof(target: Target, caller: Client) -> None:
    body = _body(target, _demo_wallet(target)["address"])
    del body["taker"]
    data = assert_data(caller.post("/v2/rfq/preview", json=body))
    assert data.get("status") in ("preview", "no_quote"), data
