"""A v1 swap request as the swap tests and the saved-state and book-price tests make one: a
taker, and what one whole order costs it."""

from __future__ import annotations

from simulator.services.swaps.service import SwapRequest
from tests.unit.services.limit_orders.factory import CHAIN_ID
from tests.unit.services.limit_orders.harness import (
    NGNS_T,
    USDC_T,
)

TAKER = "0x" + "9a" * 20


COST = 1_000_500  # 1 USDC output + 5 bp fee


def swap_request(sell_amount: int, **changes: object) -> SwapRequest:
    fields: dict[str, object] = {
        "chain_id": CHAIN_ID,
        "sell_token": USDC_T.address,
        "buy_token": NGNS_T.address,
        "sell_amount": sell_amount,
        "taker": TAKER,
        "min_rate": None,
        "require_full_fill": False,
        "preferred": None,
        "restricted": None,
    }
    fields.update(changes)
    return SwapRequest(**fields)  # type: ignore[arg-type]
