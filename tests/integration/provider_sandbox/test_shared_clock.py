"""In-process the sandbox follows the simulator's clock: moving that clock alone (no reads)
moves transfers, through the background tick; the sandbox's own clock control refuses."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import aiohttp
import pytest

from provider_sandbox import start_sandbox
from rfqkit.wallets import derive_wallet
from tests.integration.provider_sandbox.harness import CHAIN_ID, Harness, kyc_documents

pytestmark = pytest.mark.integration


async def test_shared_clock_drives_progress_without_reads(harness: Harness) -> None:
    offset = [0.0]
    config = dataclasses.replace(harness.running.sandbox.config, port=0, seed=11)
    running = await start_sandbox(config, time_source=lambda: time.time() + offset[0])
    headers = {"Authorization": f"Bearer {config.api_key}"}
    api = f"{running.url}/api/v1"
    try:
        async with aiohttp.ClientSession(headers=headers) as session:
            async with session.post(
                f"{running.url}/sandbox/clock/advance", json={"seconds": 5}
            ) as r:
                assert r.status == 409
            person = {
                "reference": "0xshared",
                "firstName": "Ada",
                "lastName": "Eze",
                "email": "e@example.com",
                "phone": "+2348000000002",
            }
            async with session.post(f"{api}/customers", json=person) as r:
                customer_id = (await r.json())["customer"]["id"]
            async with session.post(
                f"{api}/customers/{customer_id}/kyc", json=kyc_documents("A9")
            ) as r:
                assert r.status == 200
            offset[0] += 30
            quote_body = {
                "side": "buy",
                "fiat": "NGN",
                "token": "NGNS",
                "chainId": CHAIN_ID,
                "amount": "10000",
                "sandbox": True,
            }
            async with session.post(f"{api}/quotes", json=quote_body) as r:
                quote = await r.json()
            destination = derive_wallet("shared-clock").address
            async with session.post(
                f"{api}/transfers",
                json={
                    "quoteId": quote["quoteId"],
                    "reference": "ramp_shared_1",
                    "customerId": customer_id,
                    "sandbox": True,
                    "destination": {"address": destination, "chainId": CHAIN_ID},
                },
            ) as r:
                assert r.status == 201, await r.text()
                transfer_id = (await r.json())["transfer"]["id"]
            async with session.post(
                f"{running.url}/sandbox/transfers/{transfer_id}/pay-in", json={}
            ) as r:
                assert r.status == 200

            offset[0] += 15  # nobody reads: only the tick can notice
            for _ in range(100):
                if "completed" in harness.receiver.statuses(transfer_id):
                    break
                await asyncio.sleep(0.05)
            assert harness.receiver.statuses(transfer_id) == [
                "funds_received",
                "funds_converted",
                "outgoing_payment_sent",
                "completed",
            ]
            assert running.state.calls["GET /api/v1/transfers/{id}"] == 0
    finally:
        await running.stop()
