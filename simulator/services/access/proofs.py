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

import math
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

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
from simulator.services.shared.state import (
    AsPairs,
    SavedAttributes,
    StateParticipant,
    StateSchema,
)

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
class NonceUse:
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


@dataclass(frozen=True)
class FreshWindow:
    """The issuedAt times (Unix seconds) that count as fresh now: within the window of the
    service clock, or of the wall clock while the service clock is moved."""

    ranges: tuple[tuple[float, float], ...]  # inclusive (low, high) pairs

    def holds(self, issued_at: float) -> bool:
        return any(low <= issued_at <= high for low, high in self.ranges)


GrantKey = tuple[str, int, str]  # (taker lowercase, chain id, caller identity)


class ProofLedger(Protocol):
    """Bound proof nonces and the grants verified proofs earned: in memory for one instance
    (`MemoryProofs`), in the shared engine for several (adapters/redis/proofs.py). `bind` is
    the one check-and-bind and is atomic wherever the ledger lives: a proof replayed at
    another instance meets its binding there too."""

    async def bound(self, nonce: bytes) -> NonceUse | None:
        """The nonce's binding, fresh or not (None: never bound, or forgotten)."""
        ...

    async def bind(self, nonce: bytes, use: NonceUse, fresh: FreshWindow) -> NonceUse | None:
        """Bind `use` unless a binding whose issuedAt `fresh` holds is there: then return it
        and write nothing."""
        ...

    async def grant_until(self, key: GrantKey) -> float | None: ...

    def grant(self, key: GrantKey, until: float) -> None:
        """The caller may send unsigned firm requests for the taker on the chain until then."""
        ...

    def evict(self, fresh: FreshWindow, now: float) -> None:
        """Forget bindings `fresh` no longer holds and grants that ended by `now`."""
        ...

    def state(self, name: str) -> StateParticipant: ...


class MemoryProofs:
    """The ProofLedger of one instance: nonces and grants in memory."""

    def __init__(self) -> None:
        self._nonces: dict[bytes, NonceUse] = {}  # verified nonces, fresh ones at least
        self._grants: dict[GrantKey, float] = {}  # -> expiry

    async def bound(self, nonce: bytes) -> NonceUse | None:
        return self._nonces.get(nonce)

    async def bind(self, nonce: bytes, use: NonceUse, fresh: FreshWindow) -> NonceUse | None:
        existing = self._nonces.get(nonce)  # no await from here on
        if existing is not None and fresh.holds(existing.issued_at):
            return existing
        self._nonces[nonce] = use
        if len(self._nonces) >= 4096:
            self.evict(fresh, -math.inf)
        return None

    async def grant_until(self, key: GrantKey) -> float | None:
        return self._grants.get(key)

    def grant(self, key: GrantKey, until: float) -> None:
        self._grants[key] = until

    def evict(self, fresh: FreshWindow, now: float) -> None:
        for nonce in [n for n, use in self._nonces.items() if not fresh.holds(use.issued_at)]:
            del self._nonces[nonce]
        for key in [k for k, expiry in self._grants.items() if expiry <= now]:
            del self._grants[key]

    def state(self, name: str) -> StateParticipant:
        return SavedAttributes(name, self, ProofsSaved)


class ProofService:
    """The rules of proof of control over a ProofLedger (in memory unless given: the shared
    engine's for several instances)."""

    def __init__(
        self,
        clock: Clock,
        checker: SignatureChecker,
        settings: ProofSettings,
        ledger: ProofLedger | None = None,
    ) -> None:
        self._clock = clock
        self._checker = checker
        self.settings = settings
        self.ledger: ProofLedger = ledger or MemoryProofs()

    async def has_grant(self, taker: str, chain_id: int, caller: str) -> bool:
        expiry = await self.ledger.grant_until((taker.lower(), chain_id, caller))
        return expiry is not None and expiry > self._clock.time()

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
            if grant and await self.has_grant(taker, chain_id, caller):
                return
            raise ProofOfControlRequired()
        await self.verify(taker=taker, chain_id=chain_id, proof=proof, caller=caller)
        if grant:
            self.ledger.grant(
                (taker.lower(), chain_id, caller), self._clock.time() + self.settings.grant_s
            )

    def _wall_clock_counts(self) -> bool:
        return self.settings.wall_clock_when_moved and self._clock.offset_seconds != 0

    def fresh_window(self) -> FreshWindow:
        window = self.settings.window_s
        now = self._clock.time()
        ranges = [(now - window, now + window)]
        if self._wall_clock_counts():
            wall = self._clock.wall_time()
            ranges.append((wall - window, wall + window))
        return FreshWindow(tuple(ranges))

    def is_fresh(self, issued_at: float) -> bool:
        """issuedAt (Unix seconds) within the window of the service clock, or of the wall clock
        while the service clock is moved."""
        return self.fresh_window().holds(issued_at)

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
        self._check_nonce(await self.ledger.bound(proof.nonce), contents, caller)
        message = taker_control_message(taker, chain_id, proof.nonce, proof.issued_at_ms)
        if not await self._signature_is_valid(taker, chain_id, message, proof.signature):
            raise ProofOfControlInvalid()
        # Bound now unless a parallel request (on any instance) bound it meanwhile: then that
        # binding is judged like the first.
        bound = await self.ledger.bind(proof.nonce, NonceUse(contents, caller), self.fresh_window())
        self._check_nonce(bound, contents, caller)

    def _check_nonce(
        self, use: NonceUse | None, contents: tuple[str, int, int, bytes], caller: str
    ) -> None:
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

    def evict_stale(self) -> None:
        """Forget nonces no longer fresh and grants past their expiry (a taker that never
        comes back would keep its grant forever)."""
        self.ledger.evict(self.fresh_window(), self._clock.time())

    def state(self, name: str) -> StateParticipant:
        return self.ledger.state(name)


class ProofsSaved(StateSchema):
    """What reset and snapshots put back of the proofs' ledger: the nonces still fresh and the
    grants (by taker, chain and caller)."""

    nonces: dict[bytes, NonceUse] = Field(validation_alias="_nonces")
    grants: Annotated[dict[tuple[str, int, str], float], AsPairs()] = Field(
        validation_alias="_grants"
    )
