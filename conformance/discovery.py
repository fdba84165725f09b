"""The venue's facts found out from public surfaces, for a target without ``/_sim/info``.

* tokens and corridors: ``GET /v2/rfq/levels?chainId=`` lists every RFQ pair of the chain in both
  directions with the tokens' decimals; each token's ``symbol()`` and ``decimals()`` are then
  read on chain (the ladder's decimals must agree);
* the settlement reactor (and its fee recipient and signature-transfer contract, when the
  contract exposes ``feeRecipient()`` and ``signatureTransfer()``): from one firm quote
  requested with a given trades key for a given taker wallet, cancelled at once
  (``quote.reactor``);
* the environment of a chain: the config's, else the spec's (56 live, 97 test); the minimum
  size follows from it (1 whole token live, 0.01 on the test chain).

Contracts only the simulator deploys (the sample router, the smart-wallet factory) cannot be
discovered: tests that need them need the simulator (or say which input they lack).

The result has the shape of a chain in ``/_sim/info`` (``chain_id``, ``environment``,
``rpc_url``, ``min_size``, ``contracts``, ``tokens``, ``corridors``), so everything that reads
the simulator's info reads a discovered venue the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address

from conformance.chain import Chain, Wallet, calldata
from conformance.client import Client
from conformance.inputs import GivenKey, Inputs
from conformance.json_rpc import RpcError
from conformance.response_checks import assert_data

MIN_SIZE = {"live": "1", "test": "0.01"}


def _read(chain: Chain, address: str, signature: str, kind: str) -> Any:
    try:
        out = chain.call(address, calldata(signature, [], []))
        return abi_decode([kind], out)[0] if out else None
    except (RpcError, ValueError, OverflowError):
        return None


def token_on_chain(chain: Chain, address: str, ladder_decimals: int) -> dict[str, Any]:
    symbol = _read(chain, address, "symbol()", "string")
    decimals = _read(chain, address, "decimals()", "uint8")
    return {
        "symbol": str(symbol) if symbol else address,
        "address": to_checksum_address(address),
        "decimals": int(decimals) if decimals is not None else ladder_decimals,
        "usdt_like": False,  # unknown; approve_for_quote resets any nonzero allowance anyway
    }


def discover_chain(client: Client, chain_id: int, rpc_url: str, environment: str) -> dict[str, Any]:
    """Tokens and RFQ corridors of one chain from its ladder and the token contracts."""
    data = assert_data(client.get("/v2/rfq/levels", params={"chainId": chain_id}))
    node = Chain(rpc_url, chain_id)
    decimals: dict[str, int] = {}
    corridors: list[dict[str, str]] = []
    seen: set[frozenset[str]] = set()
    for pair in data.get("pairs") or []:
        sell, buy = to_checksum_address(pair["sellToken"]), to_checksum_address(pair["buyToken"])
        decimals.setdefault(sell, int(pair["sellDecimals"]))
        decimals.setdefault(buy, int(pair["buyDecimals"]))
        if frozenset((sell, buy)) not in seen:
            seen.add(frozenset((sell, buy)))
            corridors.append({"base": sell, "quote": buy, "mode": "RFQ"})
    return {
        "chain_id": chain_id,
        "environment": environment,
        "rpc_url": rpc_url,
        "min_size": MIN_SIZE.get(environment, "1"),
        "contracts": {},
        "tokens": [token_on_chain(node, a, d) for a, d in decimals.items()],
        "corridors": corridors,
    }


def discover_reactor(
    client: Client, chain: Mapping[str, Any], key: GivenKey, taker: Wallet
) -> dict[str, str]:
    """``reactor`` (and ``fee_recipient``) from one firm quote, cancelled at once; {} when no
    pair of the chain quotes for the taker's funds."""
    node = Chain(str(chain["rpc_url"]), int(chain["chain_id"]))
    keyed = client.with_headers(key.headers).paced()  # a shared key may be at its cap
    decimals = {t["address"]: int(t["decimals"]) for t in chain["tokens"]}
    size = Decimal(str(chain["min_size"])) * 2
    for corridor in chain["corridors"]:
        for sell, buy in (
            (corridor["base"], corridor["quote"]),
            (corridor["quote"], corridor["base"]),
        ):
            amount = int(size * 10 ** decimals[sell])
            if node.balance_of(sell, taker.address) < amount:
                continue
            body = {
                "chainId": chain["chain_id"],
                "sellToken": sell,
                "buyToken": buy,
                "sellAmount": str(amount),
                "taker": taker.address,
            }
            resp = keyed.post("/v2/rfq/request", json=body, timeout=75)
            data = (
                resp.body.get("data")
                if resp.status == 200 and isinstance(resp.body, dict)
                else None
            )
            if not isinstance(data, dict) or data.get("status") != "quoted":
                continue
            keyed.post(
                f"/v2/rfq/{data['rfqId']}/cancel", headers={"X-Rfq-Claim": data["claimToken"]}
            )
            reactor = to_checksum_address(data["quote"]["reactor"])
            found: dict[str, str] = {"reactor": reactor}
            recipient = _read(node, reactor, "feeRecipient()", "address")
            if recipient:
                found["fee_recipient"] = to_checksum_address(recipient)
            permit = _read(node, reactor, "signatureTransfer()", "address")
            if permit:  # the contract makers approve and sign their orders for
                found["signature_transfer"] = to_checksum_address(permit)
            return found
    return {}


def discover_chains(
    client: Client, inputs: Inputs, rpc_urls: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Every chain with an RPC URL, with the reactor when a trades key of the chain's
    environment and a taker wallet were given."""
    chains = []
    for chain_id, url in sorted(rpc_urls.items()):
        environment = inputs.environment(chain_id) or "live"
        chain = discover_chain(client, chain_id, url, environment)
        key = inputs.key({"trades:write"}, environment)
        if key is not None and inputs.taker_wallets:
            chain["contracts"] = discover_reactor(client, chain, key, inputs.taker_wallets[0])
        chains.append(chain)
    return chains
