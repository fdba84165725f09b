"""Limit orders for the book's unit tests: real signed orders (so hashes and signatures are
genuine) over fixed addresses, and a LiveState the tests set by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count

from eth_account import Account

from contracts.orders import ZERO_ADDRESS, RfqOrder, order_hash, sign_order
from simulator.services.limit_orders.model import LimitOrder
from simulator.services.limit_orders.pricing import order_fee

CHAIN_ID = 97
REACTOR = "0x" + "11" * 20
PERMIT2 = "0x" + "22" * 20
NGNS = "0x" + "33" * 20  # 6 decimals
USDC = "0x" + "44" * 20  # 6 decimals
USDT = "0x" + "55" * 20  # 18 decimals
DECIMALS = {NGNS.lower(): 6, USDC.lower(): 6, USDT.lower(): 18}
MAKERS = [Account.from_key(bytes([i + 1]) * 32) for i in range(4)]
_sequence = count(1)
_nonces = count(1)


def limit_order(
    sell_amount: int,
    buy_amount: int,
    *,
    sell: str = NGNS,
    buy: str = USDC,
    maker: int = 0,
    fee_bps: int = 5,
    deadline: int = 2_000_000_000,
    nonce: int | None = None,
    sequence: int | None = None,
    partner_id: str | None = "ptn_a",
) -> LimitOrder:
    account = MAKERS[maker]
    order = RfqOrder(
        reactor=REACTOR,
        maker=account.address,
        taker=ZERO_ADDRESS,
        inputToken=sell,
        inputAmount=sell_amount,
        outputToken=buy,
        outputAmount=buy_amount,
        feeAmount=order_fee(buy_amount, fee_bps),
        nonce=next(_nonces) if nonce is None else nonce,
        deadline=deadline,
    )
    seq = next(_sequence) if sequence is None else sequence
    return LimitOrder(
        order_id=f"lo_{seq}",
        chain_id=CHAIN_ID,
        partner_id=partner_id,
        order=order,
        signature=sign_order(bytes(account.key), order, CHAIN_ID, PERMIT2),
        order_hash=order_hash(order),
        sell_decimals=DECIMALS[sell.lower()],
        buy_decimals=DECIMALS[buy.lower()],
        created_at=1_800_000_000.0 + seq,
        sequence=seq,
    )


@dataclass
class State:
    """A LiveState set by hand: every maker funded and every nonce unspent unless told."""

    spendable_by: dict[tuple[str, str], int] = field(default_factory=dict)
    spent_nonces: set[tuple[str, int]] = field(default_factory=set)
    default_spendable: int | None = 10**30

    def spendable(self, token: str, maker: str) -> int | None:
        return self.spendable_by.get((token.lower(), maker.lower()), self.default_spendable)

    def spent(self, maker: str, nonce: int) -> bool | None:
        return (maker.lower(), nonce) in self.spent_nonces
