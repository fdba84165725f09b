"""The pre-run check of rfqsim conformance against a deployment it does not control: every input
of the flags and of --config checked in one line each (the target answers, every RPC URL is its
chain, every key authenticates with its scopes, every maker credential is one, every taker
wallet holds gas, the funding wallet holds what the selected areas lend, the local webhook
route); a broken input stops the run before any test."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from conformance.deployment.discovery import discover_chain
from conformance.deployment.run_cost import COIN, KEPT, amounts_text, needed, runs_left
from conformance.wire.areas import AREAS
from conformance.wire.chain import Chain
from conformance.wire.client import Client, is_loopback_url
from conformance.wire.inputs import (
    KEY_FORMAT,
    PROBED_SCOPES,
    GivenKey,
    InputError,
    Inputs,
    KeyRefused,
    merge,
    probe_maker_key,
    probe_scopes,
    read_config,
)
from conformance.wire.public_receiver import CA_FILE, local_state_dir
from rfqkit.json_rpc import RpcError, hex_to_int, rpc


class PreflightError(RuntimeError):
    """One line that tells the QA engineer what to fix."""


def _get_json(url: str, headers: dict[str, str] | None = None, timeout: float = 10) -> Any:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def parse_rpc_urls(values: list[str]) -> dict[int, str]:
    urls: dict[int, str] = {}
    for value in values:
        chain, sep, url = value.partition("=")
        if not sep or not chain.isdigit() or not url:
            raise PreflightError(f"--rpc-url takes CHAIN=URL, got {value!r}")
        urls[int(chain)] = url
    return urls


@dataclass(frozen=True)
class PreflightCheck:
    """One line of the pre-run check: what was checked, and ok or the reason."""

    what: str
    problem: str | None = None
    detail: str = ""

    def line(self, color: bool) -> str:
        if self.problem is None:
            mark = "\033[32mok\033[0m  " if color else "ok  "
            return f"  {mark}  {self.what}" + (f": {self.detail}" if self.detail else "")
        mark = "\033[31mFAIL\033[0m" if color else "FAIL"
        return f"  {mark}  {self.what}: {self.problem}"


def given_inputs(args: argparse.Namespace) -> tuple[Inputs, set[str], set[str]]:
    """Every input of the run, from --config and the flags merged as the suite merges them;
    and which keys and wallets came from the config file (for the lines' labels)."""
    config = read_config(args.config) if args.config else Inputs()
    inputs = merge(
        config,
        keys=args.api_key,
        spendable_keys=args.spendable_key,
        wallets=args.taker_key,
        webhook=args.webhook_public_url,
        rpc_urls=parse_rpc_urls(args.rpc_url),
        maker_keys=args.maker_key,
    )
    return (
        inputs,
        {k.key for k in config.keys + config.maker_keys},
        {w.private_key for w in config.taker_wallets},
    )


def _origin(value: str, from_config: set[str], args: argparse.Namespace) -> str:
    return f"config {args.config}" if value in from_config else "flag"


def check_key(client: Client, key: GivenKey, origin: str) -> PreflightCheck:
    """The key authenticates, and holds what it is declared to (or what it holds, probed)."""
    role = ", spendable: only the limiter's test uses it" if key.spendable else ""
    what = f"key {key.public}… ({origin}{role})"
    if not KEY_FORMAT.match(key.key):
        return PreflightCheck(what, "is not shaped tx_<live|test>_<public prefix>.<secret>")
    try:
        probed = probe_scopes(client, key)
    except KeyRefused:
        return PreflightCheck(what, "is refused (401): unknown, revoked, suspended or malformed")
    except InputError as exc:
        return PreflightCheck(what, str(exc))
    except OSError as exc:
        return PreflightCheck(what, f"the target did not answer the scope probe ({exc})")
    declared = key.scopes
    if declared is None:
        return PreflightCheck(
            what, detail=f"authenticates; scopes probed: {', '.join(sorted(probed))}"
        )
    lacking = sorted((declared & PROBED_SCOPES) - probed)
    if lacking:
        return PreflightCheck(
            what,
            f"is declared with {', '.join(lacking)} but the target answers 403 to it "
            "(fix the declared scopes or the key)",
        )
    return PreflightCheck(
        what, detail=f"authenticates; declared scopes: {', '.join(sorted(declared))}"
    )


def check_maker_key(client: Client, key: GivenKey, origin: str) -> PreflightCheck:
    """The maker credential authenticates, and as a maker credential (403 on a taker path)."""
    what = f"maker credential {key.public}… ({origin})"
    if not KEY_FORMAT.match(key.key):
        return PreflightCheck(what, "is not shaped tx_<live|test>_<public prefix>.<secret>")
    try:
        probe_maker_key(client, key)
    except InputError as exc:
        return PreflightCheck(what, str(exc))
    except OSError as exc:
        return PreflightCheck(what, f"the target did not answer the probe ({exc})")
    return PreflightCheck(what, detail="authenticates; a taker path answers it 403")


def checks(args: argparse.Namespace) -> list[PreflightCheck]:
    """The pre-run checks, in order: the target answers, every RPC URL is the chain it claims,
    every key (flags and config) authenticates with its scopes, every maker credential as one,
    every taker wallet is a key
    and holds gas on the test chains, and the funding wallet (the last) holds what the selected
    areas lend. Stops after the target when it does not answer."""
    base = args.base_url.rstrip("/")
    try:
        health = _get_json(f"{base}/v2/health")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return [PreflightCheck(f"target {base}", f"is unreachable ({reason}); check --base-url")]
    if not isinstance(health, dict) or "data" not in health:
        return [PreflightCheck(f"target {base}", "GET /v2/health did not answer with a data body")]
    done = [PreflightCheck(f"target {base}", detail="answers GET /v2/health")]
    try:
        inputs, config_keys, config_wallets = given_inputs(args)
    except (InputError, PreflightError) as exc:
        return [*done, PreflightCheck("inputs", str(exc))]
    rpc_urls = {c: g.rpc_url for c, g in inputs.chains.items() if g.rpc_url}
    for chain_id, url in sorted(rpc_urls.items()):
        what = f"RPC URL {chain_id}={url}"
        try:
            remote = hex_to_int(rpc(url, "eth_chainId", timeout=10))
        except (RpcError, ValueError) as exc:
            done.append(PreflightCheck(what, f"is unreachable ({exc})"))
            continue
        if remote != chain_id:
            done.append(PreflightCheck(what, f"is chain {remote}, not {chain_id}"))
        else:
            done.append(PreflightCheck(what, detail=f"chain {remote}"))
    client = Client(base)
    for key in inputs.keys:
        done.append(check_key(client, key, _origin(key.key, config_keys, args)))
    for key in inputs.maker_keys:
        done.append(check_maker_key(client, key, _origin(key.key, config_keys, args)))
    test_chains = {c: url for c, url in rpc_urls.items() if inputs.environment(c) in ("test", None)}
    for wallet in inputs.taker_wallets:
        what = (
            f"taker wallet {wallet.address} ({_origin(wallet.private_key, config_wallets, args)})"
        )
        poor = []
        for chain_id, url in sorted(test_chains.items()):
            try:
                balance = rpc(url, "eth_getBalance", [wallet.address, "latest"], timeout=10)
                if hex_to_int(balance) == 0:
                    poor.append(chain_id)
            except (RpcError, ValueError):
                continue  # the RPC URL's own line says it is unreachable
        if poor:
            chains = ", ".join(str(c) for c in poor)
            done.append(PreflightCheck(what, f"has no gas on chain {chains}; fund it first"))
        else:
            detail = f"holds gas on chain {', '.join(str(c) for c in sorted(test_chains))}"
            done.append(PreflightCheck(what, detail=detail if test_chains else "a private key"))
    if inputs.taker_wallets and inputs.keys:
        funder = inputs.taker_wallets[-1]
        areas = args.only or list(AREAS)
        for chain_id, url in sorted(test_chains.items()):
            done.append(funds_check(base, inputs.keys[0].key, funder.address, chain_id, url, areas))
    if args.webhook_local is not None:
        done.append(webhook_local_check(base, args.webhook_local, args.webhook_public_url))
    return done


def webhook_local_check(base: str, given: str, public_url: str | None) -> PreflightCheck:
    """``--webhook-local``: a loopback target, and its local webhook CA where it is looked for
    (a simulator writes it when it first needs it; the suite creates it otherwise, and the
    simulator then uses that one)."""
    what = "webhook receiver (--webhook-local)"
    if public_url:
        return PreflightCheck(what, "give --webhook-local or --webhook-public-url, not both")
    if not is_loopback_url(base):
        return PreflightCheck(what, f"needs rfqsim serve on this machine; {base} is not loopback")
    cwd = Path.cwd()
    state_dir = local_state_dir(given or None, cwd)
    found = "its local CA" if (state_dir / CA_FILE).exists() else "no CA yet (the run creates it)"
    shown = state_dir.relative_to(cwd) if state_dir.is_relative_to(cwd) else state_dir
    return PreflightCheck(what, detail=f"https on a free loopback port; {shown}: {found}")


def funds_check(
    base: str, key: str, funder: str, chain_id: int, rpc_url: str, areas: list[str]
) -> PreflightCheck:
    """The funding wallet (the last taker wallet: it funds fresh makers and takers) against
    what the selected areas lend at once (conformance/deployment/run_cost.py): its balances, and
    about how many full runs they still pay for. Too little of a token is a pre-run error. The
    tokens are read from the ladder with `key`, waiting out a 429 (a run right after another
    can find the key's window spent)."""
    what = f"funds of {funder} on chain {chain_id}"
    client = Client(base, headers={"X-API-Key": key}).paced()
    try:
        tokens = discover_chain(client, chain_id, rpc_url, "test")["tokens"]
        node = Chain(rpc_url, chain_id)
        held = {
            str(t["symbol"]): Decimal(node.balance_of(str(t["address"]), funder)).scaleb(
                -int(t["decimals"])
            )
            for t in tokens
        }
        held[COIN] = Decimal(node.native_balance(funder)).scaleb(-18)
    except (AssertionError, OSError, RpcError, ValueError, KeyError) as exc:
        return PreflightCheck(what, detail=f"not read ({_plain(exc)}); the run goes on")
    need = needed(areas).get(chain_id, {})
    short = {s: a for s, a in need.items() if held.get(s, Decimal(0)) < a}
    if short:
        lacking = ", ".join(
            f"{amounts_text({s: held.get(s, Decimal(0))})} (lends up to {amounts_text({s: a})})"
            for s, a in short.items()
        )
        return PreflightCheck(
            what, f"holds {lacking} for the selected areas at once; fund it first"
        )
    detail = f"holds {amounts_text(held)}"
    if need:
        detail += f"; the selected areas lend up to {amounts_text(need)} at once"
        left = runs_left(held, need, KEPT.get(chain_id, {}))
        if left is not None:
            detail += f", and a full run keeps {amounts_text(KEPT[chain_id])}: about {left} runs"
    return PreflightCheck(what, detail=detail)


def _plain(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def preflight(args: argparse.Namespace, out: TextIO | None = None) -> None:
    """Check every given input before any test, one line each; raise PreflightError (one line:
    the first problem) when one is broken."""
    stream = out or sys.stdout
    color = stream.isatty()
    print("rfqsim conformance: checking the inputs", file=stream)
    results = checks(args)
    for check in results:
        print(check.line(color), file=stream, flush=True)
    broken = [c for c in results if c.problem is not None]
    if broken:
        more = f" (and {len(broken) - 1} more above)" if len(broken) > 1 else ""
        raise PreflightError(f"{broken[0].what} {broken[0].problem}{more}")
