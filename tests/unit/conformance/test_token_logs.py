"""conformance.wire.chain's readers of a receipt's ERC-20 Transfer logs: what one transaction
moved for one holder, whatever else moved that holder's balance meanwhile."""

from __future__ import annotations

from typing import Any

from conformance.wire.chain import TRANSFER_TOPIC, token_delta, token_transfers_to

TOKEN = "0x" + "aa" * 20
OTHER_TOKEN = "0x" + "bb" * 20
RECIPIENT = "0x" + "cc" * 20
TAKER = "0x" + "dd" * 20


def transfer(token: str, source: str, dest: str, amount: int) -> dict[str, Any]:
    def topic(address: str) -> str:
        return "0x" + "00" * 12 + address[2:]

    return {
        "address": token,
        "topics": [TRANSFER_TOPIC, topic(source), topic(dest)],
        "data": hex(amount),
    }


def test_the_delta_is_what_the_transaction_moved_in_minus_out_of_one_token() -> None:
    receipt = {
        "logs": [
            transfer(TOKEN, TAKER, RECIPIENT, 500),
            transfer(TOKEN, TAKER, RECIPIENT, 250),
            transfer(TOKEN, RECIPIENT, TAKER, 100),
            transfer(OTHER_TOKEN, TAKER, RECIPIENT, 7),  # another token
            {"address": TOKEN, "topics": ["0x" + "11" * 32], "data": "0x01"},  # another event
        ]
    }
    assert token_delta(receipt, TOKEN, RECIPIENT) == 650
    assert token_delta(receipt, TOKEN, TAKER.upper().replace("0X", "0x")) == -650
    assert token_delta(receipt, OTHER_TOKEN, RECIPIENT) == 7
    assert token_transfers_to(receipt, TOKEN, RECIPIENT) == [500, 250]
    assert token_delta({"logs": []}, TOKEN, RECIPIENT) == 0
