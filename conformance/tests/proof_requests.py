"""Keyless firm requests as the proof-of-control tests send them (test_auth_proofs_eoa.py and
test_auth_proofs_smart_accounts.py). Each test sends from its own loopback client IP (the
``caller`` fixture of conftest.py), so grants, nonces bound to a caller and the keyless per-IP
rate limit never leak between tests; every body restricts the auction to a random wallet that is
no maker, so a request that passes authentication and the proof-of-funds check answers the
deterministic no-quote ``no_restricted_liquidity`` (:func:`assert_accepted`) and never holds an
outstanding-RFQ slot or maker inventory, while a refused proof is a 401 with its reason after the
keyless limiter counted it (:func:`assert_unauthorized`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eth_account import Account

from conformance.deployment.target import Target
from conformance.wire.client import Client, Response
from conformance.wire.needs import InputProblem
from conformance.wire.response_checks import assert_data, assert_error, assert_rate_limit_headers

CHAIN = 97  # test environment: minimum size 0.01
OTHER_CHAIN = 56
ONE_TOKEN = 10**18  # 1 USDT (18 decimals): above the minimum on both chains

PROOF_RULES = (
    "rfq/auth/proof-of-control/post-v2-rfq-request",
    "rfq/auth/proof-of-control/typed-data-domain",
    "rfq/auth/proof-of-control/primary-type-takercontrol-fields",
    "rfq/auth/proof-of-control/message",
    "rfq/auth/proof-of-control/sent-takerproof-nonce-issuedat",
)


def token_address(target: Target, chain_id: int, symbol: str) -> str:
    for token in target.chain(chain_id).get("tokens") or []:
        if token.get("symbol") == symbol:
            return str(token["address"])
    raise KeyError(f"no {symbol} on chain {chain_id}")


def demo_wallet(target: Target, index: int = 0) -> Mapping[str, str]:
    """The simulator's demo wallet ``index``, else the given taker wallet ``index``: a test that
    needs more wallets than were given is skipped, naming the input."""
    wallets = target.wallets()
    if len(wallets) <= index:
        raise InputProblem(
            "taker_wallet",
            f"{index + 1} taker wallets (--taker-key HEX, repeated); {len(wallets)} given",
        )
    wallet: Mapping[str, str] = wallets[index]
    return wallet


def request_body(
    target: Target,
    taker: str,
    proof: Mapping[str, Any] | None = None,
    *,
    chain_id: int = CHAIN,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": chain_id,
        "sellToken": token_address(target, chain_id, "USDT"),
        "buyToken": token_address(target, chain_id, "NGNS"),
        "sellAmount": str(ONE_TOKEN),
        "taker": taker,
        # No maker funds this wallet: the auction is deterministic and holds nothing.
        "restrictedLiquidityWallets": [Account.create().address],
    }
    if proof is not None:
        body["takerProof"] = dict(proof)
    return body


def send_request(client: Client, body: Mapping[str, Any]) -> Response:
    return client.post("/v2/rfq/request", json=body)


def assert_accepted(resp: Response) -> dict[str, Any]:
    """Authentication passed: 200 with the request's no-quote (rate accounted as keyless)."""
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    assert data.get("status") == "no_quote", f"{resp.describe()}: {data!r}"
    assert data.get("reason") == "no_restricted_liquidity", f"{resp.describe()}: {data!r}"
    assert str(data.get("rfqId", "")).startswith("rfq_"), data
    assert str(data.get("claimToken", "")).startswith("rfqc_"), data
    assert_rate_limit_headers(resp)
    return data


def assert_unauthorized(resp: Response, reason: str) -> dict[str, Any]:
    error = assert_error(resp, 401, "unauthorized", reason)
    # A proof failure is answered by the service after the keyless limiter counted it.
    assert_rate_limit_headers(resp)
    return error
