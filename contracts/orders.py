"""RFQ orders off chain: encoding, hashing and maker signatures (pure Python, no web3).

A maker signs a Permit2 `PermitWitnessTransferFrom` in which the permitted token and amount are
what the maker gives (`inputToken`, `inputAmount`), the spender is the reactor, nonce and
deadline are the order's, and the witness is the order's EIP-712 struct hash (the order hash).
These helpers mirror `RfqReactor.sol` and `SignatureTransfer.sol` exactly; the integration
tests fill orders signed here on a real chain.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

from coincurve import PublicKey
from Crypto.Hash.keccak import _raw_keccak_lib as _keccak_lib  # type: ignore[attr-defined]
from Crypto.Util._raw_api import ffi as _ffi
from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_account import Account
from eth_utils.address import is_address, to_checksum_address
from eth_utils.crypto import keccak

UINT256_MAX = 2**256 - 1
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141

# (name, EIP-712 type) of every RfqOrder member, in declaration order (= ABI and EIP-712 order).
ORDER_FIELDS: tuple[tuple[str, str], ...] = (
    ("reactor", "address"),
    ("maker", "address"),
    ("taker", "address"),
    ("inputToken", "address"),
    ("inputAmount", "uint256"),
    ("outputToken", "address"),
    ("outputAmount", "uint256"),
    ("feeAmount", "uint256"),
    ("nonce", "uint256"),
    ("deadline", "uint256"),
)
_ORDER_ABI_TYPES = [typ for _, typ in ORDER_FIELDS]

ORDER_TYPE_STRING = "RfqOrder(" + ",".join(f"{typ} {name}" for name, typ in ORDER_FIELDS) + ")"
ORDER_TYPEHASH = keccak(text=ORDER_TYPE_STRING)

TOKEN_PERMISSIONS_TYPE_STRING = "TokenPermissions(address token,uint256 amount)"
TOKEN_PERMISSIONS_TYPEHASH = keccak(text=TOKEN_PERMISSIONS_TYPE_STRING)

# What the reactor passes to permitWitnessTransferFrom: the witness member, then the referenced
# struct types in EIP-712 (alphabetical) order.
WITNESS_TYPE_STRING = "RfqOrder witness)" + ORDER_TYPE_STRING + TOKEN_PERMISSIONS_TYPE_STRING
PERMIT_WITNESS_TYPE_STUB = (
    "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,"
    "uint256 deadline,"
)
PERMIT_WITNESS_TYPEHASH = keccak(text=PERMIT_WITNESS_TYPE_STUB + WITNESS_TYPE_STRING)

# Permit2's domain: a name, no version.
DOMAIN_TYPE_STRING = "EIP712Domain(string name,uint256 chainId,address verifyingContract)"
DOMAIN_TYPEHASH = keccak(text=DOMAIN_TYPE_STRING)
PERMIT2_NAME = "Permit2"

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


@functools.lru_cache(maxsize=4096)
def checksum_address(value: str) -> str:
    """``value`` in its EIP-55 form; ValueError when it is no address. Cached: checksumming
    costs a keccak, and the same few addresses recur in every order and every quote."""
    if not is_address(value):
        raise ValueError(value)
    return str(to_checksum_address(value))


def _keccak(data: bytes) -> bytes:
    """keccak256 straight from pycryptodome's compiled Keccak (eth-hash's backend here), called
    through its cffi library rather than its `Keccak_Hash` object: checking one quote hashes
    five times per order, and the object's Python layers (state and buffer wrappers, checks)
    cost more than the hash itself. The library's four calls are the ones `Keccak_Hash` makes
    (capacity 512 bits, 24 rounds, Keccak padding 0x01); pycryptodome is pinned in
    pyproject.toml, and tests/unit/test_orders.py holds this to eth_utils' keccak."""
    holder = _ffi.new("void **")
    if _keccak_lib.keccak_init(holder, 64, 24):
        raise ValueError("keccak state could not be made")
    state = holder[0]
    try:
        out = _ffi.new("uint8_t[32]")
        if _keccak_lib.keccak_absorb(state, data, len(data)) or _keccak_lib.keccak_digest(
            state, out, 32, 1
        ):
            raise ValueError("keccak failed")
    finally:
        _keccak_lib.keccak_destroy(state)
    return bytes(_ffi.buffer(out))


def _checked_address(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"RfqOrder.{name} must be a 20-byte hex address, got {value!r}")
    try:
        return checksum_address(value)
    except ValueError:
        raise ValueError(f"RfqOrder.{name} must be a 20-byte hex address, got {value!r}") from None


