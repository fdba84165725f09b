"""Admission of a wallet-naming ramp call, the first steps of RA5 in order: the sandbox flag
(400), the proof of control (401), the provider (404) and, for a sandbox call, the provider's
test account on that chain (403). Customers, transfers and payout retries all pass here first.

The proof is the TakerControl signature of document 1 with taker = the wallet and chainId = the
body's chainId, checked by `ProofService.authorize(grant=False)`: each ramp write carries its
own proof; the identical proof is accepted again from the same caller while it is fresh (spec:
one signature reused across details, kyc and transfer calls within 60 s)."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.errors import ProofOfControlRequired
from simulator.services.access.proofs import ProofService, TakerProof
from simulator.services.ramp.catalog import RampCatalog
from simulator.services.ramp.ports import RampProvider


@dataclass(frozen=True)
class WalletCall:
    """Who makes a wallet-naming ramp call, as the handler parsed it."""

    provider: str
    wallet: str  # the address as sent (checksummed by the schema); records key on .lower()
    chain_id: int  # the proof's domain chain
    proof: TakerProof | None  # None: 401 proof_of_control_required
    caller: str  # client identity the proof nonce binds to (`ip:<address>`)
    sandbox: bool = False  # the sandbox flag

    @property
    def key(self) -> tuple[str, str]:
        """(provider, lowercase wallet): one customer record per wallet per provider."""
        return self.provider, self.wallet.lower()


class RampGate:
    def __init__(self, proofs: ProofService, catalog: RampCatalog) -> None:
        self._proofs = proofs
        self._catalog = catalog

    async def admit(self, call: WalletCall) -> RampProvider:
        """The provider's port once the call may proceed; raises the first failing check."""
        self._catalog.check_sandbox_flag(call.sandbox)
        if call.proof is None:
            raise ProofOfControlRequired(
                "proof is required: a TakerControl signature by the wallet for this chainId"
            )
        await self._proofs.authorize(
            taker=call.wallet,
            chain_id=call.chain_id,
            proof=call.proof,
            caller=call.caller,
            grant=False,
        )
        provider = self._catalog.provider(call.provider)
        if call.sandbox:
            await self._catalog.require_sandbox_chain(call.provider, call.chain_id)
        return provider
