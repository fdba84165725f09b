"""The quote's transactions are written without eth_abi's generic encoder
(services/rfq/transactions.py): their calldata must be byte for byte what eth_abi writes, for
one order (`execute`) and several (`executeBatch`), at order and signature lengths that do and
do not fill whole words."""

from __future__ import annotations

import pytest
from eth_abi.abi import encode

from simulator.services.rfq.transactions import (
    approval,
    encode_signed_order,
    encode_signed_orders,
)


def blob(length: int, seed: int) -> bytes:
    return bytes((seed + i) % 251 for i in range(length))


@pytest.mark.parametrize(("order_len", "sig_len"), [(320, 65), (320, 64), (0, 1), (33, 96)])
def test_one_signed_order_matches_eth_abi(order_len: int, sig_len: int) -> None:
    order, sig = blob(order_len, 1), blob(sig_len, 7)
    assert encode_signed_order(order, sig) == encode(["(bytes,bytes)"], [(order, sig)])


@pytest.mark.parametrize("count", [1, 2, 3, 10])
def test_several_signed_orders_match_eth_abi(count: int) -> None:
    signed = [(blob(320 + i, i), blob(65 - (i % 2), 3 * i)) for i in range(count)]
    assert encode_signed_orders(signed) == encode(["(bytes,bytes)[]"], [signed])


def test_approval_matches_eth_abi() -> None:
    spender = "0x" + "Ab" * 20
    tx = approval(97, "0x" + "11" * 20, spender, 2**256 - 1)
    assert tx.data[4:] == encode(["address", "uint256"], [spender, 2**256 - 1])


def test_approval_refuses_what_is_no_address() -> None:
    with pytest.raises(ValueError, match="20-byte hex address"):
        approval(97, "0x" + "11" * 20, "0x1234", 1)
