"""The RFQ as its caller handles it (spec 1-rfq-v2 "Cancel, submit, status", decisions R3, R4,
R17): keyless requests with a proof of control, ownership by claim token or partner key,
submit and cancel rules."""

from __future__ import annotations

import pytest
from eth_account import Account

from simulator.errors import Conflict, NotFound, Unauthorized
from simulator.services.access.callers import Caller
from simulator.services.access.proofs import TakerProof
from simulator.services.rfq.service import FirmRequest
from simulator.services.rfq.trades import TradeRequest
from tests.unit.services.ramp_harness import sign_proof
from tests.unit.services.rfq.harness import NGNS, TAKER, TX, USDT, RfqHarness

KEYLESS = Caller(ip="10.0.0.1", key=None)
OTHER_TX = "0x" + "cd" * 32


def firm(proof: TakerProof | None = None) -> FirmRequest:
    trade = TradeRequest(97, USDT.address, NGNS.address, 100 * 10**18, None)
    return FirmRequest(trade, TAKER.address, proof)


async def test_a_keyless_request_needs_a_proof_then_lives_on_the_grant(rfq: RfqHarness) -> None:
    maker = rfq.maker(1)
    with pytest.raises(Unauthorized) as refused:
        await rfq.service.request(KEYLESS, firm())
    assert refused.value.details == {"reason": "proof_of_control_required"}
    assert maker.received == []  # 401 before any maker is asked
    assert rfq.store.all() == []
    proof = sign_proof(rfq.clock, Account.from_key(TAKER.private_key), 97)
    first = await rfq.service.request(KEYLESS, firm(proof=proof))
    assert (first.record.status, first.record.owner) == ("quoted", "ip:10.0.0.1")
    second = await rfq.service.request(KEYLESS, firm())  # the grant covers it
    assert second.record.status == "quoted"


async def test_ownership_is_the_claim_token_or_a_key_of_the_partner(rfq: RfqHarness) -> None:
    rfq.maker(1)
    outcome = await rfq.request()
    record = outcome.record
    assert outcome.claim_token.startswith("rfqc_")
    assert outcome.claim_token.encode() != record.claim_hash  # only a hash is kept
    assert rfq.service.owned(record.rfq_id, KEYLESS, outcome.claim_token) is record
    sibling = rfq.key_caller(frozenset({"trades:read"}))
    assert rfq.service.owned(record.rfq_id, sibling, None) is record
    keys = rfq.keys
    stranger_partner = keys.create_partner("stranger")
    stranger_key, _ = keys.create_key(
        partner_id=stranger_partner.partner_id, environment="test", scopes=frozenset()
    )
    for caller, token in [
        (KEYLESS, None),
        (KEYLESS, "rfqc_wrong"),
        (Caller(ip="127.0.0.1", key=stranger_key), None),
    ]:
        with pytest.raises(NotFound):
            rfq.service.owned(record.rfq_id, caller, token)
    with pytest.raises(NotFound):
        rfq.service.owned("rfq_unknown", rfq.caller, outcome.claim_token)


async def test_submit_is_idempotent_on_the_same_hash_and_refuses_another(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    rfq.service.submit(record, TX)
    submitted_at = record.submitted_at
    rfq.service.submit(record, TX)
    assert (record.status, record.submitted_at) == ("submitted", submitted_at)
    with pytest.raises(Conflict) as refused:
        rfq.service.submit(record, OTHER_TX)
    assert refused.value.details == {"reason": "tx_hash_mismatch"}
    await rfq.fill_all(record)
    rfq.service.submit(record, TX)  # after reconciliation: still 200 with the current status
    assert record.status == "filled"


async def test_submit_after_expires_at_is_refused(rfq: RfqHarness) -> None:
    rfq.maker(1)
    record = await rfq.quoted()
    assert record.quote is not None
    await rfq.advance_to(record.quote.expires_at)  # lapsed, before the sweeper ran
    with pytest.raises(Conflict) as refused:
        rfq.service.submit(record, TX)
    assert refused.value.details == {"reason": "not_submittable", "status": "quoted"}
    assert (record.status, record.tx_hash) == ("quoted", None)


async def test_cancel_only_while_quoted(rfq: RfqHarness) -> None:
    rfq.maker(1)
    cancelled = await rfq.quoted()
    await rfq.service.cancel(cancelled)
    with pytest.raises(Conflict) as twice:
        await rfq.service.cancel(cancelled)
    assert twice.value.details == {"reason": "not_quoted", "status": "quoted"}
    submitted = await rfq.quoted()
    rfq.service.submit(submitted, TX)
    with pytest.raises(Conflict) as after_submit:
        await rfq.service.cancel(submitted)
    assert after_submit.value.details == {"reason": "not_quoted", "status": "submitted"}
    lapsed = await rfq.quoted()
    assert lapsed.quote is not None
    await rfq.advance_to(lapsed.quote.expires_at)
    with pytest.raises(Conflict):
        await rfq.service.cancel(lapsed)
