"""`rfqsim trigger EVENT`: run the real flow that makes a running simulator send EVENT to the
webhook endpoints of a key's partner, like `stripe trigger`. Nothing is faked: a firm quote from
the simulated makers, then the taker's approval and swap on the chain, the quote made to lapse,
or a reported transaction that never lands.

    rfqsim trigger rfq.filled      --api-key KEY [--url http://127.0.0.1:8080]
    rfqsim trigger rfq.expired     --api-key KEY
    rfqsim trigger rfq.failed      --api-key KEY
    rfqsim trigger rfq.filled.late --api-key KEY    # rfq.expired, then the late fill

The key (scope trades:write; a demo key from the banner will do) picks the chain: a live key the
first live chain, a test key the first test chain. The taker is the first demo wallet unless
--taker-key names another funded one. Time moves for the trigger's own RFQ only, through the
per-object controls `/_sim/rfqs/{id}/expire` and `/give-up`: the simulator's clock, its chains
and every other RFQ (your live quotes) stay as they were. An expired or failed RFQ then gives
back its outstanding slot (`/_sim/rfqs/{id}/release`), so triggers never use up the key's cap.
Pair it with `rfqsim webhooks listen --api-key KEY` in another shell to see the deliveries."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from rfqkit.json_rpc import RpcError, rpc

DEFAULT_URL = "http://127.0.0.1:8080"
EVENTS = ("rfq.filled", "rfq.expired", "rfq.failed", "rfq.filled.late")
WAIT_S = 60.0  # for a status to be reached (the fill index polls every 50 ms)
SELL = ("USDC", 10)  # sell 10 USDC for USDT: a plain ERC-20 approval, any corridor would do
BUY = "USDT"


class TriggerError(RuntimeError):
    """One line saying what went wrong and what to do."""


def add_parser(commands: Any) -> None:
    trigger = commands.add_parser(
        "trigger",
        help="run the real flow that sends a webhook event (rfq.filled, ...)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    trigger.add_argument("event", choices=EVENTS, help="the event to produce")
    trigger.add_argument(
        "--api-key", required=True, help="a key with trades:write; its partner's endpoints get it"
    )
    trigger.add_argument(
        "--url", default=DEFAULT_URL, help=f"simulator API (default {DEFAULT_URL})"
    )
    trigger.add_argument(
        "--taker-key", help="private key of a funded taker wallet (default: the first demo wallet)"
    )
    trigger.add_argument("--json", action="store_true", help="print the final RFQ record as JSON")


class TriggerApi:
    def __init__(self, url: str, api_key: str) -> None:
        self.url = url.rstrip("/")
        self.auth = {"Authorization": f"Bearer {api_key}"}

    def call(self, method: str, path: str, body: Any = None, *, keyed: bool = True) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(self.auth) if keyed else {}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=90) as response:
                return json.loads(response.read())["data"]
        except urllib.error.HTTPError as exc:
            error = json.loads(exc.read() or b"{}").get("error", {})
            raise TriggerError(
                f"{method} {path} answered {exc.code} {error.get('code')}: {error.get('message')} "
                f"(request_id {error.get('request_id')})"
            ) from exc
        except urllib.error.URLError as exc:
            raise TriggerError(f"cannot reach the simulator at {self.url}: {exc.reason}") from exc


class ChainClient:
    """The taker's side of the chain: sign locally, send raw, wait for the receipt."""

    def __init__(self, rpc_url: str, chain_id: int, private_key: str) -> None:
        from eth_account import Account  # imported late: `rfqsim trigger --help` stays fast

        self.rpc_url = rpc_url
        self.chain_id = chain_id
        self.account = Account.from_key(private_key)

    def rpc(self, method: str, params: list[Any]) -> Any:
        try:
            return rpc(self.rpc_url, method, params, timeout=30)
        except RpcError as failed:
            if not failed.reachable:
                raise TriggerError(f"chain RPC {failed.message}") from failed
            raise TriggerError(f"chain RPC {method}: {failed.message}") from failed

    def call_uint(self, to: str, data: str) -> int:
        return int(self.rpc("eth_call", [{"to": to, "data": data}, "latest"]), 16)

    def allowance(self, token: str, spender: str) -> int:
        owner = self.account.address[2:].lower().rjust(64, "0")
        return self.call_uint(token, "0xdd62ed3e" + owner + spender[2:].lower().rjust(64, "0"))

    def send(self, to: str, data: str) -> str:
        """Sign and send one transaction; waits for a successful receipt; its hash."""
        address = self.account.address
        tx = {"from": address, "to": to, "data": data, "value": "0x0"}
        try:
            gas = int(self.rpc("eth_estimateGas", [tx]), 16) * 13 // 10 + 20_000
        except TriggerError as exc:
            raise TriggerError(f"the transaction to {to} would revert ({exc})") from exc
        signed = self.account.sign_transaction(
            {
                "chainId": self.chain_id,
                "nonce": int(self.rpc("eth_getTransactionCount", [address, "pending"]), 16),
                "to": to,
                "value": 0,
                "data": data,
                "gas": gas,
                "gasPrice": int(self.rpc("eth_gasPrice", []), 16),
            }
        )
        raw = "0x" + bytes(signed.raw_transaction).hex()
        tx_hash = str(self.rpc("eth_sendRawTransaction", [raw]))
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            receipt = self.rpc("eth_getTransactionReceipt", [tx_hash])
            if receipt:
                if int(receipt["status"], 16) != 1:
                    raise TriggerError(f"transaction {tx_hash} reverted")
                return tx_hash
            time.sleep(0.1)
        raise TriggerError(f"transaction {tx_hash} was not mined within {WAIT_S:.0f} s")


