"""What the request journal's history costs (docs/performance.md "Hold a day, issue 33"):

- on the request path: `RequestJournal.record` with the archive attached and without it;
- on the history database's sender thread: building one request row and one frame row
  (redaction, JSON, a frame's RFQ), the CPU `time.thread_time` counts on that thread's work;
- handing entries over one by one or in batches of `SAVE_BATCH`: the request path's CPU and
  the time until the writer process has committed them all;
- a list's read once they are in the file (a page from the middle, one by id).

python -m bench.journal_rows [--count N]"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.journal_archive import SqliteJournalArchive, request_row
from simulator.services.sim import journal as journal_module
from simulator.services.sim.journal import RequestJournal
from simulator.services.sim.journal_search import JournalEntry, JournalFilter, StreamEntry, key_of

KEY = "tx_test_6ae2edaf29e7.X7j-oebgi6fxuM9RKuWBNDA-zhbeRA0s_35baqF6d1s"
RFQ_FRAME = json.dumps(
    {
        "type": "rfq",
        "rfqId": "rfq_01JD7ZK3M4N5P6Q7R8S9T0V1W2",
        "quoteId": "mq_01JD7ZK3M4N5P6Q7R8S9T0V1W2",
        "chainId": 97,
        "sellToken": "0x" + "ab" * 20,
        "buyToken": "0x" + "cd" * 20,
        "sellAmount": "10000000",
        "taker": "0x" + "ef" * 20,
        "replyBy": "2026-11-29T04:00:00.750Z",
    }
)
LEVELS_FRAME = json.dumps(
    {
        "type": "levels",
        "chainId": 97,
        "pairs": [
            {"sellToken": "0x" + "ab" * 20, "buyToken": "0x" + "cd" * 20, "levels": [["1", "2"]]}
        ],
    }
)


def firm_request(seq: int) -> JournalEntry:
    """A firm quote's request as the journal records it: its body, headers, and an answer
    holding a claim token and signed orders (about 1.5 KB)."""
    body = json.dumps(
        {
            "chainId": 97,
            "sellToken": "0x" + "ab" * 20,
            "buyToken": "0x" + "cd" * 20,
            "sellAmount": "10000000",
            "taker": "0x" + "ef" * 20,
        }
    ).encode()
    order = {
        "maker": "0x" + "12" * 20,
        "signature": "0x" + "5e" * 65,
        "orderHash": "0x" + "34" * 32,
        "buyAmount": "9990000",
        "deadline": 1_790_000_000,
    }
    answer = json.dumps(
        {
            "data": {
                "rfqId": "rfq_01JD7ZK3M4N5P6Q7R8S9T0V1W2",
                "status": "quoted",
                "claimToken": "rfqc_" + "a1" * 16,
                "quote": {"orders": [order, order]},
            }
        }
    ).encode()
    return JournalEntry(
        seq=seq,
        request_id=f"req_{seq:024d}",
        at=1_790_000_000.0 + seq / 100,
        method="POST",
        path="/v2/rfq/request",
        query="",
        status=200,
        latency_ms=3.2,
        key_prefix="tx_test_6ae2edaf29e7",
        request_type="application/json",
        request_body=body,
        request_size=len(body),
        response_body=answer,
        response_size=len(answer),
        request_headers={
            "Host": "127.0.0.1:8080",
            "Authorization": f"Bearer {KEY}",
            "Content-Type": "application/json",
            "Content-Length": str(len(body)),
            "User-Agent": "python-httpx/0.27",
            "Accept": "*/*",
        },
        response_headers={
            "Content-Type": "application/json",
            "X-Request-Id": f"req_{seq:024d}",
            "X-RateLimit-Remaining": "99",
            "Server-Timing": "app;dur=3.2",
        },
    )


def per_call_us(count: int, build: Callable[[int], Any]) -> float:
    """CPU of this thread per call, in µs (the best of three rounds)."""
    best = float("inf")
    for _ in range(3):
        started = time.thread_time()
        for n in range(count):
            build(n)
        best = min(best, time.thread_time() - started)
    return best / count * 1e6


def page_reads_ms(journal: RequestJournal, count: int) -> dict[str, float]:
    """Milliseconds per list read once `count` requests are in the file (best of 20): a page
    of 100 from the file's middle, one request by id, the ring's first page."""
    middle = journal.requests(JournalFilter(request_id=f"req_{count // 2:024d}"))[0]
    reads = {
        "100 from the middle, by cursor": JournalFilter(limit=100, before=key_of(middle)),
        "one by request_id": JournalFilter(request_id=f"req_{count // 3:024d}"),
        "newest 100 (the ring's)": JournalFilter(limit=100),
    }
    timings = {}
    for name, where in reads.items():
        best = float("inf")
        for _ in range(20):
            started = time.perf_counter()
            journal.requests(where)
            best = min(best, time.perf_counter() - started)
        timings[name] = best * 1000
    return timings


def handed_over(count: int, batch: int) -> tuple[float, float, dict[str, float]]:
    """(µs of request-path CPU per request, s until all committed, list reads) with the
    journal saving every `batch` entries."""
    with tempfile.TemporaryDirectory() as directory:
        db = HistoryDb(Path(directory) / "bench.sqlite3")
        try:
            db.open()
            journal = RequestJournal(
                lambda: 0.0, capacity=1000, stream_capacity=2000, archive=SqliteJournalArchive(db)
            )
            entries = [vars(firm_request(n)) for n in range(count)]
            for fields in entries:
                del fields["seq"]
            previous = journal_module.SAVE_BATCH
            journal_module.SAVE_BATCH = batch
            try:
                wall, cpu = time.perf_counter(), time.thread_time()
                for fields in entries:
                    journal.record(**fields)
                journal.save()
                cpu = time.thread_time() - cpu
                db.flush(timeout=300)
                wall = time.perf_counter() - wall
            finally:
                journal_module.SAVE_BATCH = previous
            return cpu / count * 1e6, wall, page_reads_ms(journal, count)
        finally:
            db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    count = parser.parse_args().count
    archive = SqliteJournalArchive(HistoryDb())  # rows only: nothing is opened
    requests = [firm_request(n) for n in range(count)]
    rfq_frames = [StreamEntry(n, 0.0, "tx_test_a", "0xAbC", "out", RFQ_FRAME) for n in range(count)]
    levels = [StreamEntry(n, 0.0, "tx_test_a", "0xAbC", "in", LEVELS_FRAME) for n in range(count)]
    bare = RequestJournal(lambda: 0.0, capacity=1000, stream_capacity=2000)
    fields = vars(firm_request(0)) | {}
    del fields["seq"]
    print(f"request row (firm quote, {len(json.dumps(vars(requests[0]), default=str))} B):")
    print(f"  sender thread  {per_call_us(count, lambda n: request_row(requests[n])):7.1f} µs")
    print(
        f"rfq frame row    {per_call_us(count, lambda n: archive.frame_row(rfq_frames[n])):7.1f} µs"
    )
    print(f"levels frame row {per_call_us(count, lambda n: archive.frame_row(levels[n])):7.1f} µs")
    print(
        f"record, no archive          {per_call_us(count, lambda n: bare.record(**fields)):5.2f} µs"
    )
    for batch in (1, journal_module.SAVE_BATCH):
        cpu, wall, reads = handed_over(count, batch)
        print(
            f"record + save every {batch:>3}: {cpu:5.2f} µs on the request path; "
            f"{count} committed in {wall:.2f} s ({count / wall:,.0f}/s)"
        )
    for name, ms in reads.items():
        print(f"GET /_sim/requests, {name}: {ms:.2f} ms")


if __name__ == "__main__":
    main()
