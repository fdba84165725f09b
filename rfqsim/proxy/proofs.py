"""A 401 ``proof_of_control_invalid``, judged by what the proof's signature recovers to.

An externally owned taker's TakerControl signature recovers to its address (spec 1 "Proof of
control" rule 3); when it does, a refused proof was stale or replayed and must say so (rule 6,
the reasons are distinct), not ``invalid``: a finding of the service. When it does not, the
service was right and the client signed something else: a finding of the client that names
the address the signature recovers to and the EIP-712 data it had to sign, so the integrator
sees which part differs (a smart account's signature, checked on chain by EIP-1271, also
recovers elsewhere; the proxy reads no chain, and the service refused it either way).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.wire.signing import (
    DOMAIN_NAME,
    DOMAIN_VERSION,
    PRIMARY_TYPE,
    TAKER_CONTROL_TYPES,
    taker_control_digest,
)
from contracts.orders import recover_signer
from rfqsim.proxy.findings import Inspection

RULES = {"rfq": "rfq/auth/proof-of-control/rule-6", "ramp": "ramp/auth/item-2"}
CLIENT_RULES = {  # the signature must verify as the wallet named
    "rfq": "rfq/auth/proof-of-control/rule-3",
    "ramp": "ramp/resources/proof-object/nonce-issuedat-signature-takercontrol",
}
INVALID = "proof_of_control_invalid"


def _reason(body: Any) -> Any:
    error = body.get("error") if isinstance(body, Mapping) else None
    details = error.get("details") if isinstance(error, Mapping) else None
    return details.get("reason") if isinstance(details, Mapping) else None


class Unrecoverable(ValueError):
    """A readable proof whose signature recovers to no address at all."""


def _signer(request: Mapping[str, Any], wallet_field: str, proof_field: str) -> tuple[str, str]:
    proof = request[proof_field]
    wallet = to_checksum_address(str(request[wallet_field]))
    digest = taker_control_digest(
        wallet, int(request["chainId"]), str(proof["nonce"]), int(proof["issuedAt"])
    )
    signature = bytes.fromhex(str(proof["signature"]).removeprefix("0x"))
    try:
        return recover_signer(digest, signature), wallet
    except ValueError as exc:
        raise Unrecoverable(f"{len(signature)} bytes") from exc


def signed_data(request: Mapping[str, Any], wallet_field: str, proof_field: str) -> str:
    """The EIP-712 domain, type and message the proof had to sign, in the spec's words."""
    proof = request[proof_field]
    fields = ",".join(f"{f['type']} {f['name']}" for f in TAKER_CONTROL_TYPES[PRIMARY_TYPE])
    return (
        f'domain {{name: "{DOMAIN_NAME}", version: "{DOMAIN_VERSION}", '
        f"chainId: {int(request['chainId'])}}} (no verifyingContract), type "
        f"{PRIMARY_TYPE}({fields}), message {{taker: {request[wallet_field]}, chainId: "
        f"{int(request['chainId'])}, nonce: {proof['nonce']}, issuedAt: {int(proof['issuedAt'])}}}"
    )


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
    rule, client_rule = RULES[ex.surface], CLIENT_RULES[ex.surface]
    try:
        signer, wallet = _signer(request, *fields)
    except Unrecoverable as exc:
        inspection.check(rule, lambda: None)
        inspection.fail(
            client_rule,
            f"{fields[1]}.signature recovers to no address ({exc}; expected 65 bytes r, s, v "
            f"or 64 compact) over {signed_data(request, *fields)}",
            "client",
        )
        return
    except (KeyError, TypeError, ValueError):
        return  # not a readable proof: the client's side reports it
    if signer == wallet:
        inspection.fail(
            rule,
            f"{INVALID} for a proof whose signature recovers to the taker {wallet}: a refused "
            "proof with a valid signature is stale or replayed",
        )
        return
    inspection.check(rule, lambda: None)
    inspection.fail(
        client_rule,
        f"{fields[1]}.signature recovers to {signer}, not the {fields[0]} {wallet}: it must "
        f"sign {signed_data(request, *fields)}",
        "client",
    )
