"""Ports of the access area: what proofs of control need from the outside world. The chain
adapter (adapters/access/signatures.py) implements them; unit tests use fakes."""

from __future__ import annotations

from typing import Protocol

from rfqkit.chain_errors import ChainUnreadable

__all__ = ["ChainUnreadable", "SignatureChecker"]


class SignatureChecker(Protocol):
    async def is_valid_signature(
        self, chain_id: int, signer: str, digest: bytes, signature: bytes
    ) -> bool:
        """ERC-6492 / ERC-1271 / ecrecover verdict for `signer`, read on chain `chain_id`.
        Raises ChainUnreadable when the chain cannot be read."""
        ...
