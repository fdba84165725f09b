"""`rfqsim makers run` end to end: keys created through the control API, RPC URLs read from
/_sim/info, makers approving on a real chain, clean exit after --duration."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from makers.chain import MAX_UINT256
from makers.cli import build_parser, run_fleet
from rfqkit.wallets import maker_wallet
from tests.integration.makers.venue import CHAIN_ID, Venue
from tests.unit.makers.fake_stream import FakeStreamServer

pytestmark = pytest.mark.integration


@pytest.fixture
async def simulator(venue: Venue) -> AsyncIterator[tuple[FakeStreamServer, list[dict[str, Any]]]]:
    """The maker stream plus the two control-API routes the CLI uses."""
    created: list[dict[str, Any]] = []
    server = FakeStreamServer(lambda key, wallet: venue.welcome(wallet), keys={})

    async def info(request: web.Request) -> web.Response:
        chain = {"chain_id": CHAIN_ID, "environment": "live", "rpc_url": venue.rpc_url}
        return web.json_response({"data": {"chains": [chain]}})

    async def create_key(request: web.Request) -> web.Response:
        body = await request.json()
        created.append(body)
        key = f"tx_{body['environment']}_{body['name']}.secret"
        server.keys[key] = body["maker_wallet"]
        return web.json_response({"data": {"key": key, "name": body["name"]}}, status=201)

    server.app.router.add_get("/_sim/info", info)
    server.app.router.add_post("/_sim/keys", create_key)
    await server.start()
    try:
        yield server, created
    finally:
        await server.close()


async def test_fleet_cli_creates_keys_and_runs_against_a_simulator_url(
    tmp_path: Path,
    venue: Venue,
    simulator: tuple[FakeStreamServer, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, created = simulator
    config = tmp_path / "fleet.yaml"
    config.write_text(
        """
makers:
  - {name: one, wallet_index: 1, chains: [56, 97], latency: {kind: fixed, ms: 0}}
  - {name: two, wallet_index: 2, chains: [56], behaviour: silent,
     latency: {kind: fixed, ms: 0}}
""",
        encoding="utf-8",
    )
    args = build_parser().parse_args(
        ["--config", str(config), "--url", server.url, "--duration", "0.2", "--seed", "3"]
    )
    assert await run_fleet(args) == 0
    # Only chain 56 exists here, so one live key each, bound to the maker's wallet.
    assert created == [
        {
            "partner": "makers",
            "name": name,
            "environment": "live",
            "scopes": ["maker:stream"],
            "maker_wallet": maker_wallet(index).address,
        }
        for name, index in (("one", 1), ("two", 2))
    ]
    assert sorted(k for k in server.handshakes if k) == sorted(server.keys)
    spender = venue.deployment.contracts.signature_transfer
    for index in (1, 2):
        for symbol in ("USDT", "NGNS"):
            allowance = await venue.allowance(
                venue.token(symbol), maker_wallet(index).address, spender
            )
            assert allowance == MAX_UINT256
    out = capsys.readouterr().out
    assert "maker one" in out
    assert "silent" in out
    assert all(c.closed.is_set() for c in server.connections)


async def test_fleet_cli_with_given_keys_and_rpc_urls_needs_no_control_api(
    venue: Venue,
) -> None:
    server = FakeStreamServer(
        lambda key, wallet: venue.welcome(wallet),
        keys={"tx_live_given": maker_wallet(0).address},
    )
    await server.start()
    try:
        config = Path(__file__).with_name("one_maker.yaml")
        args = build_parser().parse_args(
            [
                "--config",
                str(config),
                "--url",
                server.url,
                "--key",
                "solo=tx_live_given",
                "--rpc-url",
                f"{CHAIN_ID}={venue.rpc_url}",
                "--duration",
                "0",
            ]
        )
        assert await run_fleet(args) == 0
        assert server.handshakes == ["tx_live_given"]
    finally:
        await server.close()
