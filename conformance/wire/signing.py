"""Signing a keyless caller's proof of control (``takerProof``) the way the venue expects.

A keyless ``POST /v2/rfq/request`` must prove that the caller controls the taker wallet with an
EIP-712 signature over::

    domain  {name: "Service Taker Control", version: "1", chainId}   (no verifyingContract)
    TakerControl(address taker,uint256 chainId,bytes32 nonce,uint256 issuedAt)

``issuedAt`` is Unix milliseconds and must sit within 60 s of the service clock; ``nonce`` is 32
random bytes, fresh for every new proof. The proof travels in the request body as
``takerProof: {nonce: "0x<64 hex>", issuedAt: <int>, signature: "0x<hex>"}``.

Externally owned accounts sign the typed data directly (:func:`sign_taker_proof`). Smart
accounts answer ``isValidSignature(digest, sig)`` (ERC-1271): the wallet's owner signs the
TakerControl digest (:func:`taker_control_digest`) with :func:`sign_digest_raw`. A smart
account that is not deployed yet (counterfactual) wraps that signature per ERC-6492 with the
factory call that would deploy it (:func:`wrap_erc6492`, :func:`create_account_calldata`); the
venue simulates the deployment and never sends it.

Only ``eth_account``, ``eth_abi`` and ``eth_utils`` are used; integrators can copy this module.
"""

from __future__ import annotations

import os
from typing import Any

from eth_abi.abi import encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

DOMAIN_NAME = "Service Taker Control"
DOMAIN_VERSION = "1"
PRIMARY_TYPE = "TakerControl"
TAKER_CONTROL_TYPES: dict[str, list[dict[str, str]]] = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
    ],
    "TakerControl": [
        {"name": "taker", "type": "address"},
        {"name": "chainId", "type": "uint256"},
        {"name": "nonce", "type": "bytes32"},
        {"name": "issuedAt", "type": "uint256"},
    ],
}
# ERC-6492: the magic suffix that marks a wrapped signature of a counterfactual contract.
ERC6492_MAGIC = bytes.fromhex("64926492" * 8)
# SmartWalletFactory.createAccount(address owner,uint256 salt)
CREATE_ACCOUNT_SIGNATURE = "createAccount(address,uint256)"


def random_nonce() -> bytes:
    """32 cryptographically random bytes: a fresh proof nonce."""
    return os.urandom(32)


def _nonce_bytes(nonce: bytes | str) -> bytes:
    value = bytes.fromhex(nonce.removeprefix("0x")) if isinstance(nonce, str) else bytes(nonce)
    if len(value) != 32:
        raise ValueError(f"nonce must be 32 bytes, got {len(value)}")
    return value


def taker_control_typed_data(
    taker: str, chain_id: int, nonce: bytes | str, issued_at_ms: int
) -> dict[str, Any]:
    """The full EIP-712 typed data (``eth_signTypedData_v4`` JSON) a taker signs.

    ``nonce`` is 32 bytes (or their 0x hex); ``issued_at_ms`` is Unix milliseconds of the
    service clock. Wallets such as MetaMask can sign the returned dict as it is.
    """
    return {
        "types": TAKER_CONTROL_TYPES,
        "primaryType": PRIMARY_TYPE,
        "domain": {"name": DOMAIN_NAME, "version": DOMAIN_VERSION, "chainId": chain_id},
        "message": {
            "taker": to_checksum_address(taker),
            "chainId": chain_id,
            "nonce": _nonce_bytes(nonce),
            "issuedAt": issued_at_ms,
        },
    }


def taker_control_digest(taker: str, chain_id: int, nonce: bytes | str, issued_at_ms: int) -> bytes:
    """The 32-byte EIP-712 hash of the TakerControl message (what ERC-1271 wallets check)."""
    signable = encode_typed_data(
        full_message=taker_control_typed_data(taker, chain_id, nonce, issued_at_ms)
    )
    return keccak(b"\x19" + signable.version + signable.header + signable.body)


def sign_digest_raw(private_key: str | bytes, digest: bytes) -> bytes:
    """A 65-byte ``r || s || v`` (v 27/28) ECDSA signature over ``digest`` itself, no prefix.

    This is what a smart account's owner hands to the wallet's ``isValidSignature``.
    """
    if len(digest) != 32:
        raise ValueError(f"digest must be 32 bytes, got {len(digest)}")
    signed = Account.unsafe_sign_hash(digest, private_key)
    return bytes(signed.signature)


def proof_json(nonce: bytes | str, issued_at_ms: int, signature: bytes) -> dict[str, Any]:
    """The ``takerProof`` request member for an already made signature."""
    return {
        "nonce": "0x" + _nonce_bytes(nonce).hex(),
        "issuedAt": issued_at_ms,
        "signature": "0x" + bytes(signature).hex(),
    }


def sign_taker_proof(
    private_key: str | bytes,
    taker: str,
    chain_id: int,
    *,
    issued_at_ms: int,
    nonce: bytes | str | None = None,
) -> dict[str, Any]:
    """``takerProof`` for an externally owned taker: the taker's key signs the typed data.

    ``issued_at_ms`` should be the service's current time in Unix milliseconds; a random nonce
    is drawn unless one is given (re-using a nonce is only valid for re-sending the identical
    proof).
    """
    nonce_value = random_nonce() if nonce is None else _nonce_bytes(nonce)
    digest = taker_control_digest(taker, chain_id, nonce_value, issued_at_ms)
    return proof_json(nonce_value, issued_at_ms, sign_digest_raw(private_key, digest))


def create_account_calldata(owner: str, salt: int) -> bytes:
    """Calldata of ``SmartWalletFactory.createAccount(owner, salt)``."""
    selector = keccak(text=CREATE_ACCOUNT_SIGNATURE)[:4]
    return selector + encode(["address", "uint256"], [to_checksum_address(owner), salt])


def wrap_erc6492(factory: str, factory_calldata: bytes, inner_sig: bytes) -> bytes:
    """An ERC-6492 signature for a counterfactual smart account.

    ``abi.encode(factory, factoryCalldata, innerSig) ++ 0x6492…6492``: the verifier deploys the
    account in a simulation with ``factory.call(factoryCalldata)`` and then asks it
    ``isValidSignature`` about ``inner_sig``.
    """
    body = encode(
        ["address", "bytes", "bytes"],
        [to_checksum_address(factory), bytes(factory_calldata), bytes(inner_sig)],
    )
    return body + ERC6492_MAGIC
