"""Finished webhook deliveries in the history file (adapters/store/delivery_archive.py behind the
outbox of services/webhooks/outbox.py): readable before and after the writer commits, listed
with what memory holds in creation order and each once, forgotten by their last attempt with one
query, cleared, put back by a snapshot's load; and no signing secret ever reaches the file."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.adapters.store.delivery_archive import SqliteDeliveryArchive
from simulator.adapters.store.history_db import HistoryDb, HistoryState
from simulator.adapters.store.history_writer import expand_row
from simulator.randomness import RandomSource
from simulator.runtime.webhooks import build_webhooks
from simulator.services.webhooks.model import Attempt, Delivery
from simulator.services.webhooks.outbox import DeliveryOutbox
from simulator.settings import WebhookSettings
from tests.unit.webhook_fakes import (
    FrozenClock,
    RecordingCertificates,
    ScriptedTransport,
    rfq_event,
    settle,
)

T0 = 1_800_000_000.0


@pytest.fixture
def db(tmp_path: Path) -> Iterator[HistoryDb]:
    db = HistoryDb(tmp_path / "history.sqlite3")
    yield db
    db.close()


def delivery(n: int, *, endpoint: str = "whe_1", created_at: float = T0) -> Delivery:
    return Delivery(
        delivery_id=f"whd_{n:02d}",
        endpoint_id=endpoint,
        partner_id="ptn_a",
        event_id=f"rfq.expired:rfq_{n:02d}",
        event_type="rfq.expired",
        body=b'{"id":"rfq.expired:rfq_%02d"}' % n,
        created_at=created_at,
    )


def finish(outbox: DeliveryOutbox, taken: Delivery, outcome: str, at: float) -> None:
    number = outbox.start_attempt(taken)
    status = 200 if outcome == "succeeded" else 503
    attempt = Attempt(number, at, 2.0, status, None, outcome)  # type: ignore[arg-type]
    outbox.finish_attempt(taken, attempt, at, scheduled=True)
    outbox.release(taken)


def test_a_finished_delivery_is_read_back_before_and_after_the_commit(db: HistoryDb) -> None:
    archive = SqliteDeliveryArchive(db)
    outbox = DeliveryOutbox((0,), archive)
    outbox.add(delivery(1))
    (taken,) = outbox.take_due(T0)
    finish(outbox, taken, "succeeded", T0 + 1)
    assert list(outbox) == []  # out of memory
    before = outbox.get("whd_01")
    assert before is not None
    assert before is not taken  # a copy: the row being written is never changed
    db.flush()
    after = outbox.get("whd_01")
    assert after is not None
    for read in (before, after):
        assert (read.status, read.body, read.serial) == ("delivered", taken.body, 1)
        assert [(a.number, a.response_status) for a in read.attempts] == [(1, 200)]
    assert db.read("SELECT status, endpoint_id, ended_at FROM webhook_deliveries") == [
        ("delivered", "whe_1", T0 + 1)
    ]


def test_lists_merge_memory_and_file_in_creation_order_each_once(db: HistoryDb) -> None:
    archive = SqliteDeliveryArchive(db)
    outbox = DeliveryOutbox((0, 60), archive)
    for n in range(8):  # two per creation time: the serial keeps their order
        outbox.add(delivery(n, endpoint=f"whe_{n % 2}", created_at=T0 + n // 2))
    taken = outbox.take_due(T0 + 10)
    for d in taken[:5]:  # 0-2 are delivered; 3, 4 failed once and wait for a retry
        finish(outbox, d, "failed" if d.serial > 3 else "succeeded", T0 + 10)
    db.flush()
    finish(outbox, taken[5], "succeeded", T0 + 11)  # pending in the archive, not committed
    ids = [d.delivery_id for d in outbox.find()]
    assert ids == [f"whd_{n:02d}" for n in range(8)]
    assert [d.delivery_id for d in outbox.find(limit=3)] == ["whd_05", "whd_06", "whd_07"]
    assert [d.delivery_id for d in outbox.find(endpoint_id="whe_1", limit=2)] == [
        "whd_05",
        "whd_07",
    ]
    assert [d.delivery_id for d in outbox.find(status="delivered")] == [
        "whd_00",
        "whd_01",
        "whd_02",
        "whd_05",
    ]
    assert [d.delivery_id for d in outbox.find(event_id="rfq.expired:rfq_05")] == ["whd_05"]
    # A finished one held for a redelivery is listed from memory, not twice.
    held = outbox.hold("whd_00")
    assert held is not None
    assert [d.delivery_id for d in outbox.find()].count("whd_00") == 1
    outbox.release(held)


def test_finished_deliveries_are_forgotten_by_their_last_attempt(db: HistoryDb) -> None:
    archive = SqliteDeliveryArchive(db)
    outbox = DeliveryOutbox((0,), archive)
    for n in range(3):
        outbox.add(delivery(n))
    for n, d in enumerate(outbox.take_due(T0)):
        finish(outbox, d, "succeeded", T0 + 100 * n)
    db.flush()
    outbox.add(delivery(9))  # pending: never forgotten
    outbox.forget_finished_before(T0 + 150)
    assert [d.delivery_id for d in outbox.find()] == ["whd_02", "whd_09"]  # at once
    assert outbox.get("whd_00") is None
    db.flush()
    assert db.read("SELECT id FROM webhook_deliveries") == [("whd_02",)]


def test_clear_forgets_every_finished_delivery(db: HistoryDb) -> None:
    archive = SqliteDeliveryArchive(db)
    outbox = DeliveryOutbox((0,), archive)
    outbox.add(delivery(1))
    (taken,) = outbox.take_due(T0)
    finish(outbox, taken, "succeeded", T0)
    archive.clear()
    assert outbox.find() == []
    assert db.read("SELECT count(*) FROM webhook_deliveries") == [(0,)]


def test_a_snapshot_of_the_file_carries_the_finished_deliveries(db: HistoryDb) -> None:
    archive = SqliteDeliveryArchive(db)
    outbox = DeliveryOutbox((0,), archive)
    state = HistoryState(db, [archive.restored])
    outbox.add(delivery(1))
    (taken,) = outbox.take_due(T0)
    finish(outbox, taken, "failed", T0)
    saved = state.dump()
    archive.clear()
    outbox.add(delivery(2))
    (later,) = outbox.take_due(T0)
    finish(outbox, later, "succeeded", T0)
    state.load(saved)
    assert [(d.delivery_id, d.status) for d in outbox.find()] == [("whd_01", "failed")]


async def test_no_signing_secret_reaches_the_file(db: HistoryDb) -> None:
    clock = FrozenClock()
    webhooks = build_webhooks(
        WebhookSettings(),
        clock,
        RandomSource(7),
        transport=ScriptedTransport(clock, default=503),
        certificates=RecordingCertificates(),
        archive=SqliteDeliveryArchive(db),
    )
    endpoint = webhooks.registry.create("ptn_a", "https://a.example/hook", ["rfq.expired"])
    worker = asyncio.create_task(webhooks.worker.run())
    try:
        webhooks.dispatcher.publish(rfq_event())
        await settle(lambda: len(webhooks.outbox.find()[0].attempts) == 1)
        webhooks.delete_endpoint("ptn_a", endpoint.endpoint_id)  # cancelled: to the file
        assert list(webhooks.outbox) == []
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
    db.flush()
    with contextlib.closing(sqlite3.connect(db.path)) as raw:
        rows = raw.execute("SELECT * FROM webhook_deliveries").fetchall()
    assert len(rows) == 1
    *columns, blob = rows[0]
    text = expand_row(blob).decode() + repr(columns)
    assert "cancelled" in text
    secret = endpoint.signing_secret
    assert secret.startswith("whsec_")
    assert secret not in text
    assert secret.encode().hex() not in text  # nor as the hex bytes are written
    assert secret[len("whsec_") :] not in text
