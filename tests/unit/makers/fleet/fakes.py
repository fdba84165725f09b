"""What the tests of SimulatedMaker and MakerFleet (makers/fleet.py) share: :class:`FakeChain`,
an in-memory MakerChain with balances and allowances where USDT refuses a nonzero to nonzero
approval; three maker wallets and their live keys; :func:`maker_config` for one maker; and the
readers of a stream connection: :func:`until` (round trips until a condition holds),
:func:`signer` (who signed a quote) and :func:`levels_by_direction`. The fixtures that start
makers against the in-test stream server are in this package's conftest.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from eth_account import Account

from contracts.orders import recover_order_signer
from makers.chain import ApprovalFailed
from makers.client import Backoff
from makers.config import FixedLatencyConfig, MakerConfig
from makers.fleet import SimulatedMaker
from makers.pricing import TokenSpec
from rfqkit.maker_protocol import Levels, MakerQuote, Welcome
from rfqkit.wallets import maker_wallet
from tests.unit.makers.fake_stream import ADDR, FakeConnection

USDT, NGNS = ADDR["USDT"], ADDR["NGNS"]
SPEC = {USDT: TokenSpec("USDT", 18), NGNS: TokenSpec("NGNS", 6)}
E18, E6 = 10**18, 10**6
FAST = Backoff(initial_s=0.01, max_s=0.05)


class FakeChain:
    """In-memory MakerChain: balances and allowances; USDT refuses nonzero -> nonzero."""

    def __init__(self, chain_id: int = 56) -> None:
        self.chain_id = chain_id
        self.symbols = {USDT: "USDT", NGNS: "NGNS"}
        self.balances: dict[tuple[str, str], int] = {}
        self.allowances: dict[tuple[str, str, str], int] = {}
        self.approvals: list[tuple[str, str, int]] = []  # (token, owner, amount)
        self.hashes = itertools.count(1)
        self.closed = False

    async def token_symbol(self, token: str) -> str:
        return self.symbols[token.lower()]

    async def balance_of(self, token: str, owner: str) -> int:
        return self.balances.get((token.lower(), owner.lower()), 0)

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        return self.allowances.get((token.lower(), owner.lower(), spender.lower()), 0)

    async def approve(self, private_key: str, token: str, spender: str, amount: int) -> str:
        owner = Account.from_key(private_key).address.lower()
        key = (token.lower(), owner, spender.lower())
        if token.lower() == USDT and amount and self.allowances.get(key, 0):
            raise ApprovalFailed("USDT: nonzero -> nonzero")
        self.allowances[key] = amount
        self.approvals.append((token.lower(), owner, amount))
        return f"0x{next(self.hashes):064x}"

    async def close(self) -> None:
        self.closed = True

    def fund(self, owner: str, usdt: int, ngns: int) -> None:
        self.balances[(USDT, owner.lower())] = usdt
        self.balances[(NGNS, owner.lower())] = ngns


WALLETS = [maker_wallet(i) for i in range(3)]
KEYS = {f"tx_live_maker{i}": w.address for i, w in enumerate(WALLETS)}


def maker_config(name: str = "m0", index: int = 0, **changes: Any) -> MakerConfig:
    body: dict[str, Any] = {
        "name": name,
        "wallet_index": index,
        "chains": [56],
        "spread_bps": 10,
        "impact_bps": 20,
        "max_inventory_fraction": 1,
        "latency": FixedLatencyConfig(ms=0),
        **changes,
    }
    return MakerConfig.model_validate(body)


StartMaker = Callable[..., Awaitable[tuple[SimulatedMaker, FakeConnection]]]


async def until(conn: FakeConnection, predicate: Callable[[], bool]) -> None:
    """Round trips to the maker until `predicate` holds: its callbacks run in between."""
    for _ in range(100):
        if predicate():
            return
        await conn.barrier()
    raise AssertionError("condition never held")


def signer(quote: MakerQuote, welcome: Welcome) -> str:
    return recover_order_signer(
        quote.order.to_order(),
        welcome.chains[0].chain_id,
        welcome.chains[0].signature_transfer,
        bytes.fromhex(quote.signature[2:]),
    )


async def levels_by_direction(conn: FakeConnection) -> dict[tuple[str, str], Levels]:
    seen: dict[tuple[str, str], Levels] = {}
    while len(seen) < 2:
        message = await conn.receive()
        if isinstance(message, Levels):
            seen[(message.sell_token.lower(), message.buy_token.lower())] = message
    return seen
