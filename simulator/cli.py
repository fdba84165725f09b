"""`rfqsim serve`: starts the chains, deploys the venue and serves the API (the other commands of
the `rfqsim` command line are in the rfqsim package)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from rfqkit.anvil import AnvilStartError
from simulator.api.http.appkeys import ACCESS, RAMP, SETTINGS, VENUE
from simulator.api.http.server import ApiRunner
from simulator.runtime.app import create_app
from simulator.runtime.chains import ChainStartupError
from simulator.runtime.lifecycle import SHUTDOWN
from simulator.runtime.makers import start_fleet, stop_fleet
from simulator.runtime.ports import taken_port_messages
from simulator.runtime.provider import connect_provider_webhooks
from simulator.services.access.keys import create_demo_keys
from simulator.services.sim.info import simulator_info
from simulator.settings import Settings, load_settings

log = logging.getLogger("rfqsim")
EXIT_PORT_TAKEN = 3


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
    if args.no_control_api:
        overrides["api"]["control_api"] = False
    if args.allow_http_webhooks:
        overrides["webhooks"] = {"allow_http": True}
    if args.on_chain_exit is not None:
        overrides["on_chain_exit"] = args.on_chain_exit.replace("-", "_")
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


def _whole(units: int) -> str:
    return f"{units:,}"


def banner(info: dict[str, Any], *, control_api: bool = True) -> str:
    """What a person needs to start: every URL (each answers), the chains with their fixed RPC
    ports, the contracts once when every chain has the same addresses, the demo keys with their
    scopes, the funded wallets with their keys and balances, and how to stop."""
    api = info["api_url"]
    control = (
        f"{api}/_sim/   (index of every control; OpenAPI: {api}/_sim/openapi.json)"
        if control_api
        else "none (--no-control-api: /_sim answers 404, as on a real deployment)"
    )
    lines = [
        f"rfqsim {info['version']} ready  (environment {info['environment']}, seed {info['seed']})",
        f"  API             {api}   (OpenAPI: {api}/v2/openapi.json, {api}/v1/openapi.json)",
        f"  control API     {control}",
        f"  rates feed      {api}/tickers   (OpenAPI: {api}/feed/openapi.json)",
    ]
    if info.get("provider_url") and control_api:
        lines.append(
            f"  ramp provider   {info['provider_url']}/sandbox/state   (drive it: /_sim/ramp/...)"
        )
    chains = info["chains"]
    for chain in chains:
        lines.append(
            f"  chain {chain['chain_id']:<5}     {chain['rpc_url']}  ({chain['name']}, "
            f"{chain['environment']}, "
            f"{'Anvil started by rfqsim' if chain['managed'] else 'attached node'})"
        )
    blocks = [(c["contracts"], [(t["symbol"], t["address"]) for t in c["tokens"]]) for c in chains]
    shared = bool(blocks) and all(block == blocks[0] for block in blocks)
    for index, chain in enumerate(chains):
        if shared and index > 0:
            break
        title = "every chain" if shared else f"chain {chain['chain_id']}"
        lines.append(f"  contracts and tokens ({title}, same addresses every run)")
        for role, address in chain["contracts"].items():
            lines.append(f"      {role:<20}{address}")
        for token in chain["tokens"]:
            lines.append(f"      {token['symbol']:<20}{token['address']}  ({token['decimals']} dp)")
    lines.append(
        "  demo API keys (partner demo; the same every run with this seed; "
        "Authorization: Bearer KEY)"
    )
    for key in info.get("demo_keys", []):
        lines.append(f"      {key['label']:<18}{key['key']}")
        lines.append(f"      {'':<18}scopes {' '.join(key['scopes'])}")
    funding = info.get("funding", {})
    balance = (
        f"each holds {_whole(funding['native'])} native coin and "
        f"{_whole(funding['token_whole_units'])} of every token on every chain"
        if funding
        else "funded on every chain"
    )
    lines.append(f"  demo wallets ({balance}; test keys: never use them on a real network)")
    for wallet in info["demo_wallets"]:
        lines.append(f"      {wallet['address']}  {wallet['private_key']}")
    lines.append("  Stop with Ctrl-C (or SIGTERM): every Anvil rfqsim started stops with it.")
    return "\n".join(lines)


def operator_inputs(info: dict[str, Any]) -> dict[str, Any]:
    """What the ready file holds without the control API: only what the operator of a real
    deployment hands a QA team (the API URL, each chain's RPC URL and environment, API keys
    with their scopes, funded taker wallets); the venue's facts (tokens, contracts, corridors)
    must be discovered from the public API, as against any other deployment."""
    return {
        "api_url": info["api_url"],
        "control_api": False,
        "chains": [
            {"chain_id": c["chain_id"], "environment": c["environment"], "rpc_url": c["rpc_url"]}
            for c in info["chains"]
        ],
        "api_keys": [
            {"key": k["key"], "environment": k["environment"], "scopes": k["scopes"]}
            for k in info.get("demo_keys", [])
        ],
        "taker_wallets": [w["private_key"] for w in info["demo_wallets"]],
    }


def write_ready_file(path: Path, info: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    os.replace(tmp, path)  # atomic: a watcher never reads half a file


class StopWatchdog:
    """Bounds the stop: once a stop begins, the process is gone within `deadline_s` whatever
    wedges (a second SIGTERM/SIGINT ends it at once). A thread, not a loop timer, so it fires
    even when the event loop itself is blocked. `os._exit` skips the interpreter's exit join on
    stray threads; the Anvil children die with us (PR_SET_PDEATHSIG)."""

    def __init__(self, deadline_s: float, ready_file: Path | None) -> None:
        self.deadline_s = deadline_s
        self.ready_file = ready_file
        self._timer: threading.Timer | None = None

    def arm(self) -> None:
        """Idempotent: the deadline counts from the first call."""
        if self._timer is None:
            self._timer = threading.Timer(self.deadline_s, self.exit_now, args=("deadline",))
            self._timer.daemon = True
            self._timer.start()

    def on_signal(self) -> None:
        if self._timer is not None:
            self.exit_now("second signal")
        self.arm()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def exit_now(self, why: str) -> None:
        log.error("stop did not finish (%s, deadline %.1fs); exiting now", why, self.deadline_s)
        if self.ready_file is not None:
            with contextlib.suppress(OSError):
                self.ready_file.unlink(missing_ok=True)
        logging.shutdown()
        sys.stdout.flush()
        os._exit(1)


async def serve(settings: Settings, ready_file: Path | None, access_log: bool) -> int:
    app = create_app(settings)
    runner = ApiRunner(
        app,
        access_log=logging.getLogger("aiohttp.access") if access_log else None,
        shutdown_timeout=settings.api.shutdown_grace_s,
    )
    shutdown = app[SHUTDOWN]  # a signal, or the runtime (a chain died, on_chain_exit: stop)
    watchdog = StopWatchdog(settings.api.stop_deadline_s, ready_file)

    def on_signal() -> None:
        watchdog.on_signal()
        shutdown.requested.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        await runner.setup()  # runs the cleanup contexts' start-up: chains, deployment
        site = web.TCPSite(runner, settings.api.host, settings.api.port)
        await site.start()
        host, port = runner.addresses[0][:2]
        await start_fleet(app, f"http://{host}:{port}")  # makers connect over the real socket
        connect_provider_webhooks(app, f"http://{host}:{port}")  # the sandbox calls us back
        demo_keys = [
            {
                "label": label,
                "key": full,
                "key_id": key.key_id,
                "environment": key.environment,
                "scopes": sorted(key.scopes),
            }
            for label, key, full in create_demo_keys(app[ACCESS].keys, settings.seed)
        ]
        info = simulator_info(app[SETTINGS], app[VENUE], f"http://{host}:{port}")
        info["demo_keys"] = demo_keys  # full keys exist only here: the simulator keeps hashes
        info["provider_url"] = app[RAMP].controls.sandbox_url  # the ramp provider (sandbox)
        control = settings.api.control_api
        print(banner(info, control_api=control), flush=True)
        if ready_file is not None:
            write_ready_file(ready_file, info if control else operator_inputs(info))
        await shutdown.requested.wait()
        return shutdown.exit_code
    finally:
        watchdog.arm()  # also when start-up failed: the stop itself is bounded
        await stop_fleet(app)
        await runner.cleanup()  # stops every Anvil we started
        if ready_file is not None:
            await asyncio.to_thread(ready_file.unlink, missing_ok=True)
        watchdog.disarm()


def _no_thread_left(timeout_s: float = 1.0) -> bool:
    """True when every non-daemon thread but this one has ended (within `timeout_s`); the
    interpreter would otherwise join them on exit, with no limit."""
    deadline = time.monotonic() + timeout_s
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.daemon:
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            log.error("thread %r still running after the stop; exiting without it", thread.name)
            return False
    return True


def add_parser(commands: Any) -> None:
    """`rfqsim serve` and its flags."""
    serve_cmd = commands.add_parser("serve", help="start chains, deploy the venue, serve the API")
    serve_cmd.add_argument("--host", help="bind address (default 127.0.0.1)")
    serve_cmd.add_argument("--port", type=int, help="API port (default 8080; 0 picks a free one)")
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


def run(args: argparse.Namespace) -> int:
    """`rfqsim serve`: runs until SIGINT/SIGTERM; 2 for invalid settings, 3 when a port is taken,
    1 when a node fails. Every failure is one line on stderr."""
    try:
        settings = settings_from_args(args)
    except (ValueError, argparse.ArgumentTypeError) as exc:
        print(f"rfqsim: invalid settings: {exc}", file=sys.stderr)
        return 2
    taken = taken_port_messages(settings)  # before anything starts
    for message in taken:
        print(f"rfqsim: {message}", file=sys.stderr)
    if taken:
        return EXIT_PORT_TAKEN
    try:
        code = asyncio.run(
            serve(settings, Path(args.ready_file) if args.ready_file else None, args.access_log)
        )
    except (AnvilStartError, ChainStartupError) as exc:
        print(f"rfqsim: {exc}", file=sys.stderr)
        code = 1
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        # Taken between the check and the bind (a race the check cannot close).
        print(f"rfqsim: a port is already in use: {exc.strerror}", file=sys.stderr)
        code = EXIT_PORT_TAKEN
    if not _no_thread_left():
        logging.shutdown()
        sys.stdout.flush()
        os._exit(code)
    return code
