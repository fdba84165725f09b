"""What `rfqsim serve` prints when it is ready (the banner) and writes to `--ready-file`: the
same facts (services/sim/info.py), for a person and for a program."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator.services.access.keys import SPENDABLE_QA_KEYS, ApiKey, KeyService


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
    ]
    if control_api:
        lines.append(f"  console         {info['console_url']}   (the venue live in a browser)")
    lines += [
        f"  rates feed      {api}/tickers   (OpenAPI: {api}/feed/openapi.json)",
    ]
    instances = info.get("instances") or []
    if len(instances) > 1:
        pids = ", ".join(str(i["pid"]) for i in instances)
        lines.append(
            f"  instances       {len(instances)} processes on this address (pids {pids}; "
            "each answer names its own in X-Rfqsim-Instance; docs/scaling.md)"
        )
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
    if info.get("maker_keys"):
        lines.append("  QA maker credential (for a conformance suite; no simulated maker uses it)")
        for key in info["maker_keys"]:
            lines.append(f"      {key['label']:<18}{key['key']}")
            lines.append(f"      {'':<18}scopes {' '.join(key['scopes'])}  wallet {key['wallet']}")
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


def key_records(
    service: KeyService, created: Iterable[tuple[str, ApiKey, str]]
) -> list[dict[str, Any]]:
    """The banner's and the ready file's record of each key made at start-up, with the full
    key, the name of its partner and, for a maker credential, its wallet."""
    return [
        {
            "label": label,
            "key": full,
            "key_id": key.key_id,
            "environment": key.environment,
            "scopes": sorted(key.scopes),
            "partner": service.partners[key.partner_id].name,
            **({"wallet": key.maker_wallet} if key.maker_wallet else {}),
        }
        for label, key, full in created
    ]


def operator_inputs(info: dict[str, Any]) -> dict[str, Any]:
    """What the ready file holds without the control API: only what the operator of a real
    deployment hands a QA team (the API URL, each chain's RPC URL and environment, API keys
    with their scopes and partner, funded taker wallets, a maker credential of the test
    environment); the venue's facts (tokens, contracts, corridors) must be discovered from the
    public API, as against any other deployment. The keys are the demo keys, then the QA keys
    (``qa_keys``: exact scopes, a second partner, an aggregator, a key whose rate-limit window
    the suite may spend) that the banner leaves out: an integrator starts from the demo keys, a
    QA team needs them all."""
    return {
        "api_url": info["api_url"],
        "control_api": False,
        "chains": [
            {"chain_id": c["chain_id"], "environment": c["environment"], "rpc_url": c["rpc_url"]}
            for c in info["chains"]
        ],
        "api_keys": [
            {
                "key": k["key"],
                "environment": k["environment"],
                "scopes": k["scopes"],
                "partner": k["partner"],
                **({"spendable": True} if k["label"] in SPENDABLE_QA_KEYS else {}),
            }
            for k in [*info.get("demo_keys", []), *info.get("qa_keys", [])]
        ],
        "taker_wallets": [w["private_key"] for w in info["demo_wallets"]],
        "maker_keys": [
            {"key": k["key"], "environment": k["environment"], "scopes": k["scopes"]}
            for k in info.get("maker_keys", [])
        ],
    }


def write_ready_file(path: Path, info: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n")
    os.replace(tmp, path)  # atomic: a watcher never reads half a file
