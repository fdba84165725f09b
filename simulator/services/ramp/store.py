"""The ramp's transfer store: records, their indexes, intentKeys and registered payout recipients.
Plain in-memory state owned by the transfer services (one store per area, so reset and snapshots
work store by store)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Annotated, Literal

from simulator.services.ramp.model import Fingerprint, PayoutAccount, TransferRecord
from simulator.services.shared.state import AsPairs, StateSchema

IntentState = Literal["in_flight", "booked", "idle"]


@dataclass
class Intent:
    """One intentKey's claim on a transfer id."""

    fingerprint: Fingerprint  # the request that holds the key
    transfer_id: str  # the id (and provider reference) this key books under
    state: IntentState  # in_flight: a create is running; booked: the transfer exists; idle: no
    # create running and nothing known booked (kept only while maybe_booked)
    maybe_booked: bool = False  # a booking call under transfer_id was never answered


@dataclass(frozen=True)
class RegisteredRecipient:
    """A payout recipient we registered at the provider for one wallet (reuse after drift)."""

    provider: str
    wallet: str  # lowercase
    account: PayoutAccount
    bank_name: str


def claim_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class TransferStore:
    records: dict[str, TransferRecord] = field(default_factory=dict)  # by our id
    by_provider_id: dict[tuple[str, str], str] = field(
        default_factory=dict
    )  # (provider, its transfer id) -> our id
    by_provider_ref: dict[str, str] = field(default_factory=dict)  # provider's id alone -> our id
    by_wallet: dict[str, list[str]] = field(default_factory=dict)  # wallet -> our ids, oldest first
    intents: dict[str, Intent] = field(default_factory=dict)  # intentKey -> its claim
    recipients: dict[tuple[str, str], RegisteredRecipient] = field(
        default_factory=dict
    )  # (provider, recipient id) -> who registered it
    retries: dict[str, list[str]] = field(default_factory=dict)  # original id -> retry ids

    def add(self, record: TransferRecord) -> None:
        self.records[record.id] = record
        self.by_provider_id[(record.provider, record.provider_transfer_id)] = record.id
        self.by_provider_ref.setdefault(record.provider_transfer_id, record.id)
        self.by_wallet.setdefault(record.wallet, []).append(record.id)
        if record.retry_of_id is not None:
            self.retries.setdefault(record.retry_of_id, []).append(record.id)

    def get(self, transfer_id: str) -> TransferRecord | None:
        return self.records.get(transfer_id)

    def by_provider_transfer(
        self, provider: str, provider_transfer_id: str
    ) -> TransferRecord | None:
        our_id = self.by_provider_id.get((provider, provider_transfer_id))
        return self.records.get(our_id) if our_id is not None else None

    def by_reference(self, reference: str) -> TransferRecord | None:
        """Our id or any provider's id for it (the support lookup's credential)."""
        found = self.records.get(reference)
        if found is not None:
            return found
        our_id = self.by_provider_ref.get(reference)
        return self.records.get(our_id) if our_id is not None else None

    def of_wallet(self, wallet: str) -> list[TransferRecord]:
        """Newest first."""
        return [self.records[i] for i in reversed(self.by_wallet.get(wallet.lower(), []))]

    def retries_of(self, transfer_id: str) -> list[TransferRecord]:
        return [self.records[i] for i in self.retries.get(transfer_id, [])]

    def unsettled(self) -> list[TransferRecord]:
        return [r for r in self.records.values() if not r.settled]


class TransferStoreSaved(StateSchema):
    """What reset and snapshots put back of the ramp's transfer store: all of it."""

    records: dict[str, TransferRecord]
    by_provider_id: Annotated[dict[tuple[str, str], str], AsPairs()]
    by_provider_ref: dict[str, str]
    by_wallet: dict[str, list[str]]
    intents: dict[str, Intent]
    recipients: Annotated[dict[tuple[str, str], RegisteredRecipient], AsPairs()]
    retries: dict[str, list[str]]
