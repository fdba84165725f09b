"""contracts.orders and contracts.signatures without a chain: encodings, hashes, signatures."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_keys.backends import get_backend
from eth_keys.backends.coincurve import CoinCurveECCBackend
from eth_utils.crypto import keccak

from contracts import orders as orders_module
from contracts.artifacts import load_artifact
from contracts.orders import (
    ORDER_TYPE_STRING,
    PERMIT_WITNESS_TYPE_STUB,
    WITNESS_TYPE_STRING,
    ZERO_ADDRESS,
    RfqOrder,
    decode_order,
    encode_order,
    encode_static,
    nonce_word_and_mask,
    order_hash,
    order_type_string,
    permit2_domain_separator,
    permit_witness_digest,
    permit_witness_typed_data,
    recover_order_signer,
    recover_signer,
    sign_order,
)
from contracts.signatures import (
    ERC6492_MAGIC_SUFFIX,
    create_account_calldata,
    decode_validator_result,
    is_erc6492_wrapped,
    universal_validator_calldata,
    wrap_erc6492,
)

MAKER = Account.from_key(keccak(text="unit test maker"))
PERMIT2_MAINNET = "0x000000000022D473030F116dDEE9F6B43aC78BA3"
REACTOR = "0x00000011f84b9aa48e5f8aa8b9897600006289be"


def _order(**changes: object) -> RfqOrder:
    fields = {
        "reactor": REACTOR,
        "maker": MAKER.address,
        "taker": ZERO_ADDRESS,
        "inputToken": "0xdAC17F958D2ee523a2206206994597C13D831ec7",
        "inputAmount": 1_000_000_000,
        "outputToken": "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2",
        "outputAmount": 3 * 10**17,
        "feeAmount": 12_345,
        "nonce": 2**200 + 7,
        "deadline": 1_900_000_000,
    }
    fields.update(changes)
    return RfqOrder(**fields)


def _eip712_digest(typed: dict[str, object]) -> bytes:
    message = encode_typed_data(full_message=typed)
    return keccak(b"\x19" + message.version + message.header + message.body)


def test_type_strings() -> None:
    assert (
        order_type_string()
        == ORDER_TYPE_STRING
        == (
            "RfqOrder(address reactor,address maker,address taker,address inputToken,"
            "uint256 inputAmount,address outputToken,uint256 outputAmount,uint256 feeAmount,"
            "uint256 nonce,uint256 deadline)"
        )
    )
    assert WITNESS_TYPE_STRING == (
        "RfqOrder witness)" + ORDER_TYPE_STRING + "TokenPermissions(address token,uint256 amount)"
    )
    assert PERMIT_WITNESS_TYPE_STUB.endswith("uint256 deadline,")


def test_permit2_domain_separator_matches_mainnet_permit2() -> None:
    # Permit2's DOMAIN_SEPARATOR() on Ethereum mainnet, a published constant.
    assert permit2_domain_separator(1, PERMIT2_MAINNET).hex() == (
        "866a5aba21966af95d6c7ab78eb2b2fc913915c28be3b9aa07cc04ff903e3f28"
    )


@pytest.mark.parametrize("chain_id", [1, 97, 31337])
def test_typed_data_digest_equals_permit_witness_digest(chain_id: int) -> None:
    order = _order(taker="0x1111111111111111111111111111111111111111")
    typed = permit_witness_typed_data(order, chain_id, PERMIT2_MAINNET)
    assert "version" not in typed["domain"]
    assert typed["domain"] == {
        "name": "Permit2",
        "chainId": chain_id,
        "verifyingContract": PERMIT2_MAINNET,
    }
    assert typed["message"]["witness"]["nonce"] == str(2**200 + 7)
    assert _eip712_digest(typed) == permit_witness_digest(order, chain_id, PERMIT2_MAINNET)


def test_digest_binds_every_field_and_the_domain() -> None:
    base = _order()
    digest = permit_witness_digest(base, 97, PERMIT2_MAINNET)
    assert permit_witness_digest(base, 56, PERMIT2_MAINNET) != digest
    assert permit_witness_digest(base, 97, REACTOR) != digest
    replacements: dict[str, Any] = {
        "reactor": PERMIT2_MAINNET,
        "maker": REACTOR,
        "taker": REACTOR,
        "inputToken": REACTOR,
        "inputAmount": 1,
        "outputToken": REACTOR,
        "outputAmount": 1,
        "feeAmount": 1,
        "nonce": 1,
        "deadline": 1,
    }
    for name, value in replacements.items():
        changed = dataclasses.replace(base, **{name: value})
        assert permit_witness_digest(changed, 97, PERMIT2_MAINNET) != digest, name
        assert order_hash(changed) != order_hash(base), name


def test_order_hash_is_eip712_struct_hash() -> None:
    order = _order()
    expected = keccak(
        keccak(text=ORDER_TYPE_STRING)
        + b"".join(
            bytes(12) + bytes.fromhex(v[2:]) if isinstance(v, str) else v.to_bytes(32, "big")
            for v in order.values()
        )
    )
    assert order_hash(order) == expected


@pytest.mark.parametrize("length", [0, 1, 31, 32, 135, 136, 137, 320, 100_000])
def test_the_quote_path_keccak_is_keccak256(length: int) -> None:
    # contracts/orders.py calls pycryptodome's compiled Keccak directly (rate edges: 136 bytes).
    data = (bytes(range(256)) * (length // 256 + 1))[:length]
    assert orders_module._keccak(data) == keccak(data)


def test_encode_static_is_eth_abi_for_static_words() -> None:
    # The quote path's chain reads and transactions are written with it, not with eth_abi.
    types = ["address", "address", "uint256", "bytes32"]
    values = ["0x" + "aB" * 20, ZERO_ADDRESS, 2**256 - 1, b"\x07" * 32]
    assert encode_static(types, values) == abi_encode(types, values)
    for bad in ("0x1234", "ab" * 20, "0x" + "ab" * 21, "0x" + "zz" * 20):
        with pytest.raises(ValueError, match="20-byte hex address"):
            encode_static(["address"], [bad])
    with pytest.raises(OverflowError):
        encode_static(["uint256"], [2**256])


def test_encode_decode_roundtrip() -> None:
    order = _order()
    encoded = encode_order(order)
    assert len(encoded) == 320
    assert decode_order(encoded) == order
    assert (
        abi_decode(
            ["(address,address,address,address,uint256,address,uint256,uint256,uint256,uint256)"],
            encoded,
        )[0][4]
        == order.inputAmount
    )
    with pytest.raises(ValueError, match="320 bytes"):
        decode_order(encoded + b"\x00")


def test_order_validation_and_checksumming() -> None:
    lower = _order(maker=MAKER.address.lower())
    assert lower.maker == MAKER.address
    assert lower.reactor == "0x00000011F84B9aa48e5f8aA8B9897600006289Be"
    for bad in (
        {"maker": "0x1234"},
        {"taker": 5},
        {"inputAmount": -1},
        {"outputAmount": 2**256},
        {"feeAmount": True},
        {"deadline": 1.5},
    ):
        with pytest.raises(ValueError, match="RfqOrder"):
            _order(**bad)
    with pytest.raises(dataclasses.FrozenInstanceError):
        lower.nonce = 3  # type: ignore[misc]


def test_sign_order_and_recover() -> None:
    order = _order()
    signature = sign_order(MAKER.key, order, 97, PERMIT2_MAINNET)
    assert len(signature) == 65
    assert signature[64] in (27, 28)
    assert recover_order_signer(order, 97, PERMIT2_MAINNET, signature) == MAKER.address
    # Same bytes as a wallet signing the typed data (RFC 6979 signatures are deterministic).
    typed = permit_witness_typed_data(order, 97, PERMIT2_MAINNET)
    assert bytes(Account.sign_typed_data(MAKER.key, full_message=typed).signature) == signature
    # Another chain's digest recovers someone else.
    assert recover_order_signer(order, 1, PERMIT2_MAINNET, signature) != MAKER.address


def test_recover_signer_accepts_compact_and_raw_v() -> None:
    digest = keccak(b"digest")
    signature = bytes(Account.unsafe_sign_hash(digest, MAKER.key).signature)
    r, s, v = signature[:32], int.from_bytes(signature[32:64], "big"), signature[64]
    compact = r + ((v - 27) << 255 | s).to_bytes(32, "big")
    assert recover_signer(digest, compact) == MAKER.address
    assert recover_signer(digest, signature[:64] + bytes([v - 27])) == MAKER.address
    with pytest.raises(ValueError, match="recovery id"):
        recover_signer(digest, signature[:64] + b"\x05")
    with pytest.raises(ValueError, match="64 or 65"):
        recover_signer(digest, signature[:63])
    with pytest.raises(ValueError, match="32 bytes"):
        recover_signer(digest[:31], signature)


def test_signing_uses_coincurve() -> None:
    assert isinstance(get_backend(), CoinCurveECCBackend)


def test_nonce_word_and_mask() -> None:
    assert nonce_word_and_mask(0) == (0, 1)
    assert nonce_word_and_mask(255) == (0, 1 << 255)
    assert nonce_word_and_mask(256) == (1, 1)
    assert nonce_word_and_mask(2**200 + 7) == (2**192, 1 << 7)
    with pytest.raises(ValueError, match="nonce"):
        nonce_word_and_mask(-1)


def test_erc6492_wrapping() -> None:
    factory = "0x2222222222222222222222222222222222222222"
    call = create_account_calldata(MAKER.address, 9)
    assert call[:4] == keccak(text="createAccount(address,uint256)")[:4]
    wrapped = wrap_erc6492(factory, call, b"\x01" * 65)
    assert wrapped.endswith(ERC6492_MAGIC_SUFFIX)
    assert is_erc6492_wrapped(wrapped)
    assert not is_erc6492_wrapped(b"\x01" * 65)
    decoded = abi_decode(["address", "bytes", "bytes"], wrapped[:-32])
    assert decoded == (factory, call, b"\x01" * 65)


def test_universal_validator_calldata_and_result() -> None:
    digest = keccak(b"x")
    data = universal_validator_calldata(MAKER.address, digest, b"\xaa" * 65)
    creation = load_artifact("UniversalSigValidator").bytecode
    assert data.startswith(creation)
    assert abi_decode(["address", "bytes32", "bytes"], data[len(creation) :]) == (
        MAKER.address.lower(),
        digest,
        b"\xaa" * 65,
    )
    assert decode_validator_result(b"\x01") is True
    assert decode_validator_result(b"\x00") is False
    for bad in (b"", b"\x02", b"\x00\x01"):
        with pytest.raises(ValueError, match="unexpected"):
            decode_validator_result(bad)
    with pytest.raises(ValueError, match="32 bytes"):
        universal_validator_calldata(MAKER.address, b"\x00" * 31, b"")
