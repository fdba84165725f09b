"""Proof of control by smart-account takers on keyless firm requests: a deployed SmartWallet
proves with ERC-1271, a counterfactual one with an ERC-6492 wrapper (verification simulates the
deployment and never sends it), a stranger's signature is refused either way, and when the
chain cannot be read the request is 502 ``taker_control_unverifiable`` while the very same proof
goes through once the chain answers. Wallets are made, funded and deployed through raw JSON-RPC
with locally signed transactions; the requests and their verdicts are in proof_requests.py.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.tests.proof_requests import (
    CHAIN,
    ONE_TOKEN,
    PROOF_RULES,
    assert_accepted,
    assert_unauthorized,
    demo_wallet,
    request_body,
    send_request,
    token_address,
)
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error
from conformance.wire.signing import (
    create_account_calldata,
    proof_json,
    random_nonce,
    sign_digest_raw,
    taker_control_digest,
    wrap_erc6492,
)
from rfqkit.json_rpc import hex_to_int, rpc

GAS_PRICE = 10 * 10**9
GAS_LIMIT = 500_000
RECEIPT_TIMEOUT = 30.0


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
        self.funder = demo_wallet(target, 2)
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
        token = token_address(self.target, self.chain_id, "USDT")
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
    target: Target, clock: ServiceClock, caller: Client
) -> None:
    account = SmartAccount(target)
    account.deploy()
    account.fund()
    now = clock.now_ms()
    assert_accepted(
        send_request(
            caller, request_body(target, account.address, account.proof(now, erc6492=False))
        )
    )
    stranger = Account.create()
    assert_unauthorized(
        send_request(
            caller,
            request_body(
                target, account.address, account.proof(now, erc6492=False, signer=stranger)
            ),
        ),
        "proof_of_control_invalid",
    )


@pytest.mark.sim_only
@pytest.mark.spec(*PROOF_RULES, "rfq/auth/proof-of-control/rule-3", "rfq/errors/401-unauthorized")
def test_counterfactual_smart_account_proves_with_erc6492(
    target: Target, clock: ServiceClock, caller: Client
) -> None:
    account = SmartAccount(target)
    account.fund()
    now = clock.now_ms()
    assert_accepted(
        send_request(
            caller, request_body(target, account.address, account.proof(now, erc6492=True))
        )
    )
    # Verification simulates the deployment; it never sends it.
    assert _code(target, CHAIN, account.address) == "0x", "the proof deployed the wallet"
    stranger = Account.create()
    assert_unauthorized(
        send_request(
            caller,
            request_body(
                target, account.address, account.proof(now, erc6492=True, signer=stranger)
            ),
        ),
        "proof_of_control_invalid",
    )
    # Without the ERC-6492 wrapper nothing at the address can vouch for the owner's signature.
    assert_unauthorized(
        send_request(
            caller, request_body(target, account.address, account.proof(now, erc6492=False))
        ),
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


@pytest.mark.sim_only(because="faults")
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
    body = request_body(
        target, account.address, account.proof(faults.now_ms(), erc6492=not deployed)
    )
    faults.call("POST", "faults", {"chain_unreachable": [CHAIN]})
    try:
        resp = send_request(caller, body)
    finally:
        faults.call("DELETE", "faults")
    assert_error(resp, 502, "upstream_error", "taker_control_unverifiable")
    # Transient: the very same proof, still fresh, goes through once the chain answers.
    assert_accepted(send_request(caller, body))
