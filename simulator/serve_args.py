"""`rfqsim serve`'s flags (`add_parser`) and the settings they make (`settings_from_args`):
the defaults file, `--config`, the environment, then the flags."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from simulator.settings import Settings, load_settings


def _parse_rpc_urls(values: list[str]) -> dict[int, str]:
    urls: dict[int, str] = {}
    for value in values:
        chain, sep, url = value.partition("=")
        if not sep or not chain.isdigit() or not url:
            raise argparse.ArgumentTypeError(f"--rpc-url takes CHAIN=URL, got {value!r}")
        urls[int(chain)] = url
    return urls


def _parse_rpc_ports(values: list[str]) -> tuple[int | None, dict[int, int]]:
    """`--rpc-port PORT` (the first chain's port; the next ones count up; 0: all free) and
    `--rpc-port CHAIN=PORT` (one chain; 0: a free port)."""
    base: int | None = None
    ports: dict[int, int] = {}
    for value in values:
        chain, sep, port = value.rpartition("=")
        if not port.isdigit() or (sep and not chain.isdigit()) or int(port) > 65535:
            raise argparse.ArgumentTypeError(f"--rpc-port takes PORT or CHAIN=PORT, got {value!r}")
        if sep:
            ports[int(chain)] = int(port)
        else:
            base = int(port)
    return base, ports


def settings_from_args(args: argparse.Namespace) -> Settings:
    base = load_settings(Path(args.config) if args.config else None)
    overrides: dict[str, Any] = {"api": {}}
    if args.host is not None:
        overrides["api"]["host"] = args.host
    if args.port is not None:
        overrides["api"]["port"] = args.port
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.environment is not None:
        overrides["environment"] = args.environment
    if args.no_makers:
        overrides["makers"] = None
    if args.makers_process is not None:
        overrides["makers_process"] = args.makers_process
    if args.no_control_api:
        overrides["api"]["control_api"] = False
    if args.allowed_host:
        overrides["api"]["allowed_hosts"] = list(args.allowed_host)
    if args.rpc_cors:
        overrides["rpc_cors"] = True
    if args.allow_http_webhooks:
        overrides["webhooks"] = {"allow_http": True}
    if args.on_chain_exit is not None:
        overrides["on_chain_exit"] = args.on_chain_exit.replace("-", "_")
    if args.state_dir is not None:
        overrides["state"] = {"dir": args.state_dir}
    if args.redis_url is not None:
        overrides["shared"] = {"redis_url": args.redis_url}
    ramp: dict[str, Any] = {}
    if args.provider_port is not None:
        ramp["provider_port"] = args.provider_port
    if args.provider_url is not None:
        ramp["provider_url"] = args.provider_url
    if args.smtp is not None:
        ramp["smtp"] = args.smtp
    if ramp:
        overrides["ramp"] = ramp
    rpc_urls = _parse_rpc_urls(args.rpc_url or [])
    rpc_base, rpc_ports = _parse_rpc_ports(args.rpc_port or [])
    if rpc_base is not None:
        overrides["rpc_port"] = rpc_base
    configured = {c.chain_id for c in base.chains}
    for flag, named in (("--rpc-url", rpc_urls), ("--rpc-port", rpc_ports)):
        unknown = set(named) - configured
        if unknown:
            raise ValueError(f"{flag} names unconfigured chain(s) {sorted(unknown)}")
    if rpc_urls or rpc_ports:
        overrides["chains"] = [
            {
                **c.model_dump(mode="json"),
                "rpc_url": rpc_urls.get(c.chain_id, c.rpc_url),
                "rpc_port": rpc_ports.get(c.chain_id, c.rpc_port),
            }
            for c in base.chains
        ]
    return load_settings(Path(args.config) if args.config else None, overrides)


def _instance_count(text: str) -> int:
    count = int(text)
    if not 1 <= count <= 16:
        raise argparse.ArgumentTypeError("--instances takes 1 to 16")
    return count


def add_parser(commands: Any) -> None:
    """`rfqsim serve` and its flags."""
    serve_cmd = commands.add_parser("serve", help="start chains, deploy the venue, serve the API")
    serve_cmd.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve_cmd.add_argument("--port", type=int, help="API port (default 8080; 0 picks a free one)")
    serve_cmd.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME",
        help="also answer requests for this Host name (repeatable; `.NAME` allows its "
        "subdomains too); loopback names and IP addresses are always answered, any other "
        "name is refused 403 against DNS rebinding (docs/security.md)",
    )
    serve_cmd.add_argument("--seed", type=int, help="seed for ids, prices and latencies")
    serve_cmd.add_argument(
        "--config",
        default=os.environ.get("RFQSIM_CONFIG"),
        help="YAML settings file overlaid on the defaults (or $RFQSIM_CONFIG); RFQSIM_* "
        "variables overlay both (docs/configuration.md)",
    )
    serve_cmd.add_argument("--ready-file", help="write the banner's facts as JSON here when ready")
    serve_cmd.add_argument(
        "--rpc-url", action="append", metavar="CHAIN=URL", help="attach to a running node"
    )
    serve_cmd.add_argument(
        "--rpc-port",
        action="append",
        metavar="[CHAIN=]PORT",
        help="Anvil RPC port: PORT for the first chain (the next ones count up; default 8545, "
        "8546), CHAIN=PORT for one chain; 0 picks free ports",
    )
    serve_cmd.add_argument(
        "--rpc-cors",
        action="store_true",
        help="let web pages of any origin call the Anvil nodes rfqsim starts (for a browser "
        "wallet that talks to the RPC itself); by default they run with --no-cors",
    )
    serve_cmd.add_argument(
        "--environment",
        choices=["staging", "production"],
        help="staging (default) lets ramp calls use the provider sandbox flag "
        "(sandbox: true); production refuses it, as the real service does",
    )
    serve_cmd.add_argument("--access-log", action="store_true", help="log every request")
    serve_cmd.add_argument(
        "--no-control-api",
        action="store_true",
        help="serve no /_sim control API (404, as on a real deployment); the ready file then "
        "holds only what an operator gives a QA team: API URL, chain RPC URLs, keys, wallets",
    )
    serve_cmd.add_argument(
        "--no-makers", action="store_true", help="start without the simulated maker fleet"
    )
    serve_cmd.add_argument(
        "--makers-process",
        choices=["own", "in"],
        help="run the simulated maker fleet in a child process of its own (own) or in the "
        "simulator's process (in); /_sim/makers, reset and snapshots work with either",
    )
    serve_cmd.add_argument(
        "--allow-http-webhooks",
        action="store_true",
        help="developer flag: accept http:// webhook endpoint URLs (the spec requires https)",
    )
    serve_cmd.add_argument(
        "--on-chain-exit",
        choices=["stop", "restart", "keep-serving"],
        help="when a chain node rfqsim started exits: stop (default, exit status 1), restart it "
        "and redeploy, or keep serving without it",
    )
    serve_cmd.add_argument(
        "--state-dir",
        metavar="DIR",
        help="write the whole state (services and chains) here on stop and load it on start, "
        "so a stop and start carries on with the same RFQs, transfers, keys and balances",
    )
    serve_cmd.add_argument(
        "--redis-url",
        metavar="URL",
        help="share state with the other instances on this Redis or Valkey (redis://HOST:PORT, "
        "unix:///PATH); docs/scaling.md says which state is shared so far",
    )
    serve_cmd.add_argument(
        "--instances",
        type=_instance_count,
        default=1,
        metavar="N",
        help="serve the venue from N processes behind the one address (default 1: one "
        "process, no Redis); with more, Redis is started too unless --redis-url names one "
        "(docs/scaling.md)",
    )
    serve_cmd.add_argument(  # set by --instances for the instances it starts
        "--shared-socket", type=int, metavar="FD", help=argparse.SUPPRESS
    )
    serve_cmd.add_argument(
        "--scenario",
        metavar="FILE",
        help="a scenario file (YAML; docs/scenarios.md) started once the simulator is ready",
    )
    serve_cmd.add_argument(
        "--provider-port",
        type=int,
        help="port of the in-process provider sandbox (default 0: a free port)",
    )
    serve_cmd.add_argument(
        "--provider-url",
        help="use a provider sandbox started elsewhere instead of starting one in-process",
    )
    serve_cmd.add_argument(
        "--smtp", metavar="HOST:PORT", help="also send the ramp's emails to this SMTP server"
    )
