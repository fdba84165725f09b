"""A firm quote as an integrator's client asks one of a running simulator (its demo taker key
and wallet): what the fleet-process and console tests use to make an RFQ happen."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from rfqsim.pytest_plugin import RfqSim

CHAIN = 97


def firm_quote(sim: RfqSim, taker: int = 0) -> dict[str, Any]:
    """10 USDC for USDT on chain 97, for the demo wallet numbered ``taker``."""
    body = {
        "chainId": CHAIN,
        "sellToken": sim.token(CHAIN, "USDC"),
        "buyToken": sim.token(CHAIN, "USDT"),
        "sellAmount": "10000000",
        "taker": sim.demo_wallets[taker]["address"],
    }
    request = urllib.request.Request(
        f"{sim.base_url}/v2/rfq/request",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {sim.demo_keys['taker-test']}",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        return dict(json.loads(response.read())["data"])
