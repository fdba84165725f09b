"""`rfqsim makers run` argument handling (the end-to-end run is an integration test)."""

from __future__ import annotations

import pytest

from makers.cli import build_parser, run_fleet, run_fleet_cli


def test_parser_takes_repeatable_keys_and_rpc_urls() -> None:
    args = build_parser().parse_args(
        ["--key", "alpha=tx_live_a", "--key", "alpha=tx_test_b", "--rpc-url", "56=http://x"]
    )
    assert args.key == ["alpha=tx_live_a", "alpha=tx_test_b"]
    assert args.rpc_url == ["56=http://x"]
    assert args.url == "http://127.0.0.1:8080"
    assert args.config is None
    assert args.duration is None


def test_malformed_key_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_fleet_cli(["--key", "no-equals-sign"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err


async def test_key_for_an_unknown_maker_fails_before_any_request(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = build_parser().parse_args(["--key", "zulu=tx_live_z", "--url", "http://127.0.0.1:9"])
    assert await run_fleet(args) == 1
    assert "unknown maker 'zulu'" in capsys.readouterr().err


async def test_unreachable_control_api_fails_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["--url", "http://127.0.0.1:9"])  # discard port: refused
    assert await run_fleet(args) == 1
    assert "setup failed" in capsys.readouterr().err
