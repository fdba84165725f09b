"""A 401 ``proof_of_control_invalid`` for a proof whose signature does verify as the taker.

An externally owned taker's TakerControl signature recovers to its address (spec 1 "Proof of
control" rule 3); when it does, a refused proof was stale or replayed and must say so (rule 6,
the reasons are distinct), not ``invalid``. A smart account's signature does not recover to it
and is left alone: the proxy reads no chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.signing import taker_control_digest
from contracts.orders import recover_signer
from rfqsim.proxy.findings import Inspection

RULES = {"rfq": "rfq/auth/proof-of-control/rule-6", "ramp": "ramp/auth/item-2"}
INVALID = "proof_of_control_invalid"


def _reason(body: Any) -> Any:
    error = body.get("error") if isinstance(body, Mapping) else None
    details = error.get("details") if isinstance(error, Mapping) else None
    return details.get("reason") if isinstance(details, Mapping) else None


def _signer(request: Mapping[str, Any], wallet_field: str, proof_field: str) -> tuple[str, str]:
    proof = request[proof_field]
    wallet = to_checksum_address(str(request[wallet_field]))
    digest = taker_control_digest(
        wallet, int(request["chainId"]), str(proof["nonce"]), int(proof["issuedAt"])
    )
    signature = bytes.fromhex(str(proof["signature"]).removeprefix("0x"))
    return recover_signer(digest, signature), wallet


def check(inspection: Inspection) -> None:
    ex = inspection.exchange
    if ex.status != 401 or ex.keyed or ex.surface not in RULES:
        return
    if _reason(ex.json) != INVALID:
        return
    request, _ = ex.request_json
    if not isinstance(request, Mapping):
        return
    fields = ("wallet", "proof") if ex.surface == "ramp" else ("taker", "takerProof")
    try:
        signer, wallet = _signer(request, *fields)
    except (KeyError, TypeError, ValueError):
        return  # not a readable proof: the client's side reports it
    rule = RULES[ex.surface]
    if signer == wallet:
        inspection.fail(
            rule,
            f"{INVALID} for a proof whose signature recovers to the taker {wallet}: a refused "
            "proof with a valid signature is stale or replayed",
        )
    else:
        inspection.check(rule, lambda: None)
