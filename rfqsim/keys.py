"""`rfqsim keys create|list|suspend|revoke|activate`: manage a running simulator's API keys
through its control API (/_sim/keys). Only public prefixes are printed, except the full key once
at creation."""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8080"


def add_parser(commands: Any) -> None:
    keys = commands.add_parser("keys", help="manage a running simulator's API keys")
    keys.add_argument("--url", default=DEFAULT_URL, help=f"simulator API (default {DEFAULT_URL})")
    actions = keys.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a key; prints the full key once")
    create.add_argument(
        "--partner", default="demo", help="partner name; created on first use (default demo)"
    )
    create.add_argument("--name", default="", help="a label for the key")
    create.add_argument(
        "--environment",
        choices=["live", "test"],
        required=True,
        help="live keys reach live chains (56), test keys test chains (97)",
    )
    create.add_argument(
        "--scope",
        action="append",
        required=True,
        dest="scopes",
        help="repeatable: trades:write, trades:read, webhooks:manage, "
        "rfq:aggregator, quotes:read, maker:stream",
    )
    create.add_argument(
        "--tier", default="default", help="rate-limit tier: default, high, unlimited"
    )
    create.add_argument("--maker-wallet", help="maker credentials: the maker's funding wallet")
    create.add_argument("--json", action="store_true", help="print the whole record as JSON")
    actions.add_parser("list", help="list keys without secrets")
    for verb in ("suspend", "revoke", "activate"):
        one = actions.add_parser(verb, help=f"{verb} a key by its public prefix")
        one.add_argument("key_id", help="the key's public prefix (tx_live_... before the dot)")


def _call(url: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url.rstrip("/") + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"} if data is not None else {},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["data"]
    except urllib.error.HTTPError as exc:
        error = json.loads(exc.read() or b"{}").get("error", {})
        raise SystemExit(
            f"rfqsim keys: {exc.code} {error.get('code')}: {error.get('message')}"
        ) from exc
    except urllib.error.URLError as exc:
        raise SystemExit(f"rfqsim keys: cannot reach the simulator at {url}: {exc.reason}") from exc


def run(args: argparse.Namespace) -> int:
    if args.action == "create":
        body = {
            "partner": args.partner,
            "name": args.name,
            "environment": args.environment,
            "scopes": args.scopes,
            "tier": args.tier,
            "maker_wallet": args.maker_wallet,
        }
        record = _call(args.url, "POST", "/_sim/keys", body)
        print(json.dumps(record, indent=2) if args.json else record["key"])
        return 0
    if args.action == "list":
        for key in _call(args.url, "GET", "/_sim/keys")["keys"]:
            print(
                f"{key['key_id']}  {key['status']:<9} {key['environment']:<4} "
                f"partner={key['partner']} tier={key['tier']} scopes={','.join(key['scopes'])}"
            )
        return 0
    record = _call(args.url, "POST", f"/_sim/keys/{args.key_id}/{args.action}")
    print(f"{record['key_id']} {record['status']}")
    return 0
