"""Ramp transfer reads: one transfer (full or wallet view), the wallet's list and the support
lookup (spec 2-ramp-v2 "Reading"; docs/ramp.md).

Only a single read re-checks the provider, through the tracker; the list and the support
lookup serve stored state.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.errors import InvalidRequest, NotFound
from simulator.services.ramp.catalog import RampCatalog
from simulator.services.ramp.masking import TransferView, ViewKind, support_view, view_of
from simulator.services.ramp.model import TransferRecord
from simulator.services.ramp.store import TransferStore, claim_hash
from simulator.services.ramp.tracking import TransferTracker


@dataclass(frozen=True)
class TransferPage:
    transfers: list[TransferView]  # wallet views, newest first
    next_cursor: str | None  # None on the last page


class RampReads:
    def __init__(
        self, store: TransferStore, tracker: TransferTracker, catalog: RampCatalog
    ) -> None:
        self.store = store
        self.tracker = tracker
        self._catalog = catalog

    async def read(
        self, transfer_id: str, *, claim: str | None = None, wallet: str | None = None
    ) -> TransferView:
        """GET /transfers/{id}: the full view with the claim token, the wallet view with the
        wallet that made it; anything else is 404. Re-checks the provider first when the
        stored state is older than 8 s and not settled."""
        record = self.store.get(transfer_id)
        kind: ViewKind
        if claim is not None:
            if record is None or claim_hash(claim) not in record.claim_hashes:
                raise NotFound("No such transfer for this claim token")
            kind = "full"
        elif wallet is not None:
            if record is None or record.wallet != wallet.lower():
                raise NotFound("No such transfer for this wallet")
            kind = "wallet"
        else:
            raise NotFound("No such transfer: send X-Ramp-Claim or ?wallet=")
        await self.tracker.refresh(record)
        return view_of(record, kind)

    def list(self, wallet: str, first: int, after: str | None) -> TransferPage:
        """POST /transfers/list: wallet views, newest first, from storage."""
        records = self.store.of_wallet(wallet)
        start = 0
        if after is not None:
            ids = [r.id for r in records]
            if after not in ids:
                raise InvalidRequest.for_field("after", "not a cursor of this wallet's list")
            start = ids.index(after) + 1
        page = records[start : start + first]
        more = start + first < len(records)
        return TransferPage(
            transfers=[view_of(r, "wallet") for r in page],
            next_cursor=page[-1].id if more and page else None,
        )

    def support(self, reference: str) -> TransferView:
        """POST /support/transfer: our id or the provider's as the credential."""
        record = self.store.by_reference(reference)
        if record is None:
            raise NotFound("No transfer with this reference")
        return support_view(record)

    def view(self, record: TransferRecord) -> TransferView:
        """The full view (a create's answer)."""
        return view_of(record, "full")

    def provider_of(self, transfer_id: str) -> str:
        """The provider of one of our transfers; the catalog's first provider for an unknown id
        (the retry then answers 404 for the transfer, not for the provider)."""
        record = self.store.get(transfer_id)
        if record is not None:
            return record.provider
        return self._catalog.providers.ids[0] if self._catalog.providers.ids else ""

    def provider_transfer_id(self, our_id: str) -> str | None:
        """For the /_sim/ramp controls: the provider's id of one of our transfers."""
        record = self.store.get(our_id)
        return record.provider_transfer_id if record is not None else None
