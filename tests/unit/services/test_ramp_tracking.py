"""Keeping transfers in step with the provider, with the fake provider: signed webhooks (RA28),
forward-only application, the sweep and the expiry (RA23), payout retries (RA25), the emails and
SMTP delivery (RA24)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from eth_account import Account

from simulator.errors import InvalidRequest, NotFound, Unauthorized
from simulator.services.ramp.emails import Outbox, SmtpTarget
from simulator.services.ramp.model import TransferRecord
from simulator.services.ramp.ports import PersonDetails
from simulator.services.ramp.webhooks import sign, signature_valid
from tests.unit.services.ramp_events import event
from tests.unit.services.ramp_harness import SECRET, Ramp


def status(record: TransferRecord) -> str:
    """The status now (a function call, so mypy does not carry narrowing across awaits)."""
    return record.status


def test_signature_rules() -> None:
    body = b'{"id":"evt_1"}'
    header = sign(SECRET, 1700000000, body)
    assert signature_valid(SECRET, header, body)
    assert signature_valid(SECRET, header + ",v1=" + "0" * 64, body)  # any v1 may match
    assert not signature_valid(SECRET, header, body + b" ")
    assert not signature_valid("whsec_other_secret_value", header, body)
    assert not signature_valid(SECRET, header.replace("t=1700000000", "t=1700000001"), body)
    for broken in (None, "", "v1=abc", "t=1,v1=", "t=x,v1=00", "t=1,v1=ééé"):
        assert not signature_valid(SECRET, broken, body)


async def test_webhooks_apply_forward_only_and_dedupe() -> None:
    ramp = Ramp()
    await ramp.register()
    created = await ramp.create("sell", email="s@example.com")
    record = created.record
    pid = record.provider_transfer_id
    received = ramp.fake.set_status(pid, "funds_received")
    body = event(ramp, received, "evt_1")
    with pytest.raises(Unauthorized):
        ramp.webhooks.receive("ngnramp", body, "t=1,v1=" + "0" * 64)
    with pytest.raises(NotFound):
        ramp.webhooks.receive("other", body, sign(SECRET, 1, body))
    assert status(record) == "AWAITING_FUNDS"
    receipt = ramp.webhooks.receive("ngnramp", body, sign(SECRET, 1, body))
    assert receipt.outcome == "applied"
    assert status(record) == "PROCESSING"
    assert ramp.webhooks.receive("ngnramp", body, sign(SECRET, 2, body)).outcome == "duplicate"
    converted = ramp.fake.set_status(pid, "funds_converted")
    body2 = event(ramp, converted, "evt_2")
    assert ramp.webhooks.receive("ngnramp", body2, sign(SECRET, 3, body2)).outcome == "applied"
    # A stale event (a new id carrying an older state) cannot move it back.
    stale = event(ramp, received, "evt_3")
    assert ramp.webhooks.receive("ngnramp", stale, sign(SECRET, 4, stale)).outcome == "ignored"
    assert (record.status, record.provider_status) == ("SENDING", "funds_converted")
    done = ramp.fake.set_status(pid, "completed")
    body4 = event(ramp, done, "evt_4")
    ramp.webhooks.receive("ngnramp", body4, sign(SECRET, 5, body4))
    assert status(record) == "COMPLETED"
    refunded = event(ramp, replace(done, status="refunded"), "evt_5")
    assert ramp.webhooks.receive("ngnramp", refunded, sign(SECRET, 6, refunded)).outcome == (
        "ignored"
    )
    assert [e.status for e in record.timeline] == [
        "AWAITING_FUNDS",
        "PROCESSING",
        "SENDING",
        "COMPLETED",
    ]
    kinds = [e.kind for e in ramp.outbox.find(transfer_id=record.id)]
    assert kinds == ["instructions", "funds_received", "result"]


async def test_malformed_and_unknown_webhooks() -> None:
    ramp = Ramp()
    for body in (
        b"not json",
        b"[]",
        b'{"type":"transfer.updated"}',
        b'{"id":"e","type":"transfer.updated","data":{}}',
    ):
        with pytest.raises(InvalidRequest):
            ramp.webhooks.receive("ngnramp", body, sign(SECRET, 1, body))
    other = b'{"id":"evt_9","type":"customer.updated","data":{}}'
    assert ramp.webhooks.receive("ngnramp", other, sign(SECRET, 1, other)).outcome == "other_type"
    await ramp.register()
    created = await ramp.create("sell")
    unknown = replace(ramp.fake.transfers[created.record.provider_transfer_id], id="ptr_else")
    body = event(ramp, unknown, "evt_10")
    assert ramp.webhooks.receive("ngnramp", body, sign(SECRET, 1, body)).outcome == (
        "unknown_transfer"
    )


async def test_sweep_recovers_lost_webhooks_and_rereads_pending_reviews() -> None:
    ramp = Ramp()
    await ramp.register()
    created = await ramp.create("sell")
    ramp.move(created.record, "funds_received")
    report = await ramp.sweep.sweep()
    assert report.transfers_checked == 0  # stored state not older than 8 s yet
    await ramp.clock.advance(300)
    report = await ramp.sweep.sweep()
    assert report.transfers_checked == 1
    assert status(created.record) == "PROCESSING"
    ramp.move(created.record, "completed")
    await ramp.clock.advance(300)
    await ramp.sweep.sweep()
    assert status(created.record) == "COMPLETED"
    await ramp.clock.advance(300)
    assert (await ramp.sweep.sweep()).transfers_checked == 0  # settled: never again


async def test_expiry_after_one_last_read_then_a_late_payment_completes() -> None:
    ramp = Ramp()
    await ramp.verified()
    created = await ramp.create(email="late@example.com")
    record = created.record
    deadline = record.expires_at + 600
    assert ramp.sweep.next_expiry() == deadline
    await ramp.clock.sleep_until(0)  # no-op: the clock is real time plus offset
    await ramp.clock.advance(deadline - ramp.clock.time() - 1)
    assert await ramp.sweep.expire_due() == []
    reads = ramp.fake.calls["transfer"]
    await ramp.clock.advance(2)
    ramp.fake.down = True  # no verdict without the last read
    assert await ramp.sweep.expire_due() == []
    assert status(record) == "AWAITING_FUNDS"
    ramp.fake.down = False
    await ramp.clock.advance(9)
    assert await ramp.sweep.expire_due() == [record]
    assert ramp.fake.calls["transfer"] == reads + 2
    assert status(record) == "EXPIRED"
    assert ramp.sweep.next_expiry() is None
    ramp.move(record, "funds_received")
    await ramp.clock.advance(300)
    await ramp.sweep.sweep()
    assert (record.status, record.provider_status) == ("EXPIRED", "funds_received")
    ramp.move(record, "completed", pay_out={**record.pay_out, "blockchain_hash": "0xfeed"})
    await ramp.clock.advance(300)
    await ramp.sweep.sweep()
    assert status(record) == "COMPLETED"
    assert record.pay_out["blockchain_hash"] == "0xfeed"
    kinds = [(e.kind, e.status) for e in ramp.outbox.find(transfer_id=record.id)]
    assert kinds == [
        ("instructions", "AWAITING_FUNDS"),
        ("result", "EXPIRED"),
        ("funds_received", "EXPIRED"),
        ("result", "COMPLETED"),
    ]


async def test_expired_is_rechecked_for_three_days_only() -> None:
    ramp = Ramp()
    await ramp.verified()
    record = (await ramp.create()).record
    await ramp.clock.advance(record.expires_at + 601 - ramp.clock.time())
    await ramp.sweep.expire_due()
    assert status(record) == "EXPIRED"
    await ramp.clock.advance(3 * 86400 - 700)
    assert (await ramp.sweep.sweep()).transfers_checked == 1
    await ramp.clock.advance(600)
    assert (await ramp.sweep.sweep()).transfers_checked == 0


async def test_a_read_that_finds_funds_prevents_expiry() -> None:
    ramp = Ramp()
    await ramp.verified()
    record = (await ramp.create()).record
    ramp.move(record, "funds_received")
    await ramp.clock.advance(record.expires_at + 601 - ramp.clock.time())
    assert await ramp.sweep.expire_due() == []
    assert status(record) == "PROCESSING"


async def test_stalled_payout_retry() -> None:
    ramp = Ramp()
    await ramp.verified()
    created = await ramp.create()
    record = created.record
    not_stuck = await ramp.retries.check(record.id, ramp.call())
    assert (not_stuck.eligible, not_stuck.reason) == (False, "not_stuck")
    ramp.move(record, "funds_converted")
    ramp.fake.customers[record.customer_id or ""].balance = record.target_amount
    await ramp.clock.advance(9)
    early = await ramp.retries.check(record.id, ramp.call())
    assert (early.eligible, early.reason) == (False, "too_soon")
    assert early.stuck_since is not None
    assert abs(early.wait_ms - (1200_000 - early.stuck_for_ms)) <= 1
    assert early.covers
    with pytest.raises(InvalidRequest) as refused:
        await ramp.retries.retry(record.id, ramp.call())
    assert refused.value.details == {"reason": "too_soon"}
    await ramp.clock.advance(1200)
    ready = await ramp.retries.check(record.id, ramp.call())
    assert (ready.eligible, ready.reason, ready.wait_ms) == (True, None, 0)
    assert (ready.required.amount, ready.required.currency) == (record.target_amount, "NGNS")
    retried = await ramp.retries.retry(record.id, ramp.call())
    assert retried.record.retry_of_id == record.id
    assert retried.record.id != record.id
    assert retried.claim_token
    assert ramp.store.records[record.id].status == "SENDING"  # the original keeps its row
    again = await ramp.retries.check(record.id, ramp.call())
    assert again.reason == "retry_in_flight"
    stranger = Account.create()
    with pytest.raises(NotFound):
        await ramp.retries.check(
            record.id, ramp.call(wallet=stranger.address, proof=ramp.proof(account=stranger))
        )


async def test_parallel_retries_book_one() -> None:
    ramp = Ramp()
    await ramp.verified()
    record = (await ramp.create()).record
    ramp.move(record, "funds_converted")
    await ramp.clock.advance(9)
    await ramp.retries.check(record.id, ramp.call())  # the re-check sees funds_converted
    await ramp.clock.advance(1201)
    results = await asyncio.gather(
        *(ramp.retries.retry(record.id, ramp.call()) for _ in range(4)), return_exceptions=True
    )
    booked = [r for r in results if not isinstance(r, BaseException)]
    assert len(booked) == 1
    assert all(
        isinstance(r, InvalidRequest) and r.details == {"reason": "retry_in_flight"}
        for r in results
        if r not in booked
    )
    assert ramp.fake.calls["retry_payout"] == 1


async def test_business_profile_sell_has_no_profile_for_a_retry() -> None:
    ramp = Ramp()
    await ramp.customers.register(ramp.call(), replace_person())
    record = (await ramp.create("sell")).record
    ramp.move(record, "funds_converted")
    await ramp.clock.advance(1300)
    found = await ramp.retries.check(record.id, ramp.call())
    assert found.reason == "no_profile"
    assert found.balance.available == "0"


def replace_person() -> PersonDetails:
    return PersonDetails(first_name="Only")


class TinySmtp:
    """Just enough SMTP for smtplib.send_message: records each message's data."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._session, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"220 tiny\r\n")
        data: list[str] = []
        in_data = False
        while line := await reader.readline():
            text = line.decode().rstrip("\r\n")
            if in_data:
                if text == ".":
                    in_data = False
                    self.messages.append("\n".join(data))
                    writer.write(b"250 queued\r\n")
                else:
                    data.append(text)
            elif text.upper().startswith("DATA"):
                in_data, data = True, []
                writer.write(b"354 go\r\n")
            elif text.upper().startswith("QUIT"):
                writer.write(b"221 bye\r\n")
                await writer.drain()
                break
            else:
                writer.write(b"250 ok\r\n")
            await writer.drain()
        writer.close()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


async def test_smtp_delivery_and_failure_keep_the_outbox() -> None:
    ramp = Ramp()
    smtp = TinySmtp()
    port = await smtp.start()
    target = SmtpTarget.parse(f"127.0.0.1:{port}")
    outbox = Outbox(ramp.clock, ramp.outbox.random, "http://front.test", target)
    ramp.transfers.outbox = outbox
    worker = asyncio.create_task(outbox.deliver_forever())
    try:
        await ramp.verified()
        created = await ramp.create(email="smtp@example.com")
        await outbox.drain()
        [email] = outbox.emails
        assert email.smtp == "sent"
        [message] = smtp.messages
        assert "To: smtp@example.com" in message
        assert f"#claim={created.claim_token}" in message
        await smtp.stop()
        await ramp.create(email="smtp@example.com", intent_key="intent-key-smtp-2")
        await outbox.drain()
        assert outbox.emails[-1].smtp == "failed"
        assert outbox.emails[-1].smtp_error
        assert len(outbox.emails) == 2
    finally:
        worker.cancel()
        with pytest.raises(asyncio.CancelledError):
            await worker
