"""``rfq.filled`` corrections delivered to a real https receiver on loopback (a plain fill with
its settled amounts is in test_webhooks_rfq_events.py, which runs on any deployment): a fill
seen after the quote expired corrects the ``rfq.expired`` event (late, supersedes it), and a
swap that landed in time while the fill index was unreachable corrects the ``rfq.failed`` of a
reported hash that never landed (late, supersedes it, ``previousFailReason`` ``not_landed``);
the spec's safe receiver keeps the fill whatever order the events come in. Partners, takers and
their swaps are made as in webhook_partners.py; signatures are checked by an independent HMAC.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Callable

import pytest

from conformance.calls.webhooks import RfqEventReceiver
from conformance.deployment.sim_control import SimControl
from conformance.tests.webhook_partners import (
    CHAIN_ID,
    WAIT_S,
    WebhookPartner,
    check_event,
    check_signature,
    service_now,
)
from conformance.wire.response_checks import assert_data, parse_iso_utc
from rfqkit.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.sim_only


@pytest.mark.spec(
    "rfq/events/corrections",
    "rfq/events/late-supersedes-previousfailreason-appear",
    "rfq/events/safe-receiver-keys-rfq-id",
    "rfq/states/failed-or-expired-late-indexed-fill",
    "rfq/states/rule-2",
)
@pytest.mark.sim_only(because="clock")
def test_a_late_fill_corrects_the_expired_event(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    taker = partner.fresh_taker(gas_money=True)
    quote = partner.firm_quote(taker)
    rfq_id = str(quote["rfqId"])
    sim.advance(61)  # past expiresAt, before the order deadline (expiresAt + 60 s)
    (expired,) = receiver.wait_for_events(1, timeout=WAIT_S)
    check_event(expired, "rfq.expired", rfq_id)

    partner.execute(taker, quote)
    _, filled = receiver.wait_for_events(2, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], filled)
    rfq = check_event(filled, "rfq.filled", rfq_id)["data"]["rfq"]
    assert rfq["late"] is True
    assert rfq["supersedes"] == "rfq.expired"
    assert rfq["previousFailReason"] is None  # an expiry has no failReason to clear
    assert partner.rfq(rfq_id)["status"] == "filled"

    safe = RfqEventReceiver()
    for got in (expired, filled, expired):  # a redelivered expiry must not undo the fill
        safe.handle(json.loads(got.raw_body))
    assert safe.rfqs[rfq_id].status == "filled"
    # Out of order: the correction first, the stale expiry second.
    reordered = RfqEventReceiver()
    reordered.handle(json.loads(filled.raw_body))
    reordered.handle(json.loads(expired.raw_body))
    assert reordered.rfqs[rfq_id].status == "filled"


@pytest.mark.spec(
    "rfq/events/corrections",
    "rfq/events/late-supersedes-previousfailreason-appear",
    "rfq/states/submitted-signed-order-deadline-passes",
    "rfq/states/failed-or-expired-late-indexed-fill",
)
@pytest.mark.sim_only(because="clock")
def test_a_late_indexed_fill_corrects_the_failed_event(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    """The reported hash never lands, so the RFQ fails at the order deadline; meanwhile the
    taker's real swap landed in time but the fill index was unreachable (the fault switch).
    When the index comes back, the fill corrects the failure: late, supersedes rfq.failed,
    previousFailReason not_landed."""
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    taker = partner.fresh_taker(gas_money=True)
    quote = partner.firm_quote(taker)
    rfq_id = str(quote["rfqId"])
    try:
        sim.call("POST", "faults", {"indexer_paused": [CHAIN_ID]})
        never_lands = "0x" + secrets.token_hex(32)
        submitted = partner.caller.post(
            f"/v2/rfq/{rfq_id}/submit", json={"txHash": never_lands}, headers=partner.auth
        )
        assert assert_data(submitted)["status"] == "submitted"
        swap_hash = partner.execute(taker, quote)  # mined before the deadline, not yet indexed
        deadline = parse_iso_utc(quote["quote"]["orderDeadline"]).timestamp()
        sim.advance(max(1, math.ceil(deadline - service_now(sim)) + 1))
        (failed,) = receiver.wait_for_events(1, timeout=WAIT_S)
        rfq = check_event(failed, "rfq.failed", rfq_id)["data"]["rfq"]
        assert rfq["failReason"] == "not_landed"
        assert partner.rfq(rfq_id)["status"] == "failed"
    finally:
        sim.call("DELETE", "faults")  # the index is back: it catches up from where it stopped
    _, filled = receiver.wait_for_events(2, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], filled)
    rfq = check_event(filled, "rfq.filled", rfq_id)["data"]["rfq"]
    assert rfq["late"] is True
    assert rfq["supersedes"] == "rfq.failed"
    assert rfq["previousFailReason"] == "not_landed"
    assert str(rfq["txHash"]).lower() == swap_hash.lower()
    record = partner.rfq(rfq_id)
    assert record["status"] == "filled"
    assert record["failReason"] is None
