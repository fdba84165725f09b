"""The RFQ API called the way a taker's own script calls it, over public HTTP only: API keys of
fresh partners (through ``/_sim`` where a test needs one), bearer and claim headers, keyed and
keyless clients, taker proofs for an EOA or a smart account signed against the service clock;
then request bodies and the calls themselves (request, preview, record, submit, cancel, a
bounded wait for a status), the integrator's execution of a firm quote (approve takerPays,
broadcast ``transactions.swap``, or swap through a sample router the test deploys), and the public
level ladder.
Helpers that expect a 200 fail the test with the response when they do not get one.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.checks.resource_checks import assert_record_reply_by, assert_record_settled_times
from conformance.deployment.service_clock import Clocked
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.chain import WAIT_TIMEOUT, calldata, hex_bytes, wait_for
from conformance.wire.client import Client, Response, fresh_loopback_address, is_loopback_url
from conformance.wire.response_checks import assert_data
from conformance.wire.signing import (
    proof_json,
    sign_digest_raw,
    sign_taker_proof,
    taker_control_digest,
)
from contracts.artifacts import load_artifact
from rfqkit.wallets import Wallet

# -- keys, callers, proofs ----------------------------------------------------------------


def new_key(
    sim: SimControl,
    environment: str,
    scopes: Iterable[str] = ("trades:write", "trades:read"),
    *,
    partner: str | None = None,
    tier: str = "unlimited",
) -> dict[str, Any]:
    """A fresh API key of a partner of its own (unless named); returns the record with ``key``."""
    name = partner or f"conformance-trading-{secrets.token_hex(6)}"
    return sim.create_key(name, environment, scopes, tier=tier)


def bearer(key: Mapping[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def claim(token: str) -> dict[str, str]:
    return {"X-Rfq-Claim": token}


def keyed_client(http: Client, key: Mapping[str, Any]) -> Client:
    return http.with_headers(bearer(key))


def keyless_client(target: Target, http: Client) -> Client:
    """A keyless client seen by the service as a client IP no other test uses (on loopback)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


def service_now_ms(sim: Clocked | None) -> int:
    """The service clock (tests may have advanced it) in Unix ms: read through ``/_sim`` or a
    :class:`conformance.deployment.service_clock.ServiceClock`; wall time without either."""
    if sim is None:
        return int(time.time() * 1000)
    return sim.now_ms()


def eoa_proof(sim: Clocked | None, wallet: Wallet, chain_id: int) -> dict[str, Any]:
    """A fresh takerProof signed by an externally owned taker."""
    return sign_taker_proof(
        wallet.private_key, wallet.address, chain_id, issued_at_ms=service_now_ms(sim)
    )


def smart_account_proof(
    sim: Clocked | None, owner: Wallet, account: str, chain_id: int
) -> dict[str, Any]:
    """A fresh takerProof for a deployed ERC-1271 smart account owned by ``owner``."""
    nonce = secrets.token_bytes(32)
    issued = service_now_ms(sim)
    digest = taker_control_digest(account, chain_id, nonce, issued)
    return proof_json(nonce, issued, sign_digest_raw(owner.private_key, digest))


# -- the RFQ API --------------------------------------------------------------------------


