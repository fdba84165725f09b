"""The unsigned transactions of a firm quote: approve takerPays of the sell token to the
reactor, and the one swap that executes every order of the quote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from eth_utils.abi import function_signature_to_4byte_selector

from contracts.orders import encode_static
from simulator.services.rfq.model import QuoteState

APPROVE = function_signature_to_4byte_selector("approve(address,uint256)")
EXECUTE = function_signature_to_4byte_selector("execute((bytes,bytes))")
EXECUTE_BATCH = function_signature_to_4byte_selector("executeBatch((bytes,bytes)[])")


@dataclass(frozen=True)
class UnsignedTx:
    to: str
    data: bytes
    chain_id: int  # value is always 0: the fee is taken in the sell token


class TransactionPair(NamedTuple):
    """What the taker sends, in order: the approval, then the one swap."""

    approval: UnsignedTx
    swap: UnsignedTx


def approval(chain_id: int, sell_token: str, spender: str, amount: int) -> UnsignedTx:
    return UnsignedTx(
        sell_token, APPROVE + encode_static(["address", "uint256"], [spender, amount]), chain_id
    )


# The swap's calldata is written here rather than by eth_abi's generic encoder (several times
# slower, and every firm quote carries one): the ABI layout of `(bytes,bytes)` and of
# `(bytes,bytes)[]`, the only shapes the reactor takes (tests/unit/services/rfq/
# test_transactions.py holds it to eth_abi's output).


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _padded(data: bytes) -> bytes:
    """`bytes` in a tail: its length, then the data right-padded to whole words."""
    return _word(len(data)) + data + b"\0" * (-len(data) % 32)


def _signed_order(order: bytes, signature: bytes) -> bytes:
    """One SignedOrder `(bytes order, bytes sig)`: two offsets, then both tails."""
    first = _padded(order)
    return _word(64) + _word(64 + len(first)) + first + _padded(signature)


def encode_signed_order(order: bytes, signature: bytes) -> bytes:
    """abi.encode((bytes,bytes)): the argument of `execute`."""
    return _word(32) + _signed_order(order, signature)


def encode_signed_orders(signed: list[tuple[bytes, bytes]]) -> bytes:
    """abi.encode((bytes,bytes)[]): the argument of `executeBatch`."""
    items = [_signed_order(order, signature) for order, signature in signed]
    offsets, at = [], 32 * len(items)
    for item in items:
        offsets.append(_word(at))
        at += len(item)
    return _word(32) + _word(len(items)) + b"".join(offsets) + b"".join(items)


def swap(chain_id: int, reactor: str, quote: QuoteState) -> UnsignedTx:
    signed = [(o.encoded_order, o.signature) for o in quote.orders]
    if len(signed) == 1:
        data = EXECUTE + encode_signed_order(*signed[0])
    else:
        data = EXECUTE_BATCH + encode_signed_orders(signed)
    return UnsignedTx(reactor, data, chain_id)


def for_quote(chain_id: int, sell_token: str, quote: QuoteState) -> TransactionPair:
    """Approve takerPays to the quote's reactor, then execute its orders."""
    return TransactionPair(
        approval(chain_id, sell_token, quote.reactor, quote.taker_pays),
        swap(chain_id, quote.reactor, quote),
    )
