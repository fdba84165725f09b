"""The finding lines docs/proxy.md shows are what the proxy's checks print for the exchanges
the doc describes (the request id aside): a sample that drifts from the code fails here."""

from __future__ import annotations

import re
from pathlib import Path

from eth_account import Account

from conformance.wire.signing import sign_taker_proof
from rfqsim.proxy.exchange import ProxiedExchange
from tests.unit.proxy.exchanges import (
    error,
    exchange,
    firm_request,
    limited,
    refused_proof,
    watcher,
)

DOC = Path(__file__).resolve().parents[3] / "docs" / "proxy.md"
# Anvil's first two dev accounts (public test keys): the taker, and the key that signed.
TAKER_KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"
SIGNER_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"


def _printed(ex: ProxiedExchange) -> str:
    watch, _, out = watcher()
    watch.inspect(ex)
    return re.sub(r"\[req_[0-9a-f]+\]", "[req_…]", out.getvalue().strip())


def test_the_docs_finding_lines_are_what_the_checks_print() -> None:
    shown = [line for line in DOC.read_text().splitlines() if line.startswith("VIOLATION ")]
    headers, answer = error(400, "invalid_request", details={"issues": [{"path": "sellAmount"}]})
    amount = _printed(
        exchange(
            "POST",
            "/v2/rfq/request",
            status=400,
            request=firm_request(sellAmount=10_000_000),
            body=answer,
            headers=[*headers, *limited()],
        )
    )
    taker = Account.from_key(TAKER_KEY).address
    proof = sign_taker_proof(
        SIGNER_KEY, taker, 97, issued_at_ms=1_767_268_800_000, nonce="0x" + "11" * 32
    )
    signature = _printed(refused_proof(firm_request(taker=taker, takerProof=proof)))
    assert shown == [amount, signature]
