"""The venue's facts found out from public surfaces, for a target without ``/_sim/info``.

* tokens and corridors: ``GET /v2/rfq/levels?chainId=`` lists every RFQ pair of the chain in both
  directions with the tokens' decimals; each token's ``symbol()`` and ``decimals()`` are then
  read on chain (the ladder's decimals must agree);
* the settlement reactor (and its fee recipient and signature-transfer contract, when the
  contract exposes ``feeRecipient()`` and ``signatureTransfer()``): from one firm quote for a
  given taker wallet, cancelled at once (``quote.reactor``). It is requested with a given trades
  key of the chain's environment (its scopes declared or probed alike), else keyless with the
  wallet's proof of control, as any integrator may;
* the environment of a chain: the config's, else the spec's (56 live, 97 test); the minimum
  size follows from it (1 whole token live, 0.01 on the test chain);
* contracts the config names (``chains: [{chain_id, contracts: {NAME: ADDRESS}}]``) are taken as
  given and not looked for.

A contract discovery could not find is recorded with the reason (:class:`Undiscovered`) instead
of being left out: a test that reaches for it is skipped naming the missing input
(:class:`conformance.wire.needs.InputProblem`), or fails saying which request of the venue broke
discovery and what it answered (:class:`DiscoveryError`), never with a bare ``KeyError``.

Contracts only the simulator deploys (the sample router, the smart-wallet factory) cannot be
discovered: tests that need them need the simulator (or say which input they lack).

The result has the shape of a chain in ``/_sim/info`` (``chain_id``, ``environment``,
``rpc_url``, ``min_size``, ``contracts``, ``tokens``, ``corridors``) plus ``undiscovered``
(name -> reason), so everything that reads the simulator's info reads a discovered venue the
same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address

from conformance.deployment.service_clock import ServiceClock
from conformance.wire.chain import Chain, calldata
from conformance.wire.client import Client, Response
from conformance.wire.inputs import GivenKey, Inputs
from conformance.wire.needs import InputProblem
from conformance.wire.response_checks import assert_data
from conformance.wire.signing import sign_taker_proof
from rfqkit.json_rpc import RpcError
from rfqkit.wallets import Wallet

MIN_SIZE = {"live": "1", "test": "0.01"}
_DISCOVERED = ("reactor", "fee_recipient", "signature_transfer")
_BODY_LIMIT = 300


class DiscoveryError(AssertionError):
    """The venue's own answer broke discovery: a test that needs the fact fails with this."""


@dataclass(frozen=True)
class Undiscovered:
    """Why a contract is unknown: an input is missing (``need`` names it) or the venue's
    answer broke discovery (``need`` is None and ``detail`` says which request got what)."""

    detail: str
    need: str | None = None

    def error(self, name: str) -> Exception:
        """What a test that reaches for the contract ``name`` gets."""
        if self.need is not None:
            return InputProblem(self.need, f"{name} unknown: {self.detail}")
        return DiscoveryError(f"discovery of the {name} failed: {self.detail}")

    @classmethod
    def of(cls, value: Any) -> Undiscovered:
        if isinstance(value, Undiscovered):
            return value
        return cls(str(value.get("detail", "")), value.get("need"))


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


def _told(resp: Response) -> str:
    """A request and its answer in one line: what a QA engineer needs to see."""
    text = resp.raw[:_BODY_LIMIT].decode("utf-8", "replace")
    return f"{resp.method} {resp.url} answered {resp.status}: {text}"


