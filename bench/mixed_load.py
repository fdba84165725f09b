"""Mixed API load against a running simulator, shared by the soak benchmark and the stop-under-
load test: on the closed-loop driver (bench/load.py), each worker cycles through the price
ladder, a preview, and a keyed firm request that it cancels when quoted. Workers run until told
to stop and survive the server going away (connection errors are counted, not raised)."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bench.load import closed_loop

OPEN_LIMITS = {
    "outstanding_default": 1_000_000,
    "keyless_per_minute": 1_000_000,
    "ip_backstop_per_minute": 10_000_000,
    "reset_windows": True,
}


def token(info: dict[str, Any], chain_id: int, symbol: str) -> str:
    chain = next(c for c in info["chains"] if c["chain_id"] == chain_id)
    return str(next(t["address"] for t in chain["tokens"] if t["symbol"] == symbol))


async def call(
    session: aiohttp.ClientSession, method: str, url: str, **kwargs: Any
) -> tuple[int, Any]:
    async with session.request(method, url, **kwargs) as resp:
        return resp.status, await resp.json(content_type=None)


async def open_limits_and_key(
    session: aiohttp.ClientSession,
    api: str,
    *,
    scopes: tuple[str, ...] = ("trades:write", "trades:read"),
    partner: str = "load",
) -> str:
    """Raise the limits a load run from one client would hit; a new unlimited test key."""
    await call(session, "PUT", f"{api}/_sim/limits", json=OPEN_LIMITS)
    _, created = await call(
        session,
        "POST",
        f"{api}/_sim/keys",
        json={
            "partner": partner,
            "environment": "test",
            "scopes": list(scopes),
            "tier": "unlimited",
        },
    )
    return str(created["data"]["key"])


@dataclass
class MixedLoad:
    """`workers` clients cycling levels → preview → firm request (+ cancel) on chain 97."""

    api: str
    info: dict[str, Any]
    key: str
    counts: Counter[str] = field(default_factory=Counter)  # outcome label -> requests
    quoted: list[str] = field(default_factory=list)  # rfq ids quoted (kept when not cancelled)
    cancel: bool = True  # cancel each quote at once

    def _bodies(self, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
        takers = [w["address"] for w in self.info["demo_wallets"]]
        preview = {
            "chainId": 97,
            "sellToken": token(self.info, 97, "USDT"),
            "buyToken": token(self.info, 97, "NGNS"),
            "sellAmount": str(10**17 * (1 + index % 5)),
        }
        return preview, dict(preview, taker=takers[index % len(takers)])

    def _count(self, what: str, status: int) -> None:
        self.counts[f"{what} {status}"] += 1

    async def _cycle(self, session: aiohttp.ClientSession, index: int) -> None:
        api = self.api
        preview, firm = self._bodies(index)
        headers = {"Authorization": f"Bearer {self.key}"}
        status, _ = await call(session, "GET", f"{api}/v2/rfq/levels?chainId=97")
        self._count("levels", status)
        status, _ = await call(session, "POST", f"{api}/v2/rfq/preview", json=preview)
        self._count("preview", status)
        status, body = await call(
            session, "POST", f"{api}/v2/rfq/request", json=firm, headers=headers
        )
        self._count("request", status)
        if status == 200 and body["data"]["status"] == "quoted":
            rfq_id = body["data"]["rfqId"]
            if self.cancel:
                status, _ = await call(
                    session, "POST", f"{api}/v2/rfq/{rfq_id}/cancel", headers=headers
                )
                self._count("cancel", status)
            else:
                self.quoted.append(rfq_id)

    async def run(self, workers: int, stop: asyncio.Event) -> None:
        timeout = aiohttp.ClientTimeout(total=30)
        connector = aiohttp.TCPConnector(limit=workers)
        async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:

            async def step(index: int) -> None:
                try:
                    await self._cycle(session, index)
                except (aiohttp.ClientError, TimeoutError, ValueError):
                    self.counts["connection error"] += 1
                    await asyncio.sleep(0.05)  # the server is going away: do not spin

            await closed_loop(workers, step, done=stop.is_set)
