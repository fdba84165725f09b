"""`rfqsim makers run`: a maker fleet as its own process, against any simulator URL.

    rfqsim makers run [--config FILE] [--url URL] [--rpc-url CHAIN=URL ...] [--key NAME=KEY ...]
                      [--seed N] [--duration SECONDS] [--log-level LEVEL]

Without `--config` the default fleet runs (`makers.config.default_fleet`). A maker without a
`--key` gets one maker credential per environment of the chains it serves, created through the
simulator's control API (`POST /_sim/keys`, partner "makers", scope `maker:stream`, bound to
its wallet; plus `maker:fill` for a filling operator). Makers with a v1 book role (a filling
operator, resting orders) also get a v1 API key per environment (quotes:read, trades:read,
trades:write) from the control API; without it they only quote. Chain RPC URLs default to the
simulator's `GET /_sim/info`; `--rpc-url` overrides them (and is required, with `--key`,
against a service without the control API).

Hook it up either as `run_fleet_cli(argv)` with the arguments after `makers run`, or by adding
`add_fleet_arguments(subparser)` to an argparse sub-command and calling `run_fleet(args)`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp

from makers.client import MakerClientError
from makers.config import FleetConfig, default_fleet, load_fleet_config
from makers.fleet import MakerFleet
from rfqkit.redaction import install_redaction

log = logging.getLogger("rfqsim.makers")

DEFAULT_URL = "http://127.0.0.1:8080"
KEY_PREFIX_ENVIRONMENT = {"tx_live_": "live", "tx_test_": "test"}


class FleetCliError(RuntimeError):
    """A setup step failed (bad argument, control API refused); the message says which."""


def _pairs(values: Sequence[str], flag: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise FleetCliError(f"{flag} takes NAME=VALUE, got {value!r}")
        pairs.append((name, rest))
    return pairs


def add_fleet_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--config", type=Path, help="fleet YAML (default: the default fleet)")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"simulator base URL ({DEFAULT_URL})")
    parser.add_argument(
        "--rpc-url",
        action="append",
        default=[],
        metavar="CHAIN=URL",
        help="JSON-RPC URL of a chain (default: from GET /_sim/info); repeatable",
    )
    parser.add_argument(
        "--key",
        action="append",
        default=[],
        metavar="NAME=KEY",
        help="maker credential of maker NAME (repeat for its live and test keys); "
        "makers without one get keys from POST /_sim/keys",
    )
    parser.add_argument("--seed", type=int, help="seed of the fleet's random draws")
    parser.add_argument(
        "--duration", type=float, help="stop after this many seconds (default: until a signal)"
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (INFO)")
    return parser


def build_parser() -> argparse.ArgumentParser:
    return add_fleet_arguments(
        argparse.ArgumentParser(
            prog="rfqsim makers run",
            description="Run simulated makers against a simulator's maker stream.",
        )
    )


async def _control_api(
    session: aiohttp.ClientSession, method: str, url: str, body: Any = None
) -> dict[str, Any]:
    async with session.request(method, url, json=body) as response:
        text = await response.text()
        if response.status >= 300:
            raise FleetCliError(f"{method} {url} answered {response.status}: {text[:500]}")
        data = (await response.json())["data"]
        if not isinstance(data, dict):
            raise FleetCliError(f"{method} {url}: unexpected body {text[:200]}")
        return data


async def resolve_setup(
    session: aiohttp.ClientSession,
    config: FleetConfig,
    url: str,
    given_keys: Sequence[tuple[str, str]],
    given_rpc_urls: dict[int, str],
) -> tuple[dict[str, list[str]], dict[int, str]]:
    """Credentials per maker and RPC URL per chain: the given ones, the rest from the control
    API (keys created, URLs read from /_sim/info)."""
    base = url.rstrip("/")
    credentials: dict[str, list[str]] = {m.name: [] for m in config.makers}
    for name, key in given_keys:
        if name not in credentials:
            raise FleetCliError(f"--key names unknown maker {name!r}")
        credentials[name].append(key)
    served = {chain for m in config.makers for chain in m.chains}
    needs_keys = [m for m in config.makers if not credentials[m.name]]
    rpc_urls = dict(given_rpc_urls)
    if not needs_keys and served <= rpc_urls.keys():
        return credentials, rpc_urls
    info = await _control_api(session, "GET", f"{base}/_sim/info")
    environments: dict[int, str] = {}
    for chain in info.get("chains", []):
        environments[int(chain["chain_id"])] = str(chain["environment"])
        rpc_urls.setdefault(int(chain["chain_id"]), str(chain["rpc_url"]))
    for maker in needs_keys:
        wallet = maker.wallet().address
        for environment in sorted({environments[c] for c in maker.chains if c in environments}):
            created = await _control_api(
                session,
                "POST",
                f"{base}/_sim/keys",
                {
                    "partner": "makers",
                    "name": maker.name,
                    "environment": environment,
                    "scopes": ["maker:stream", "maker:fill"]
                    if maker.fills_book
                    else ["maker:stream"],
                    "maker_wallet": wallet,
                },
            )
            credentials[maker.name].append(str(created["key"]))
        if not credentials[maker.name]:
            raise FleetCliError(f"maker {maker.name}: none of its chains {maker.chains} exist")
    return credentials, rpc_urls


async def v1_keys(
    session: aiohttp.ClientSession, config: FleetConfig, url: str
) -> dict[str, dict[str, str]]:
    """v1 API keys for the makers with a book role, from the control API; none without it."""
    base = url.rstrip("/")
    roles = [m for m in config.makers if m.fills_book or m.book_orders is not None]
    if not roles:
        return {}
    try:
        info = await _control_api(session, "GET", f"{base}/_sim/info")
    except (FleetCliError, aiohttp.ClientError, ValueError, KeyError):
        log.info("no control API: the makers' v1 book roles stay off")
        return {}
    environments = {int(c["chain_id"]): str(c["environment"]) for c in info.get("chains", [])}
    out: dict[str, dict[str, str]] = {}
    for maker in roles:
        for environment in sorted({environments[c] for c in maker.chains if c in environments}):
            created = await _control_api(
                session,
                "POST",
                f"{base}/_sim/keys",
                {
                    "partner": "makers",
                    "name": f"{maker.name}-v1",
                    "environment": environment,
                    "scopes": ["quotes:read", "trades:read", "trades:write"],
                    "tier": "unlimited",
                },
            )
            out.setdefault(maker.name, {})[environment] = str(created["key"])
    return out


async def run_fleet(args: argparse.Namespace) -> int:
    """Run the fleet described by parsed arguments until SIGINT/SIGTERM (or --duration)."""
    logging.basicConfig(
        level=str(args.log_level).upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    install_redaction()  # no key, claim token or signature in any log line
    try:
        config = load_fleet_config(args.config) if args.config else default_fleet()
        if args.seed is not None:
            config = config.model_copy(update={"seed": args.seed})
        rpc_urls = {int(chain): url for chain, url in _pairs(args.rpc_url, "--rpc-url")}
        keys = _pairs(args.key, "--key")
    except (FleetCliError, ValueError, OSError) as exc:
        print(f"rfqsim makers: {exc}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        async with aiohttp.ClientSession() as session:
            try:
                credentials, rpc_urls = await resolve_setup(
                    session, config, args.url, keys, rpc_urls
                )
                fleet = MakerFleet(
                    config,
                    url=args.url,
                    credentials=credentials,
                    rpc_urls=rpc_urls,
                    session=session,
                    v1_keys=await v1_keys(session, config, args.url),
                )
            except (FleetCliError, aiohttp.ClientError, ValueError, KeyError) as exc:
                print(f"rfqsim makers: setup failed: {exc}", file=sys.stderr)
                return 1
            try:
                await fleet.start()
            except (MakerClientError, TimeoutError, OSError, aiohttp.ClientError) as exc:
                print(f"rfqsim makers: could not start the fleet: {exc!r}", file=sys.stderr)
                return 1
            try:
                for status in fleet.status():
                    state = "online" if status["online"] else "offline"
                    print(
                        f"maker {status['name']:<10} {status['wallet']}  {status['behaviour']:<13}"
                        f" chains {status['chains']}  {state}",
                        flush=True,
                    )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(args.duration):
                        await stop.wait()
            finally:
                await fleet.close()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return 0


def run_fleet_cli(argv: Sequence[str] | None = None) -> int:
    """`rfqsim makers run …` with `argv` the arguments after `makers run`; the exit code."""
    args = build_parser().parse_args(argv)
    return asyncio.run(run_fleet(args))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_fleet_cli())
