"""`python -m provider_sandbox serve`: the sandbox on its own, next to a simulator started
elsewhere (`rfqsim serve --provider-url ...`). It learns the chains either from the simulator's
ready file or from --rpc/--token pairs, keeps its own clock (POST /sandbox/clock/advance), and
writes its own ready file once it listens."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
from pathlib import Path
from typing import Any

from provider_sandbox.config import NETWORK_NAMES, SandboxChain, SandboxConfig
from provider_sandbox.runtime import RunningSandbox, start_sandbox
from rfqkit.redaction import install_redaction


def _pairs(values: list[str], flag: str) -> dict[int, str]:
    pairs: dict[int, str] = {}
    for value in values:
        chain, sep, rest = value.partition("=")
        if not sep or not chain.isdigit() or not rest:
            raise SystemExit(f"provider_sandbox: {flag} takes CHAIN=VALUE, got {value!r}")
        pairs[int(chain)] = rest
    return pairs


def chains_from_ready_file(path: Path, token_symbol: str) -> tuple[SandboxChain, ...]:
    info: dict[str, Any] = json.loads(path.read_text())
    chains = []
    for chain in info["chains"]:
        token = next((t for t in chain["tokens"] if t["symbol"] == token_symbol), None)
        if token is None:
            continue  # a chain without the corridor's token cannot settle ramp transfers
        chains.append(
            SandboxChain(
                chain_id=int(chain["chain_id"]),
                rpc_url=chain["rpc_url"],
                network=chain.get("name") or NETWORK_NAMES.get(int(chain["chain_id"]), ""),
                token_address=token["address"],
                token_decimals=int(token["decimals"]),
            )
        )
    return tuple(chains)


def chains_from_args(rpcs: list[str], tokens: list[str]) -> tuple[SandboxChain, ...]:
    rpc_urls, token_addresses = _pairs(rpcs, "--rpc"), _pairs(tokens, "--token")
    if set(rpc_urls) != set(token_addresses):
        raise SystemExit("provider_sandbox: give --rpc and --token for the same chains")
    return tuple(
        SandboxChain(
            chain_id=chain_id,
            rpc_url=rpc_urls[chain_id],
            network=NETWORK_NAMES.get(chain_id, f"chain-{chain_id}"),
            token_address=token_addresses[chain_id],
        )
        for chain_id in sorted(rpc_urls)
    )


def ready_info(running: RunningSandbox) -> dict[str, Any]:
    config = running.sandbox.config
    return {
        "provider_sandbox": config.provider_id,
        "url": running.url,
        "api_url": f"{running.url}/api/v1",
        "controls_url": f"{running.url}/sandbox",
        "api_key": config.api_key,
        "webhook_url": running.sandbox.webhooks.url,
        "pid": os.getpid(),
        "seed": config.seed,
        "chains": [
            {
                "chain_id": c.chain_id,
                "rpc_url": c.rpc_url,
                "network": c.network,
                "token": c.token_address,
            }
            for c in config.chains
        ],
    }


def write_ready_file(path: Path, info: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    os.replace(tmp, path)  # atomic: a watcher never reads half a file


async def serve(config: SandboxConfig, ready_file: Path | None) -> int:
    running = await start_sandbox(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        info = ready_info(running)
        print(f"provider sandbox ready at {running.url} (API key {config.api_key})", flush=True)
        if ready_file is not None:
            await asyncio.to_thread(write_ready_file, ready_file, info)
        await stop.wait()
        return 0
    finally:
        await running.stop()
        if ready_file is not None:
            await asyncio.to_thread(ready_file.unlink, missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m provider_sandbox", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    cmd = commands.add_parser("serve", help="run the provider sandbox on its own port")
    cmd.add_argument("--host", default="127.0.0.1")
    cmd.add_argument("--port", type=int, default=0, help="0 = a free port")
    cmd.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer this Host name (repeatable); loopback names and IP addresses always",
    )
    cmd.add_argument("--ready-file", help="write URL, key and chains as JSON here when ready")
    cmd.add_argument("--from-ready-file", help="the simulator's ready file (chains and NGNS)")
    cmd.add_argument("--rpc", action="append", default=[], help="CHAIN=RPC_URL (repeatable)")
    cmd.add_argument("--token", action="append", default=[], help="CHAIN=NGNS_ADDRESS")
    cmd.add_argument("--webhook-url", help="where status webhooks go")
    cmd.add_argument("--webhook-secret", default=SandboxConfig.webhook_secret)
    cmd.add_argument("--api-key", default=SandboxConfig.api_key)
    cmd.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    install_redaction()  # no key, claim token or signature in any log line
    if args.from_ready_file:
        chains = chains_from_ready_file(Path(args.from_ready_file), SandboxConfig.token)
    else:
        chains = chains_from_args(args.rpc, args.token)
    if not chains:
        raise SystemExit("provider_sandbox: no chains (give --from-ready-file or --rpc/--token)")
    config = SandboxConfig(
        chains=chains,
        host=args.host,
        port=args.port,
        allowed_hosts=tuple(args.allowed_host),
        api_key=args.api_key,
        webhook_url=args.webhook_url,
        webhook_secret=args.webhook_secret,
        seed=args.seed,
    )
    return asyncio.run(serve(config, Path(args.ready_file) if args.ready_file else None))
