"""RFQ events delivered to a real https receiver on loopback: signed (checked by an independent
HMAC), to the owning partner's endpoints for the event types they chose and to no one else, a
500 retried five seconds later on the simulator clock with the same bytes (and redelivered by
hand), a receiver down for six hours that still gets the event when it is back, and duplicates
carrying the same event id. The receiver's certificate comes from the simulator's local CA
(``POST /_sim/webhooks/certificates``), which the simulator's sender trusts; partners and their
events are made as in webhook_partners.py.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable

import pytest

from conformance.calls.webhooks import RfqEventReceiver
from conformance.deployment.sim_control import SimControl
from conformance.tests.webhook_partners import (
    WAIT_S,
    WebhookPartner,
    attempts_made,
    check_event,
    check_signature,
    expire,
    service_now,
    wait_for,
)
from conformance.wire.response_checks import parse_iso_utc
from rfqkit.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.sim_only

RETRIES_BEFORE_SIX_HOURS = (5, 300, 1800, 7200)  # after the first attempt: attempts 2..5


@pytest.mark.spec(
    "rfq/events/rfq-expired",
    "rfq/events/each-emitted-status-changes",
    "rfq/events/delivery-body-fields",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/signature",
    "rfq/events/receivers-compare-constant-time",
    "rfq/events/outbound-webhooks-partner-feature",
    "rfq/auth/api-keys/key-gives-own-rate-limit",
    "rfq/states/quoted-quote-lapses",
    "rfq/versioning/item-1",
)
def test_an_expired_quote_is_delivered_signed_to_the_owning_partner_only(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    owner, stranger = make_partner(), make_partner()
    endpoint = owner.register(receiver.url)
    owner.register(receiver.url + "/filled-only", ["rfq.filled"])
    stranger.register(receiver.url + "/stranger")
    quote, rfq_id = expire(owner)

    (got,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    check_signature(endpoint["signingSecret"], got)
    event = check_event(got, "rfq.expired", rfq_id)
    assert got.path == "/webhooks"
    rfq = event["data"]["rfq"]
    assert rfq["sellToken"] == owner.token("USDT")
    assert rfq["buyToken"] == owner.token("NGNS")
    assert rfq["taker"].lower() == quote["quote"]["taker"].lower()
    assert rfq["txHash"] is None
    assert rfq["filledAt"] is None
    assert owner.rfq(rfq_id)["status"] == "expired"
    # The event is routed once, to every endpoint it is for, when it is emitted: the owner's
    # delivery exists, so one to the stranger (or the filled-only endpoint) would too.
    (delivery,) = owner.deliveries(event["id"])
    assert delivery["status"] == "delivered"
    assert delivery["endpoint_id"] == endpoint["id"]
    assert stranger.deliveries(event["id"]) == []
    assert [r.path for r in receiver.requests] == ["/webhooks"], "event reached a wrong endpoint"


@pytest.mark.spec(
    "rfq/events/delivery-rules",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/signature",
    "rfq/events/backoff-schedule-retry-count",
)
@pytest.mark.sim_only(because="decision")  # the 5 s retry is rfqsim's schedule (W1), not shown
def test_a_500_is_retried_five_seconds_later_with_the_same_bytes(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    receiver.respond_with(500)
    _, rfq_id = expire(partner)
    event_id = f"rfq.expired:{rfq_id}"

    (first,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    wait_for(attempts_made(partner, event_id, 1), "the first attempt to be recorded")
    (attempt,) = partner.attempts(event_id)
    assert (attempt["response_status"], attempt["outcome"]) == (500, "failed")
    time.sleep(0.3)
    assert len(receiver.requests) == 1, "retried before the clock moved"

    sim.advance(5)
    first_again, second = receiver.wait_for_requests(2, timeout=WAIT_S)
    assert first_again == first
    assert second.raw_body == first.raw_body, "a retry must carry the same bytes"
    assert second.header("Service-Event-Id") == first.header("Service-Event-Id") == event_id
    check_signature(endpoint["signingSecret"], second)
    wait_for(lambda: partner.deliveries(event_id)[0]["status"] == "delivered", "delivered")

    (delivery,) = partner.deliveries(event_id)
    redone = sim.call("POST", f"webhooks/deliveries/{delivery['id']}/redeliver")
    assert [a["manual"] for a in redone["attempts"]] == [False, False, True]
    third = receiver.wait_for_requests(3, timeout=WAIT_S)[2]
    assert third.raw_body == first.raw_body
    check_signature(endpoint["signingSecret"], third)


@pytest.mark.spec(
    "rfq/events/delivery-rules",
    "rfq/events/headers-on-each-delivery",
    "rfq/events/backoff-schedule-retry-count",
)
@pytest.mark.sim_only(because="clock")
def test_a_receiver_down_for_six_hours_still_gets_the_event(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    endpoint = partner.register(receiver.url)
    port = receiver.port
    receiver.stop()
    stopped_at = service_now(sim)
    _, rfq_id = expire(partner)
    event_id = f"rfq.expired:{rfq_id}"

    wait_for(attempts_made(partner, event_id, 1), "attempt 1")
    for number, delay in enumerate(RETRIES_BEFORE_SIX_HOURS, start=2):
        sim.advance(delay)
        wait_for(attempts_made(partner, event_id, number), f"attempt {number}")
    attempts = partner.attempts(event_id)
    assert all(a["outcome"] == "failed" and a["response_status"] is None for a in attempts)
    (delivery,) = partner.deliveries(event_id)
    assert delivery["status"] == "pending"
    next_at = parse_iso_utc(delivery["next_attempt_at"]).timestamp()

    # Stay down past six hours in all; the next attempt (5 h after the fifth) is not due yet.
    down_for = service_now(sim) - stopped_at
    sim.advance(math.ceil(6 * 3600 - down_for + 60))
    assert service_now(sim) < next_at
    time.sleep(0.3)
    assert len(partner.attempts(event_id)) == 5

    receiver.restart()
    assert receiver.port == port
    sim.advance(math.ceil(next_at - service_now(sim)) + 1)
    (got,) = receiver.wait_for_requests(1, timeout=WAIT_S)
    assert service_now(sim) - stopped_at >= 6 * 3600
    check_signature(endpoint["signingSecret"], got)
    check_event(got, "rfq.expired", rfq_id)
    wait_for(lambda: partner.deliveries(event_id)[0]["status"] == "delivered", "delivered")
    assert len(partner.attempts(event_id)) == 6
    assert partner.rfq(rfq_id)["status"] == "expired"


@pytest.mark.spec("rfq/events/headers-on-each-delivery")
def test_duplicates_carry_the_same_event_id(
    make_partner: Callable[[], WebhookPartner], receiver: WebhookReceiver, sim: SimControl
) -> None:
    partner = make_partner()
    partner.register(receiver.url)
    sim.call("POST", "webhooks/faults", {"duplicate": True})
    _, rfq_id = expire(partner)
    first, second = receiver.wait_for_requests(2, timeout=WAIT_S)
    assert first.header("Service-Event-Id") == second.header("Service-Event-Id")
    assert first.raw_body == second.raw_body
    safe = RfqEventReceiver()
    assert safe.handle(json.loads(first.raw_body))
    assert not safe.handle(json.loads(second.raw_body))
    assert safe.rfqs[rfq_id].status == "expired"