class TriggerFlow:
    def __init__(self, args: argparse.Namespace, say: Callable[[str], None]) -> None:
        self.api = TriggerApi(args.url, args.api_key)
        self.say = say
        key = str(args.api_key)
        if not key.startswith(("tx_live_", "tx_test_")):
            raise TriggerError("--api-key is not an API key (tx_live_... or tx_test_...)")
        environment = "live" if key.startswith("tx_live_") else "test"
        info = self.api.call("GET", "/_sim/info", keyed=False)
        chains = [c for c in info["chains"] if c["environment"] == environment]
        if not chains:
            raise TriggerError(f"the simulator has no {environment} chain for this key")
        self.chain = chains[0]
        taker_key = args.taker_key or info["demo_wallets"][0]["private_key"]
        self.node = ChainClient(self.chain["rpc_url"], int(self.chain["chain_id"]), taker_key)
        self.tokens = {t["symbol"]: t for t in self.chain["tokens"]}

    def quote(self) -> dict[str, Any]:
        symbol, whole = SELL
        token = self.tokens[symbol]
        body = {
            "chainId": self.chain["chain_id"],
            "sellToken": token["address"],
            "buyToken": self.tokens[BUY]["address"],
            "sellAmount": str(whole * 10 ** int(token["decimals"])),
            "taker": self.node.account.address,
        }
        data: dict[str, Any] = self.api.call("POST", "/v2/rfq/request", body)
        if data.get("status") != "quoted":
            raise TriggerError(
                f"no firm quote ({data.get('reason')}): are the simulated makers online and "
                "normal? GET /_sim/makers"
            )
        self.say(f"firm quote {data['rfqId']} on chain {self.chain['chain_id']}")
        return data

    def execute(self, quote: dict[str, Any]) -> str:
        approval, swap = quote["transactions"]["approval"], quote["transactions"]["swap"]
        needed = int(quote["quote"]["takerPays"])
        have = self.node.allowance(approval["to"], quote["quote"]["reactor"])
        if have < needed:
            self.node.send(approval["to"], approval["data"])
            self.say("approved takerPays to the reactor")
        tx_hash = self.node.send(swap["to"], swap["data"])
        self.say(f"swap mined: {tx_hash}")
        return tx_hash

    def control(self, rfq_id: str, action: str) -> dict[str, Any]:
        """One of the RFQ's own time controls (/_sim/rfqs/{id}/...); the record after it."""
        record: dict[str, Any] = self.api.call("POST", f"/_sim/rfqs/{rfq_id}/{action}", keyed=False)
        return record

    def wait(self, rfq_id: str, status: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        record: dict[str, Any] = {}
        while time.monotonic() < deadline:
            record = self.api.call("GET", f"/v2/rfq/{rfq_id}")
            if record.get("status") == status:
                return record
            time.sleep(0.25)  # the fill index polls every 50 ms; each read counts against the key
        raise TriggerError(f"{rfq_id} did not become {status} (last: {record.get('status')})")

    def run(self, event: str) -> dict[str, Any]:
        quote = self.quote()
        rfq_id = str(quote["rfqId"])
        if event == "rfq.filled":
            self.execute(quote)
            return self.wait(rfq_id, "filled")
        if event == "rfq.expired":
            self.control(rfq_id, "expire")
            self.say(f"{rfq_id} lapsed now (POST /_sim/rfqs/{rfq_id}/expire)")
            return self.control(rfq_id, "release")
        if event == "rfq.failed":
            never_lands = "0x" + secrets.token_hex(32)
            self.api.call("POST", f"/v2/rfq/{rfq_id}/submit", {"txHash": never_lands})
            self.say(f"reported {never_lands}, which never lands")
            self.control(rfq_id, "give-up")
            self.say(f"settlement gave up waiting (POST /_sim/rfqs/{rfq_id}/give-up)")
            return self.control(rfq_id, "release")
        # rfq.filled.late: the quote lapses (rfq.expired), then the swap lands before the
        # orders' on-chain deadline: rfq.filled with late true, supersedes rfq.expired.
        self.control(rfq_id, "expire")
        self.say(f"{rfq_id} lapsed now (POST /_sim/rfqs/{rfq_id}/expire)")
        self.execute(quote)
        return self.wait(rfq_id, "filled")


def run(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        print(f"  {line}", file=sys.stderr, flush=True)

    try:
        record = TriggerFlow(args, say).run(args.event)
    except TriggerError as exc:
        print(f"rfqsim trigger: {exc}", file=sys.stderr)
        return 1
    sent = "rfq.filled" if args.event == "rfq.filled.late" else args.event
    rfq_id = str(record["rfqId"])
    if args.json:
        print(json.dumps(record, indent=2))
        return 0
    late = " (late: true, supersedes rfq.expired)" if args.event == "rfq.filled.late" else ""
    try:
        endpoints = _endpoints_sent_to(TriggerApi(args.url, args.api_key), f"{sent}:{rfq_id}")
    except TriggerError:
        endpoints = None  # a target without the delivery log: say less
    if endpoints is None:
        print(f"{sent} {rfq_id}{late}")
    elif endpoints:
        print(f"{sent} {rfq_id}{late}: delivered to {endpoints} endpoint(s) of the key's partner")
    else:
        print(
            f"{sent} {rfq_id}{late}: the key's partner has no endpoint subscribed to {sent}; "
            f"register one, e.g. `rfqsim webhooks listen --api-key KEY`"
        )
    return 0


def _endpoints_sent_to(api: TriggerApi, event_id: str) -> int:
    """How many endpoints the event went to (the simulator's delivery log)."""
    data = api.call("GET", f"/_sim/webhooks/deliveries?event_id={event_id}", keyed=False)
    return len({d["endpoint_id"] for d in data["deliveries"]})
