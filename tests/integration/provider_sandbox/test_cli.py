"""`python -m provider_sandbox serve` as a real child process, configured from a simulator-shaped
ready file."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.integration.provider_sandbox.harness import CHAIN_ID, Harness

pytestmark = pytest.mark.integration


async def test_standalone_serve_reads_the_simulator_ready_file(
    harness: Harness, tmp_path: Path
) -> None:
    simulator_ready = tmp_path / "rfqsim.json"
    simulator_ready.write_text(
        json.dumps(
            {
                "chains": [
                    {
                        "chain_id": CHAIN_ID,
                        "name": "bnb-testnet",
                        "rpc_url": harness.chain.rpc_url,
                        "tokens": [
                            {"symbol": "USDT", "address": "0x" + "11" * 20, "decimals": 18},
                            {"symbol": "NGNS", "address": harness.token, "decimals": 6},
                        ],
                    }
                ]
            }
        )
    )
    ready = tmp_path / "sandbox.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "provider_sandbox",
        "serve",
        "--port",
        "0",
        "--ready-file",
        str(ready),
        "--from-ready-file",
        str(simulator_ready),
        "--webhook-url",
        harness.receiver.url,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        for _ in range(600):
            if ready.exists() or process.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert ready.exists(), "the sandbox never wrote its ready file"
        info = json.loads(ready.read_text())
        assert info["chains"] == [
            {
                "chain_id": CHAIN_ID,
                "rpc_url": harness.chain.rpc_url,
                "network": "bnb-testnet",
                "token": harness.token,
            }
        ]
        headers = {"Authorization": f"Bearer {info['api_key']}"}
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{info['api_url']}/capabilities", headers=headers) as r:
                assert r.status == 200
                assert (await r.json())["sandboxChains"] == [CHAIN_ID]
            async with session.post(
                f"{info['controls_url']}/clock/advance", json={"seconds": 90}
            ) as r:
                assert r.status == 200
                assert (await r.json())["offsetSeconds"] == 90
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 20) == 0
    assert not ready.exists()
