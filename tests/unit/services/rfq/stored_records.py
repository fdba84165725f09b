"""A stored RFQ record with every field set, for the store's tests and the history file's."""

from __future__ import annotations

from simulator.services.rfq.model import StoredRfq


def record(rfq_id: str) -> StoredRfq:
    return StoredRfq(
        rfq_id=rfq_id,
        chain_id=97,
        sell_token="0xS",
        buy_token="0xB",
        requested_sell=1,
        requested_buy=None,
        taker="0xT",
        owner="ip:127.0.0.1",
        partner_id=None,
        claim_hash=b"",
        created_at=0.0,
        reply_by=0.75,
        quote_ttl_ms=60_000,
    )
