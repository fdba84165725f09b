"""Fill reconciliation delay: a taker broadcasts each firm quote's swap itself, without
``/submit``, and the bench measures the time from the swap's receipt being available (Anvil
automines) until ``GET /v2/rfq/{id}`` shows ``filled``, polled every 5 ms, against a simulator
with fast makers; transactions are signed locally and sent over raw JSON-RPC."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import aiohttp
from eth_account import Account

from bench import processes
from bench.load import percentile
from bench.report import Section
from bench.sim_api import FAST_MAKERS, call_json, setup_bench_key, token_address
from rfqkit.json_rpc import rpc


async def _fill_delays(api: str, info: dict[str, Any], fills: int) -> list[float]:
    chain = next(c for c in info["chains"] if c["chain_id"] == 97)
    wallet = info["demo_wallets"][1]
    account = Account.from_key(wallet["private_key"])
    body = {
        "chainId": 97,
        "sellToken": token_address(info, 97, "USDT"),
        "buyToken": token_address(info, 97, "NGNS"),
        "sellAmount": str(10**17),
        "taker": account.address,
    }
    delays: list[float] = []
    async with aiohttp.ClientSession() as session:
        key = await setup_bench_key(session, api)
        headers = {"Authorization": f"Bearer {key}"}
        rpc_url = chain["rpc_url"]
        nonce = int(rpc(rpc_url, "eth_getTransactionCount", [account.address, "pending"]), 16)

        def send(to: str, data: str) -> str:
            nonlocal nonce
            signed = account.sign_transaction(
                {
                    "to": to,
                    "data": data,
                    "value": 0,
                    "gas": 1_000_000,
                    "gasPrice": 10**10,
                    "nonce": nonce,
                    "chainId": 97,
                }
            )
            nonce += 1
            raw = "0x" + signed.raw_transaction.hex()
            return str(rpc(rpc_url, "eth_sendRawTransaction", [raw]))

        def receipt(tx_hash: str) -> dict[str, Any]:
            while (found := rpc(rpc_url, "eth_getTransactionReceipt", [tx_hash])) is None:
                time.sleep(0.001)
            return dict(found)

        approved = False
        for _ in range(fills):
            request = await call_json(
                session, "POST", f"{api}/v2/rfq/request", json=body, headers=headers
            )
            data = request["data"]
            if data["status"] != "quoted":
                continue
            if not approved:
                # One max approval up front: a USDT-like token refuses nonzero-to-nonzero changes.
                approval = data["transactions"]["approval"]
                receipt(send(approval["to"], approval["data"][:74] + "f" * 64))
                approved = True
            swap = data["transactions"]["swap"]
            tx_hash = send(swap["to"], swap["data"])
            assert receipt(tx_hash)["status"] == "0x1"
            mined = time.perf_counter()
            while True:
                record = await call_json(
                    session, "GET", f"{api}/v2/rfq/{data['rfqId']}", headers=headers
                )
                if record["data"]["status"] == "filled":
                    delays.append((time.perf_counter() - mined) * 1000)
                    break
                if time.perf_counter() - mined > 10:
                    break
                await asyncio.sleep(0.005)
    return delays


def bench_fill_reconciliation(fills: int) -> Section:
    with processes.simulator("--config", str(FAST_MAKERS)) as started:
        delays = asyncio.run(_fill_delays(started.info["api_url"], started.info, fills))
    section = Section(
        title="Fill reconciliation delay",
        intro=(
            f"{fills} swaps broadcast by a taker without /submit; time from the swap's receipt "
            "being available (automine) until GET /v2/rfq/{id} shows filled, polled every 5 ms."
        ),
        header=("measure", "value", "target"),
    )
    section.rows += [
        ("fills measured", str(len(delays)), str(fills)),
        ("median delay", f"{statistics.median(delays):.0f} ms", "—"),
        ("p99 delay", f"{percentile(delays, 99):.0f} ms", "≤ 300 ms"),
    ]
    return section
