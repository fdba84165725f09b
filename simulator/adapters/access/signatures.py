"""Smart-account signature checks on chain: the deployless ERC-6492 universal validator run
inside `eth_call` (ERC-6492 wrapper → deploy via factory → ERC-1271, else ecrecover). Nothing is
deployed: the call's state changes are discarded."""

from __future__ import annotations

from contracts.signatures import decode_validator_result, universal_validator_calldata
from rfqkit.chain import AnvilChain, CallReverted


class ChainSignatureChecker:
    def __init__(self, chains: dict[int, AnvilChain]) -> None:
        self._chains = chains  # filled by the chain runtime at start-up

    async def is_valid_signature(
        self, chain_id: int, signer: str, digest: bytes, signature: bytes
    ) -> bool:
        chain = self._chains.get(chain_id)
        if chain is None:
            # A chain this service does not run (the ramp accepts any chainId; the RFQ API
            # refuses unknown chains before any proof): no contract wallet can be checked there,
            # so only a key's own signature could have verified, and this one did not. That is a
            # definite "invalid" (401), not an unreadable chain (502 "retry"), which no retry
            # would ever fix.
            return False
        try:
            result = await chain.call(None, universal_validator_calldata(signer, digest, signature))
        except CallReverted:
            return False  # e.g. a malformed ERC-6492 wrapper: the signature is simply not valid
        return decode_validator_result(result)
