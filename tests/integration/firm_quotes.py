"""A firm quote as an integrator's client asks one of a running simulator (its demo taker key
and wallet): what the fleet-process and console tests use to make an RFQ happen."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from conformance.wire.chain import Chain
from rfqkit.wallets import Wallet
from rfqsim.pytest_plugin import RfqSim

CHAIN = 97


def firm_request(
    sim: RfqSim,
    taker: int = 0,
    *,
    sell_amount: int = 10_000_000,
    chain: int = CHAIN,
    key: str = "taker-test",
    restricted: list[str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """USDC (10 by default) for USDT on chain 97 (by default), for the demo wallet numbered
    ``taker`` with the demo key ``key`` (only the makers `restricted` names asked, if given):
    the status and the JSON body, whatever the status."""
    body: dict[str, Any] = {
        "chainId": chain,
        "sellToken": sim.token(chain, "USDC"),
        "buyToken": sim.token(chain, "USDT"),
        "sellAmount": str(sell_amount),
        "taker": sim.demo_wallets[taker]["address"],
    }
    if restricted is not None:
        body["restrictedLiquidityWallets"] = restricted
    request = urllib.request.Request(
        f"{sim.base_url}/v2/rfq/request",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {sim.demo_keys[key]}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(json.loads(response.read()))
    except urllib.error.HTTPError as refused:
        return refused.code, dict(json.loads(refused.read()))


def firm_quote(sim: RfqSim, taker: int = 0) -> dict[str, Any]:
    """A firm request that must answer 200: its data."""
    status, body = firm_request(sim, taker)
    assert status == 200, body
    return dict(body["data"])


def execute(sim: RfqSim, quote: dict[str, Any], taker: int = 0, chain: int = CHAIN) -> None:
    """The quote's approval and swap, signed by the demo wallet numbered ``taker``, each
    mined."""
    node = Chain(sim.rpc_urls[chain], chain)
    wallet = Wallet(sim.demo_wallets[taker]["address"], sim.demo_wallets[taker]["private_key"])
    for name in ("approval", "swap"):
        tx = quote["transactions"][name]
        node.transact(wallet, tx["to"], bytes.fromhex(tx["data"][2:]))
