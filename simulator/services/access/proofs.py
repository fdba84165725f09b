"""Proof of control: the EIP-712 TakerControl signature a keyless caller sends, and the ~12 h
grant a verified proof earns.

Rules (spec 1-rfq-v2 "Proof of control"): issuedAt within 60 s of the service clock either side
(and, while /_sim/clock/advance has moved that clock, of the wall clock too: a deviation,
docs/decisions.md, `proof.wall_clock_when_moved`);
the nonce binds to the signed contents and to the caller that first sent it (the identical proof
from the same caller is accepted again while fresh); the signature verifies as the taker (EOA by
recovery, smart accounts by ERC-1271 / ERC-6492 on chain); a verified proof grants the caller ~12 h
of unsigned firm requests for that taker and chain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from eth_account import Account
from eth_account.messages import SignableMessage, _hash_eip191_message, encode_typed_data
from pydantic import Field

from simulator.clock import Clock
from simulator.errors import (
    ProofOfControlInvalid,
    ProofOfControlReplayed,
    ProofOfControlRequired,
    ProofOfControlStale,
    TakerControlUnverifiable,
)
from simulator.services.access.ports import ChainUnreadable, SignatureChecker
from simulator.services.shared.state import AsPairs, StateSchema

DOMAIN_NAME = "Service Taker Control"
DOMAIN_VERSION = "1"
TAKER_CONTROL_TYPES = {
    "EIP712Domain": [
        {"name": "name", "type": "string"},
        {"name": "version", "type": "string"},
        {"name": "chainId", "type": "uint256"},
    ],
    "TakerControl": [
        {"name": "taker", "type": "address"},
        {"name": "chainId", "type": "uint256"},
        {"name": "nonce", "type": "bytes32"},
        {"name": "issuedAt", "type": "uint256"},
    ],
}


def taker_control_message(
    taker: str, chain_id: int, nonce: bytes, issued_at_ms: int
) -> SignableMessage:
    typed: dict[str, Any] = {
        "types": TAKER_CONTROL_TYPES,
        "primaryType": "TakerControl",
        "domain": {"name": DOMAIN_NAME, "version": DOMAIN_VERSION, "chainId": chain_id},
        "message": {"taker": taker, "chainId": chain_id, "nonce": nonce, "issuedAt": issued_at_ms},
    }
    return encode_typed_data(full_message=typed)


@dataclass(frozen=True)
class TakerProof:
    nonce: bytes  # 32 bytes
    issued_at_ms: int
    signature: bytes


@dataclass(frozen=True)
class _NonceUse:
    contents: tuple[
        str, int, int, bytes
    ]  # (taker, chainId, issuedAt, signature) it was signed over
    caller: str  # the caller identity that first sent it

    @property
    def issued_at(self) -> float:
        return self.contents[2] / 1000


@dataclass(frozen=True)
class ProofSettings:
    window_s: float = 60.0  # issuedAt tolerance either side of the service clock
    grant_s: float = 12 * 3600.0  # lifetime of the grant a verified proof earns
    # While the service clock is moved (offset != 0), issuedAt within window_s of the wall clock
    # is fresh too: a client signs with its own clock, which /_sim/clock/advance cannot move.
    wall_clock_when_moved: bool = True


class ProofService:
    def __init__(self, clock: Clock, checker: SignatureChecker, settings: ProofSettings) -> None:
        self._clock = clock
        self._checker = checker
        self.settings = settings
        self._nonces: dict[bytes, _NonceUse] = {}  # verified nonces still fresh
        self._grants: dict[tuple[str, int, str], float] = {}  # (taker, chain, caller) -> expiry

    def has_grant(self, taker: str, chain_id: int, caller: str) -> bool:
        expiry = self._grants.get((taker.lower(), chain_id, caller))
        return expiry is not None and expiry > self._clock.time()

    def grant_expiry(self, taker: str, chain_id: int, caller: str) -> float | None:
        return self._grants.get((taker.lower(), chain_id, caller))

    async def authorize(
        self,
        *,
        taker: str,
        chain_id: int,
        proof: TakerProof | None,
        caller: str,
        grant: bool = True,
    ) -> None:
        """Firm requests: a sent proof is verified (and earns a grant); no proof needs a live
        grant. The ramp calls this with grant=False: each of its writes carries a proof."""
        if proof is None:
            if grant and self.has_grant(taker, chain_id, caller):
                return
            raise ProofOfControlRequired()
        await self.verify(taker=taker, chain_id=chain_id, proof=proof, caller=caller)
        if grant:
            self._grants[(taker.lower(), chain_id, caller)] = (
                self._clock.time() + self.settings.grant_s
            )

    def _wall_clock_counts(self) -> bool:
        return self.settings.wall_clock_when_moved and self._clock.offset_seconds != 0

    def is_fresh(self, issued_at: float) -> bool:
        """issuedAt (Unix seconds) within the window of the service clock, or of the wall clock
        while the service clock is moved."""
        window = self.settings.window_s
        if abs(self._clock.time() - issued_at) <= window:
            return True
        return self._wall_clock_counts() and abs(self._clock.wall_time() - issued_at) <= window

    async def verify(self, *, taker: str, chain_id: int, proof: TakerProof, caller: str) -> None:
        now = self._clock.time()
        if not self.is_fresh(proof.issued_at_ms / 1000):
            details = {
                "issuedAt": proof.issued_at_ms,
                "serverTime": int(now * 1000),
                "windowMs": int(self.settings.window_s * 1000),
            }
            if self._wall_clock_counts():  # judged by the wall clock too: say what it read
                details["wallTime"] = int(self._clock.wall_time() * 1000)
            raise ProofOfControlStale(None, **details)
        contents = (taker.lower(), chain_id, proof.issued_at_ms, proof.signature)
        self._check_nonce(proof.nonce, contents, caller)
        message = taker_control_message(taker, chain_id, proof.nonce, proof.issued_at_ms)
        if not await self._signature_is_valid(taker, chain_id, message, proof.signature):
            raise ProofOfControlInvalid()
        # Re-check after the await: a parallel request may have bound the nonce meanwhile. No
        # await between this check and the write, so the pair is atomic on the event loop.
        self._check_nonce(proof.nonce, contents, caller)
        self._nonces[proof.nonce] = _NonceUse(contents, caller)
        self._forget_stale_nonces()

    def _check_nonce(
        self, nonce: bytes, contents: tuple[str, int, int, bytes], caller: str
    ) -> None:
        use = self._nonces.get(nonce)
        if use is None or not self.is_fresh(use.issued_at):
            return  # the binding lasts exactly while the proof it came with is fresh
        if use.contents != contents:
            raise ProofOfControlReplayed("takerProof nonce was already used with other contents")
        if use.caller != caller:
            raise ProofOfControlReplayed("takerProof was already used by another caller")

    async def _signature_is_valid(
        self, taker: str, chain_id: int, message: SignableMessage, signature: bytes
    ) -> bool:
        if len(signature) == 65:
            try:
                if Account.recover_message(message, signature=signature).lower() == taker.lower():
                    return True  # an EOA's own signature: no chain read needed
            except (
                Exception
            ):  # malformed r/s/v: not an EOA signature; a contract may still accept it
                pass
        digest = _hash_eip191_message(message)
        try:
            return await self._checker.is_valid_signature(chain_id, taker, digest, signature)
        except ChainUnreadable as exc:
            raise TakerControlUnverifiable() from exc

    def _forget_stale_nonces(self) -> None:
        if len(self._nonces) < 4096:
            return
        for nonce in [n for n, use in self._nonces.items() if not self.is_fresh(use.issued_at)]:
            del self._nonces[nonce]

    def evict_stale(self) -> None:
        """Forget nonces no longer fresh and grants past their expiry (a taker that never
        comes back would keep its grant forever)."""
        now = self._clock.time()
        for nonce in [n for n, use in self._nonces.items() if not self.is_fresh(use.issued_at)]:
            del self._nonces[nonce]
        for key in [k for k, expiry in self._grants.items() if expiry <= now]:
            del self._grants[key]


class ProofsSaved(StateSchema):
    """What reset and snapshots put back of the ProofService: the nonces still fresh and the
    grants (by taker, chain and caller)."""

    nonces: dict[bytes, _NonceUse] = Field(validation_alias="_nonces")
    grants: Annotated[dict[tuple[str, int, str], float], AsPairs()] = Field(
        validation_alias="_grants"
    )