def _word(typ: str, value: Any) -> bytes:
    """One ABI word of a static type. The order and permit structs and the quote path's chain
    reads hold only addresses, uint256 and bytes32, so abi.encode is their words side by side;
    writing them directly is an order of magnitude cheaper than eth_abi's generic encoder."""
    if typ == "address":
        try:
            raw = bytes.fromhex(value[2:]) if value[:2] in ("0x", "0X") else b""
        except ValueError:
            raw = b""
        if len(raw) != 20:
            raise ValueError(f"not a 20-byte hex address: {value!r}")
        return raw.rjust(32, b"\0")
    if typ == "uint256":
        return int(value).to_bytes(32, "big")
    return bytes(value)  # bytes32


def encode_static(types: list[str], values: Any) -> bytes:
    """abi.encode of static `address`, `uint256` and `bytes32` values (eth_abi's result, for
    these types only)."""
    return b"".join(_word(t, v) for t, v in zip(types, values, strict=True))


def _checked_uint(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= UINT256_MAX:
        raise ValueError(f"RfqOrder.{name} must be an int in [0, 2**256), got {value!r}")
    return value


@dataclass(frozen=True)
class RfqOrder:
    """Mirror of the Solidity `RfqOrder`. Addresses are normalised to checksum form.

    input* is what the maker gives, output* what the maker receives; the taker pays
    `feeAmount` of `outputToken` to the fee recipient on top; `taker` = ZERO_ADDRESS lets
    anyone fill."""

    reactor: str
    maker: str
    taker: str
    inputToken: str  # noqa: N815 - field names match the Solidity struct and the API
    inputAmount: int  # noqa: N815
    outputToken: str  # noqa: N815
    outputAmount: int  # noqa: N815
    feeAmount: int  # noqa: N815
    nonce: int
    deadline: int

    def __post_init__(self) -> None:
        for name, typ in ORDER_FIELDS:
            value = getattr(self, name)
            if typ == "address":
                object.__setattr__(self, name, _checked_address(name, value))
            else:
                _checked_uint(name, value)

    def values(self) -> tuple[str | int, ...]:
        """Field values in struct order (what abi.encode takes)."""
        return tuple(getattr(self, f.name) for f in fields(self))

    def to_message(self) -> dict[str, str]:
        """The order as an EIP-712 message / JSON object: addresses checksummed, integers as
        decimal strings (JSON numbers lose precision above 2**53 in JavaScript)."""
        return {
            name: str(getattr(self, name)) if typ == "uint256" else getattr(self, name)
            for name, typ in ORDER_FIELDS
        }


def order_type_string() -> str:
    """The EIP-712 type string of RfqOrder (its keccak is ORDER_TYPEHASH)."""
    return ORDER_TYPE_STRING


def encode_order(order: RfqOrder) -> bytes:
    """abi.encode(RfqOrder): the `order` bytes of a SignedOrder. Computed once per order (the
    frozen order keeps it): checking a quote encodes and hashes the same order several times."""
    cached = order.__dict__.get("_encoded")
    if cached is None:
        cached = order.__dict__["_encoded"] = encode_static(_ORDER_ABI_TYPES, order.values())
    return cached


def decode_order(data: bytes) -> RfqOrder:
    """Inverse of encode_order; ValueError if `data` is not exactly one encoded order."""
    if len(data) != 32 * len(ORDER_FIELDS):
        raise ValueError(f"an encoded RfqOrder is {32 * len(ORDER_FIELDS)} bytes, got {len(data)}")
    values = abi_decode(_ORDER_ABI_TYPES, data, strict=True)
    return RfqOrder(*values)


def order_hash(order: RfqOrder) -> bytes:
    """EIP-712 struct hash of the order: the order hash in Fill events and the Permit2 witness.
    (All members are static, so encodeData is the plain ABI encoding of the fields.)"""
    cached = order.__dict__.get("_hash")
    if cached is None:
        cached = order.__dict__["_hash"] = _keccak(ORDER_TYPEHASH + encode_order(order))
    return cached


@functools.lru_cache(maxsize=64)
def permit2_domain_separator(chain_id: int, permit2_address: str) -> bytes:
    """Permit2's EIP-712 domain separator: name "Permit2", chainId, verifyingContract."""
    return keccak(
        abi_encode(
            ["bytes32", "bytes32", "uint256", "address"],
            [
                DOMAIN_TYPEHASH,
                keccak(text=PERMIT2_NAME),
                chain_id,
                to_checksum_address(permit2_address),
            ],
        )
    )


def permit_witness_struct_hash(order: RfqOrder) -> bytes:
    """Struct hash of the PermitWitnessTransferFrom that authorises `order` (spender = reactor)."""
    token_permissions = _keccak(
        encode_static(
            ["bytes32", "address", "uint256"],
            [TOKEN_PERMISSIONS_TYPEHASH, order.inputToken, order.inputAmount],
        )
    )
    return _keccak(
        encode_static(
            ["bytes32", "bytes32", "address", "uint256", "uint256", "bytes32"],
            [
                PERMIT_WITNESS_TYPEHASH,
                token_permissions,
                order.reactor,
                order.nonce,
                order.deadline,
                order_hash(order),
            ],
        )
    )


def permit_witness_digest(order: RfqOrder, chain_id: int, permit2_address: str) -> bytes:
    """The 32-byte EIP-712 digest the maker signs for `order`."""
    return _keccak(
        b"\x19\x01"
        + permit2_domain_separator(chain_id, permit2_address)
        + permit_witness_struct_hash(order)
    )


def permit_witness_typed_data(
    order: RfqOrder, chain_id: int, permit2_address: str
) -> dict[str, Any]:
    """The eth_signTypedData_v4 payload for `order`; its EIP-712 hash is permit_witness_digest.
    Integers inside `message` are decimal strings; the domain has no version field."""
    return {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "PermitWitnessTransferFrom": [
                {"name": "permitted", "type": "TokenPermissions"},
                {"name": "spender", "type": "address"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
                {"name": "witness", "type": "RfqOrder"},
            ],
            "RfqOrder": [{"name": name, "type": typ} for name, typ in ORDER_FIELDS],
            "TokenPermissions": [
                {"name": "token", "type": "address"},
                {"name": "amount", "type": "uint256"},
            ],
        },
        "primaryType": "PermitWitnessTransferFrom",
        "domain": {
            "name": PERMIT2_NAME,
            "chainId": chain_id,
            "verifyingContract": to_checksum_address(permit2_address),
        },
        "message": {
            "permitted": {"token": order.inputToken, "amount": str(order.inputAmount)},
            "spender": order.reactor,
            "nonce": str(order.nonce),
            "deadline": str(order.deadline),
            "witness": order.to_message(),
        },
    }


def sign_order(
    private_key: bytes | str, order: RfqOrder, chain_id: int, permit2_address: str
) -> bytes:
    """The maker's 65-byte (r, s, v) signature of `order` (v is 27 or 28)."""
    digest = permit_witness_digest(order, chain_id, permit2_address)
    return bytes(Account.unsafe_sign_hash(digest, private_key).signature)


def recover_signer(digest: bytes, signature: bytes) -> str:
    """Checksum address that produced `signature` over `digest`. Accepts 65-byte (r, s, v) with
    v in {0, 1, 27, 28} and 64-byte EIP-2098 compact signatures; ValueError otherwise."""
    if len(digest) != 32:
        raise ValueError(f"digest must be 32 bytes, got {len(digest)}")
    if len(signature) == 65:
        r = int.from_bytes(signature[:32], "big")
        s = int.from_bytes(signature[32:64], "big")
        v = signature[64]
        if v >= 27:
            v -= 27
    elif len(signature) == 64:
        r = int.from_bytes(signature[:32], "big")
        vs = int.from_bytes(signature[32:], "big")
        s = vs & ((1 << 255) - 1)
        v = vs >> 255
    else:
        raise ValueError(f"signature must be 64 or 65 bytes, got {len(signature)}")
    if v not in (0, 1):
        raise ValueError(f"invalid signature recovery id {signature[-1]}")
    if not (0 < r < SECP256K1_N and 0 < s < SECP256K1_N):
        raise ValueError("signature does not recover: r or s out of range")
    try:
        # coincurve (libsecp256k1) directly: the same recovery eth-keys' coincurve backend
        # does, without its object layers (half the time per quote checked).
        public_key = PublicKey.from_signature_and_message(
            r.to_bytes(32, "big") + s.to_bytes(32, "big") + bytes([v]), digest, hasher=None
        )
    except Exception as exc:  # libsecp256k1 refuses an unrecoverable signature
        raise ValueError(f"signature does not recover: {exc}") from exc
    address = _keccak(public_key.format(compressed=False)[1:])[-20:]
    return checksum_address("0x" + address.hex())


def recover_order_signer(
    order: RfqOrder, chain_id: int, permit2_address: str, signature: bytes
) -> str:
    """The EOA that signed `order` (meaningful for EOA makers; contract makers use ERC-1271)."""
    return recover_signer(permit_witness_digest(order, chain_id, permit2_address), signature)


def nonce_word_and_mask(nonce: int) -> tuple[int, int]:
    """(wordPos, mask) of a Permit2 unordered nonce: `nonceBitmap(owner, wordPos) & mask` is
    nonzero once the nonce is used or cancelled, and invalidateUnorderedNonces(wordPos, mask)
    cancels it."""
    _checked_uint("nonce", nonce)
    return nonce >> 8, 1 << (nonce & 0xFF)