def rfq_body(
    chain: VenueChain,
    sell: str,
    buy: str,
    *,
    sell_amount: int | None = None,
    buy_amount: int | None = None,
    taker: str | None = None,
    proof: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A request body; ``sell``/``buy`` are token symbols of ``chain``."""
    body: dict[str, Any] = {
        "chainId": chain.chain_id,
        "sellToken": chain.token(sell).address,
        "buyToken": chain.token(buy).address,
    }
    if sell_amount is not None:
        body["sellAmount"] = str(sell_amount)
    if buy_amount is not None:
        body["buyAmount"] = str(buy_amount)
    if taker is not None:
        body["taker"] = taker
    if proof is not None:
        body["takerProof"] = dict(proof)
    body.update(extra)
    return body


def request_quote(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    """POST /v2/rfq/request expecting 200; returns data (quoted or no_quote)."""
    resp = client.post("/v2/rfq/request", json=dict(body), timeout=75)
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    return data


def expect_quoted(data: Mapping[str, Any]) -> dict[str, Any]:
    assert data.get("status") == "quoted", f"expected a firm quote, got {data!r}"
    return dict(data)


def expect_no_quote(data: Mapping[str, Any], reason: str) -> dict[str, Any]:
    assert data.get("status") == "no_quote", f"expected no_quote {reason}, got {data!r}"
    assert data.get("reason") == reason, f"expected reason {reason!r}, got {data!r}"
    return dict(data)


def preview(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.post("/v2/rfq/preview", json=dict(body)))
    assert isinstance(data, dict), data
    return data


def get_record(client: Client, rfq_id: str, claim_token: str | None = None) -> dict[str, Any]:
    """GET /v2/rfq/{id}, its times checked against each other on every read."""
    headers = claim(claim_token) if claim_token else None
    data: dict[str, Any] = assert_data(client.get(f"/v2/rfq/{rfq_id}", headers=headers))
    assert_record_reply_by(data)
    assert_record_settled_times(data)
    return data


def wait_status(
    client: Client,
    rfq_id: str,
    claim_token: str | None,
    statuses: str | Iterable[str],
    *,
    timeout: float = WAIT_TIMEOUT,
) -> dict[str, Any]:
    """Poll GET /v2/rfq/{id} until its status is one of ``statuses``; fail after ``timeout``
    with the last record seen."""
    wanted = {statuses} if isinstance(statuses, str) else set(statuses)
    last: list[dict[str, Any]] = []

    def probe() -> dict[str, Any] | None:
        record = get_record(client, rfq_id, claim_token)
        last[:] = [record]
        return record if record.get("status") in wanted else None

    try:
        return wait_for(probe, timeout=timeout, interval=0.15, what=f"{rfq_id} in {wanted}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last record: {last[0] if last else None!r}") from None


def submit(client: Client, rfq_id: str, claim_token: str | None, tx_hash: str) -> Response:
    headers = claim(claim_token) if claim_token else None
    return client.post(f"/v2/rfq/{rfq_id}/submit", json={"txHash": tx_hash}, headers=headers)


def cancel(client: Client, rfq_id: str, claim_token: str | None) -> Response:
    headers = claim(claim_token) if claim_token else None
    return client.post(f"/v2/rfq/{rfq_id}/cancel", headers=headers)


def random_tx_hash() -> str:
    return "0x" + secrets.token_hex(32)


def approve_for_quote(chain: VenueChain, wallet: Wallet, firm: Mapping[str, Any]) -> None:
    """Execution rule 1-2: approve takerPays to the reactor unless an allowance covers it
    (resetting a USDT-like token's nonzero allowance first), and wait for the receipt."""
    node = chain.rpc()
    quote = firm["quote"]
    approval = firm["transactions"]["approval"]
    token = to_checksum_address(approval["to"])
    needed = int(quote["takerPays"])
    current = node.allowance(token, wallet.address, quote["reactor"])
    if current >= needed:
        return
    if current:  # tokens like USDT refuse nonzero-to-nonzero approvals: reset first
        node.approve(wallet, token, quote["reactor"], 0)
    assert approval["value"] == "0", approval
    assert approval["chainId"] == chain.chain_id, approval
    node.transact(wallet, token, hex_bytes(approval["data"]))


def broadcast_swap(chain: VenueChain, wallet: Wallet, firm: Mapping[str, Any]) -> str:
    """Broadcast transactions.swap as it is and wait for a successful receipt; its hash."""
    swap = firm["transactions"]["swap"]
    assert swap["value"] == "0", swap
    assert swap["chainId"] == chain.chain_id, swap
    receipt = chain.rpc().transact(wallet, swap["to"], hex_bytes(swap["data"]))
    return str(receipt["transactionHash"])


def execute_quote(chain: VenueChain, wallet: Wallet, firm: Mapping[str, Any]) -> str:
    """The integrator flow: approve, wait, broadcast the swap; returns the swap's tx hash."""
    approve_for_quote(chain, wallet, firm)
    return broadcast_swap(chain, wallet, firm)


def deploy_sample_router(chain: VenueChain, wallet: Wallet) -> str:
    """An aggregator's router of the test's own (``SampleRouter``: swaps through any reactor it
    is given, keeps nothing), deployed by ``wallet``: a router is the aggregator's contract, not
    the venue's, so any deployment can be tested with one."""
    return chain.rpc().deploy(wallet, load_artifact("SampleRouter").bytecode)


def router_swap_calldata(firm: Mapping[str, Any], sell_token: str, buy_token: str) -> bytes:
    """``SampleRouter.swap(reactor, orders, tokenIn, amountIn=takerPays, tokenOut, minOut)``
    with minOut = the quoted buyAmount."""
    quote = firm["quote"]
    orders = [(hex_bytes(o["encodedOrder"]), hex_bytes(o["signature"])) for o in quote["orders"]]
    return calldata(
        "swap(address,(bytes,bytes)[],address,uint256,address,uint256)",
        ["address", "(bytes,bytes)[]", "address", "uint256", "address", "uint256"],
        [
            to_checksum_address(quote["reactor"]),
            orders,
            to_checksum_address(sell_token),
            int(quote["takerPays"]),
            to_checksum_address(buy_token),
            int(quote["buyAmount"]),
        ],
    )


# -- levels -------------------------------------------------------------------------------


def ladder(client: Client, chain_id: int) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.get("/v2/rfq/levels", params={"chainId": chain_id}))
    return data


def ladder_pair(data: Mapping[str, Any], sell: str, buy: str) -> dict[str, Any]:
    for pair in data["pairs"]:
        if pair["sellToken"].lower() == sell.lower() and pair["buyToken"].lower() == buy.lower():
            return dict(pair)
    raise AssertionError(f"no ladder pair {sell} -> {buy}: {data!r}")


def wait_ladder(
    client: Client,
    chain_id: int,
    predicate: Callable[[dict[str, Any]], bool],
    *,
    timeout: float = WAIT_TIMEOUT,
    what: str = "the ladder to reflect the makers' change",
) -> dict[str, Any]:
    """Poll GET /v2/rfq/levels until ``predicate(data)``; returns that ladder."""

    def probe() -> dict[str, Any] | None:
        data = ladder(client, chain_id)
        return data if predicate(data) else None

    return wait_for(probe, timeout=timeout, interval=0.25, what=what)
