"""What a finished webhook delivery costs on its way to the history file, per delivery, in one
process: the event loop's share (`SqliteDeliveryArchive.put`: a copy and a queue entry), the
history writer's sender thread's share (`delivery_rows`: the row's columns and its JSON), and
the writer process's share (compressing that JSON), each as thread CPU time; then what reading
them back costs the event loop: `GET /_sim/webhooks/deliveries`' query through the outbox over a
file holding `--file-rows` of them (wall time, best of five).

python -m bench.delivery_rows [--count N] [--file-rows N]

The deliveries are an rfq.expired event as the spec lists its fields, with three attempts (two
failed, one acknowledged), built fresh for each run; the rows are built in batches of 500, as
the sender thread hands them over."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from simulator.adapters.store.delivery_archive import SqliteDeliveryArchive, delivery_rows
from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.history_writer import compress_row
from simulator.services.webhooks.model import Attempt, Delivery, DeliveryFilter
from simulator.services.webhooks.outbox import DeliveryOutbox, encode_body

BATCH = 500
T0 = 1_800_000_000.0


def _delivery(n: int) -> Delivery:
    rfq_id = f"rfq_{n:020d}"
    body = {
        "id": f"rfq.expired:{rfq_id}",
        "type": "rfq.expired",
        "created": "2027-01-15T08:00:00.000Z",
        "data": {
            "apiVersion": 2,
            "rfq": {
                "id": rfq_id,
                "chainId": 97,
                "sellToken": "0x" + "a1" * 20,
                "buyToken": "0x" + "b2" * 20,
                "sellAmount": "10000000",
                "buyAmount": "9995000",
                "feeAmount": "5000",
                "taker": "0x" + "c3" * 20,
                "txHash": None,
                "filledAt": None,
                "failReason": None,
            },
        },
    }
    attempts = [
        Attempt(1, T0, 15000.0, None, "timeout", "failed"),
        Attempt(2, T0 + 20, 3.2, 503, None, "failed"),
        Attempt(3, T0 + 325, 2.7, 200, None, "succeeded"),
    ]
    return Delivery(
        delivery_id=f"whd_{n:012d}",
        endpoint_id="whe_000000000001",
        partner_id="ptn_bench",
        event_id=str(body["id"]),
        event_type="rfq.expired",
        body=encode_body(body),
        created_at=T0,
        status="delivered",
        scheduled_attempts=3,
        attempt_count=3,
        attempts=attempts,
        serial=n,
    )


def _cpu_us(work: list[list[Delivery]], step: Callable[[list[Delivery]], object]) -> float:
    """Thread CPU per delivery (µs) of `step` over every batch."""
    began = time.thread_time()
    for batch in work:
        step(batch)
    return (time.thread_time() - began) / sum(len(b) for b in work) * 1e6


def measure(count: int) -> dict[str, float]:
    batches = [[_delivery(n + i) for i in range(BATCH)] for n in range(0, count, BATCH)]
    sender = _cpu_us(batches, delivery_rows)
    rows = [delivery_rows(batch) for batch in batches]
    began = time.thread_time()
    for built in rows:
        for row in built:
            compress_row(row[-1])
    writer = (time.thread_time() - began) / count * 1e6
    sizes = [len(compress_row(row[-1])) for row in rows[0]]
    with tempfile.TemporaryDirectory() as tmp:
        db = HistoryDb(Path(tmp) / "history.sqlite3")
        try:
            archive = SqliteDeliveryArchive(db)
            db.open()

            def put_one_by_one(batch: list[Delivery]) -> None:
                for finished in batch:  # as the outbox does, each when it finishes
                    archive.put([finished])

            loop = _cpu_us(batches, put_one_by_one)
            db.flush()
        finally:
            db.close()
    return {
        "loop_us": loop,
        "sender_us": sender,
        "writer_us": writer,
        "json_bytes": statistics.mean(len(row[-1]) for row in rows[0]),
        "stored_bytes": statistics.mean(sizes),
    }


def reads(file_rows: int) -> dict[str, float]:
    """Milliseconds (best of five) of the list's reads over a file of `file_rows` deliveries,
    one created a second after the other, all to one endpoint."""
    wanted = {
        "newest 1000": DeliveryFilter(),
        "newest 200 (the console)": DeliveryFilter(),
        "newest 1000 of the endpoint": DeliveryFilter(endpoint_id="whe_000000000001"),
        "one event's": DeliveryFilter(event_id=f"rfq.expired:rfq_{file_rows // 2:020d}"),
    }
    limits = {"newest 200 (the console)": 200, "one event's": 1000}
    with tempfile.TemporaryDirectory() as tmp:
        db = HistoryDb(Path(tmp) / "history.sqlite3")
        try:
            archive = SqliteDeliveryArchive(db)
            for start in range(0, file_rows, BATCH):
                batch = [_delivery(n) for n in range(start, min(start + BATCH, file_rows))]
                for delivery in batch:
                    delivery.created_at = T0 + delivery.serial
                archive.put(batch)
            db.flush()
            outbox = DeliveryOutbox((0,), archive)
            timings = {}
            for label, where in wanted.items():
                best = float("inf")
                for _ in range(5):
                    began = time.perf_counter()
                    outbox.find(
                        endpoint_id=where.endpoint_id,
                        event_id=where.event_id,
                        limit=limits.get(label, 1000),
                    )
                    best = min(best, time.perf_counter() - began)
                timings[label] = best * 1000
            return timings
        finally:
            db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--file-rows", type=int, default=100_000)
    args = parser.parse_args()
    runs = [measure(args.count) for _ in range(3)]
    for key in ("loop_us", "sender_us", "writer_us", "json_bytes", "stored_bytes"):
        values = ", ".join(f"{run[key]:.1f}" for run in runs)
        print(f"{key}: {values} (median {statistics.median(r[key] for r in runs):.1f})")
    for label, ms in reads(args.file_rows).items():
        print(f"list, {label}, {args.file_rows} in the file: {ms:.1f} ms")


if __name__ == "__main__":
    main()
