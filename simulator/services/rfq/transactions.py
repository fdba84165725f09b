"""The unsigned transactions of a firm quote: approve takerPays of the sell token to the
reactor, and the one swap that executes every order of the quote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector

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
        sell_token, APPROVE + encode(["address", "uint256"], [spender, amount]), chain_id
    )


def swap(chain_id: int, reactor: str, quote: QuoteState) -> UnsignedTx:
    signed = [(o.encoded_order, o.signature) for o in quote.orders]
    if len(signed) == 1:
        data = EXECUTE + encode(["(bytes,bytes)"], signed)
    else:
        data = EXECUTE_BATCH + encode(["(bytes,bytes)[]"], [signed])
    return UnsignedTx(reactor, data, chain_id)


def for_quote(chain_id: int, sell_token: str, quote: QuoteState) -> TransactionPair:
    """Approve takerPays to the quote's reactor, then execute its orders."""
    return TransactionPair(
        approval(chain_id, sell_token, quote.reactor, quote.taker_pays),
        swap(chain_id, quote.reactor, quote),
    )
