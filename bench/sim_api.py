"""The simulator as the RFQ, auth and fill benches drive it over HTTP: the token addresses of the
ready file's chains (:func:`token_address`), one JSON call on a shared ``aiohttp`` session
(:func:`call_json`), limits opened for a load from one client plus an unlimited bench key
(:func:`setup_bench_key`, :func:`open_limits`), and the fast-makers configuration the quote
benches start the simulator with (:data:`FAST_MAKERS`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp

FAST_MAKERS = Path(__file__).with_name("fast_makers.yaml")


def token_address(info: dict[str, Any], chain_id: int, symbol: str) -> str:
    chain = next(c for c in info["chains"] if c["chain_id"] == chain_id)
    return str(next(t["address"] for t in chain["tokens"] if t["symbol"] == symbol))


def firm_body(info: dict[str, Any]) -> dict[str, Any]:
    """The benches' firm quote: 10 USDC for USDT on chain 97, for the first demo wallet."""
    return {
        "chainId": 97,
        "sellToken": token_address(info, 97, "USDC"),
        "buyToken": token_address(info, 97, "USDT"),
        "sellAmount": "10000000",
        "taker": info["demo_wallets"][0]["address"],
    }


async def call_json(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> Any:
    async with session.request(method, url, **kw) as resp:
        return await resp.json()


async def setup_bench_key(
    session: aiohttp.ClientSession, api: str, *, tier: str = "unlimited"
) -> str:
    await call_json(
        session,
        "PUT",
        f"{api}/_sim/limits",
        json={
            "outstanding_default": 1_000_000,
            "keyless_per_minute": 1_000_000,
            "ip_backstop_per_minute": 10_000_000,
            "reset_windows": True,
        },
    )
    created = await call_json(
        session,
        "POST",
        f"{api}/_sim/keys",
        json={
            "partner": "bench",
            "environment": "test",
            "scopes": ["trades:write", "trades:read"],
            "tier": tier,
        },
    )
    return str(created["data"]["key"])


async def slow_down_maker(session: aiohttp.ClientSession, api: str, name: str, ms: int) -> None:
    """Make one simulated maker answer after `ms` (fixed), and let the change take hold."""
    await call_json(
        session,
        "PATCH",
        f"{api}/_sim/makers/{name}",
        json={"latency": {"kind": "fixed", "ms": ms}},
    )
    await asyncio.sleep(1.5)


async def _limits_open(api: str) -> None:
    async with aiohttp.ClientSession() as session:
        await setup_bench_key(session, api)


def open_limits(api: str) -> None:
    """Raise the per-IP backstop and keyless limits for a load run from one client."""
    asyncio.run(_limits_open(api))