def discover_reactor(
    client: Client,
    chain: Mapping[str, Any],
    key: GivenKey | None,
    taker: Wallet,
    clock: ServiceClock | None = None,
) -> dict[str, Any]:
    """``reactor`` (and ``fee_recipient``, ``signature_transfer``) from one firm quote, cancelled
    at once: with ``key`` when given, else keyless with the taker's proof of control. Whatever
    could not be found is in ``undiscovered`` with the reason."""
    node = Chain(str(chain["rpc_url"]), int(chain["chain_id"]))
    caller = client.with_headers(key.headers) if key is not None else client
    paced = caller.paced()  # a shared key (or client IP) may be at its cap or its window's end
    clock = clock or ServiceClock(client)
    who = f"the key {key.public}…" if key is not None else "keyless with a proof of control"
    decimals = {t["address"]: int(t["decimals"]) for t in chain["tokens"]}
    size = Decimal(str(chain["min_size"])) * 2
    answers: list[str] = []
    for corridor in chain["corridors"]:
        for sell, buy in (
            (corridor["base"], corridor["quote"]),
            (corridor["quote"], corridor["base"]),
        ):
            amount = int(size * 10 ** decimals[sell])
            if node.balance_of(sell, taker.address) < amount:
                continue
            body: dict[str, Any] = {
                "chainId": chain["chain_id"],
                "sellToken": sell,
                "buyToken": buy,
                "sellAmount": str(amount),
                "taker": taker.address,
            }
            if key is None:
                body["takerProof"] = sign_taker_proof(
                    taker.private_key,
                    taker.address,
                    int(chain["chain_id"]),
                    issued_at_ms=clock.now_ms(),
                )
            try:
                resp = paced.post("/v2/rfq/request", json=body, timeout=75)
            except InputProblem as problem:  # the cap held by another client past our wait
                return _undiscovered(problem.need, f"{who}: {problem.detail}")
            if resp.status == 429:
                return _undiscovered(
                    "key:trades" if key is not None else "loopback",
                    f"{who} is rate limited past the suite's wait: {_told(resp)}",
                )
            data = resp.body.get("data") if isinstance(resp.body, dict) else None
            if resp.status != 200 or not isinstance(data, dict):
                return _broken(f"the firm quote requested with {who}: {_told(resp)}")
            if data.get("status") != "quoted":
                answers.append(f"{sell}->{buy}: {data.get('status')} {data.get('reason') or ''}")
                continue
            return _from_quote(paced, node, data, resp)
    if not answers:
        return _undiscovered(
            "taker_wallet",
            f"the taker wallet {taker.address} holds less than {size} whole tokens of every "
            f"sell token of chain {chain['chain_id']} (discovery asks one firm quote of that size)",
        )
    return _undiscovered(
        "liquidity",
        f"no pair of chain {chain['chain_id']} quoted {size} whole tokens for the taker "
        f"{taker.address} ({'; '.join(answers)})",
    )


def _from_quote(paced: Client, node: Chain, data: dict[str, Any], resp: Response) -> dict[str, Any]:
    quote = data.get("quote")
    reactor = quote.get("reactor") if isinstance(quote, dict) else None
    claim = data.get("claimToken")
    if isinstance(claim, str) and "rfqId" in data:
        paced.post(f"/v2/rfq/{data['rfqId']}/cancel", headers={"X-Rfq-Claim": claim})
    if not isinstance(reactor, str):
        return _broken(f"the firm quote names no quote.reactor: {_told(resp)}")
    try:
        found: dict[str, Any] = {"reactor": to_checksum_address(reactor)}
    except ValueError:
        return _broken(f"quote.reactor is not an address: {_told(resp)}")
    undiscovered: dict[str, dict[str, str | None]] = {}
    for name, signature in (
        ("fee_recipient", "feeRecipient()"),
        ("signature_transfer", "signatureTransfer()"),  # what makers approve and sign orders for
    ):
        address = _read(node, found["reactor"], signature, "address")
        if address:
            found[name] = to_checksum_address(address)
        else:
            undiscovered[name] = asdict(
                Undiscovered(
                    f"the reactor {found['reactor']} exposes no {signature}; name it in the "
                    f"config (chains: [{{chain_id, contracts: {{{name}: ADDRESS}}}}])",
                    "contracts",
                )
            )
    return {"contracts": found, "undiscovered": undiscovered}


def _undiscovered(need: str, detail: str) -> dict[str, Any]:
    reason = asdict(Undiscovered(detail, need))
    return {"contracts": {}, "undiscovered": {name: reason for name in _DISCOVERED}}


def _broken(detail: str) -> dict[str, Any]:
    reason = asdict(Undiscovered(detail))
    return {"contracts": {}, "undiscovered": {name: reason for name in _DISCOVERED}}


def discover_chains(
    client: Client, inputs: Inputs, rpc_urls: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Every chain with an RPC URL, with its contracts: the config's, then the reactor's from a
    firm quote for the first taker wallet (with a trades key of the chain's environment when one
    was given). ``inputs`` must carry the keys' scopes (probed where not declared)."""
    chains = []
    clock = ServiceClock(client)
    for chain_id, url in sorted(rpc_urls.items()):
        environment = inputs.environment(chain_id) or "live"
        chain = discover_chain(client, chain_id, url, environment)
        given = inputs.chains.get(chain_id)
        contracts = dict(given.contracts) if given is not None else {}
        undiscovered: dict[str, Any] = {}
        if "reactor" not in contracts:
            if inputs.taker_wallets:
                key = inputs.key({"trades:write"}, environment)
                found = discover_reactor(client, chain, key, inputs.taker_wallets[0], clock)
            else:
                found = _undiscovered(
                    "taker_wallet",
                    "discovery finds the settlement contracts from one firm quote for a taker "
                    "wallet: --taker-key HEX (an EOA with gas and sell tokens on the chain), or "
                    "name them in the config (chains: [{chain_id, contracts: {reactor: ...}}])",
                )
            contracts = {**found["contracts"], **contracts}
            undiscovered = {k: v for k, v in found["undiscovered"].items() if k not in contracts}
        chain["contracts"] = contracts
        chain["undiscovered"] = undiscovered
        chains.append(chain)
    return chains
