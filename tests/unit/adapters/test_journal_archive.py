"""The request journal beyond its rings (services/sim/journal.py with the history database's
adapters/store/journal_archive.py): every request and frame reaches the file in batches, secrets
redacted before a row exists; lists search memory then the file, newest first, without
duplicates, and page by cursor; the retention and a clear forget by query; numbering resumes
after a restart."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simulator.adapters.store.history_db import HistoryDb
from simulator.adapters.store.history_writer import expand_row
from simulator.adapters.store.journal_archive import SqliteJournalArchive
from simulator.services.sim import journal_search
from simulator.services.sim.journal import RequestJournal
from simulator.services.sim.journal_search import (
    FrameFilter,
    JournalFilter,
    headers_view,
    key_of,
)
from tests.unit.state.journal_fields import request_fields

API_KEY = "tx_test_6ae2edaf29e7.X7j-oebgi6fxuM9RKuWBNDA-zhbeRA0s_35baqF6d1s"
KEY_SECRET = API_KEY.partition(".")[2]
WEBHOOK_SECRET = "whsec_5kq2Yh7Xc9PzL3mN8vB1rT4wQ6eA0sD2"
SIGNATURE = "0x" + "5e" * 65
CLAIM_TOKEN = "rfqc_abcdefABCDEF1234567890"


class Ticks:
    """Simulator time that moves one second per reading."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Iterator[HistoryDb]:
    db = HistoryDb(tmp_path / "history.sqlite3")
    yield db
    db.close()


def journal_on(
    db: HistoryDb, capacity: int = 3, stream_capacity: int = 3, now: float = 1_000.0
) -> RequestJournal:
    return RequestJournal(
        Ticks(now),
        capacity=capacity,
        stream_capacity=stream_capacity,
        archive=SqliteJournalArchive(db),
    )


def record(journal: RequestJournal, n: int, **fields: Any) -> None:
    journal.record(**{**request_fields(n, journal.now()), **fields})


def ids(journal: RequestJournal, **where: Any) -> list[str]:
    return [e.request_id for e in journal.requests(JournalFilter(**where))]


def test_no_secret_reaches_the_file(db: HistoryDb, tmp_path: Path) -> None:
    journal = journal_on(db)
    body = json.dumps({"url": "https://maker.example/hook", "signingSecret": WEBHOOK_SECRET})
    request_body = json.dumps({"order": {"signature": SIGNATURE}, "claimToken": CLAIM_TOKEN})
    record(
        journal,
        0,
        method="POST",
        path="/v2/webhooks",
        query=f"apiKey={API_KEY}",
        key_prefix="tx_test_6ae2edaf29e7",
        request_type="application/json",
        request_body=request_body.encode(),
        request_size=len(request_body),
        request_headers={"X-API-Key": API_KEY, "Authorization": f"Bearer {API_KEY}", "A": "1"},
        response_body=body.encode(),
        response_size=len(body),
        response_headers={"Set-Cookie": f"s={KEY_SECRET}", "X-Signature": SIGNATURE},
    )
    journal.record_frame("tx_test_a", "0xAbC", "in", json.dumps({"signature": SIGNATURE}))
    journal.save()
    db.flush()
    raw = (tmp_path / "history.sqlite3").read_bytes() + (
        tmp_path / "history.sqlite3-wal"
    ).read_bytes()
    with sqlite3.connect(tmp_path / "history.sqlite3") as conn:
        rows = [
            *conn.execute("SELECT * FROM journal_requests"),
            *conn.execute("SELECT * FROM journal_frames"),
        ]
    assert len(rows) == 2
    stored = "\n".join(
        expand_row(v).decode() if isinstance(v, bytes) else str(v) for r in rows for v in r
    )
    assert "tx_test_6ae2edaf29e7" in stored  # the public prefix stays: the row is there
    assert "https://maker.example/hook" in stored
    for secret in (KEY_SECRET, WEBHOOK_SECRET, SIGNATURE[2:], CLAIM_TOKEN[5:]):
        assert secret not in stored
        assert secret.encode() not in raw
    assert "x-api-key" not in stored.lower()
    assert "authorization" not in stored.lower()
    assert "set-cookie" not in stored.lower()


def test_lists_search_memory_then_the_file_and_page_by_cursor(db: HistoryDb) -> None:
    journal = journal_on(db, capacity=3)
    for n in range(10):
        record(journal, n, status=500 if n % 2 else 200)
        if n == 6:
            db.flush()  # some committed, the rest still pending: both are found
    assert ids(journal, limit=4) == ["req_9", "req_8", "req_7", "req_6"]
    assert ids(journal, status=500) == ["req_9", "req_7", "req_5", "req_3", "req_1"]
    assert ids(journal, request_id="req_0") == ["req_0"]
    # By number, in the file (req_0) and in memory (req_9): what a console link opens.
    for n in (0, 9):
        (entry,) = journal.requests(JournalFilter(request_id=f"req_{n}"))
        assert ids(journal, seq=entry.seq) == [f"req_{n}"]
    assert ids(journal, seq=10_000) == []
    seen: list[str] = []
    before = None
    while True:
        page = journal.requests(JournalFilter(limit=3, before=before))
        seen += [e.request_id for e in page]
        if len(page) < 3:
            break
        before = key_of(page[-1])
    assert seen == [f"req_{n}" for n in reversed(range(10))]  # no repeat, no gap
    first = journal.requests(JournalFilter(request_id="req_1"))[0]
    assert ids(journal, since=first.at, until=first.at + 2) == ["req_2", "req_1"]


def test_requests_read_back_from_the_file_keep_bodies_and_headers(db: HistoryDb) -> None:
    journal = journal_on(db, capacity=1)
    body = b'{"a": 1}'
    record(
        journal,
        0,
        method="POST",
        path="/v2/rfq/request",
        request_type="application/json",
        request_body=body,
        request_size=len(body),
        request_headers={"Content-Type": "application/json"},
    )
    record(journal, 1)
    journal.save()
    db.flush()  # req_0: neither in the ring nor pending, read from the file
    [old] = journal.requests(JournalFilter(request_id="req_0"))
    assert (old.method, old.path, old.request_body) == ("POST", "/v2/rfq/request", body)
    assert headers_view(old.request_headers) == [("Content-Type", "application/json")]
    assert ids(journal, path="/v2/rfq/*") == ["req_1", "req_0"]
    assert ids(journal, path="/v2/rfq/request", method="post") == ["req_0"]


def test_a_frame_names_its_rfq_after_its_rfq_frame_left_the_ring(db: HistoryDb) -> None:
    journal = journal_on(db, stream_capacity=2)
    journal.record_frame("tx_test_a", "0xAbC", "out", '{"type":"rfq","quoteId":"q1","rfqId":"r1"}')
    journal.save()  # the rfq frame and the quote below go in separate batches
    for _ in range(3):
        journal.record_frame("tx_test_b", "0xDef", "in", '{"type":"levels"}')
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"quote","quoteId":"q1"}')
    db.flush()
    journal.save()
    db.flush()
    found = journal.frames(FrameFilter(rfq_id="r1"))
    assert [(json.loads(f.text)["type"], rfq) for f, rfq in found] == [
        ("quote", "r1"),
        ("rfq", "r1"),
    ]
    by_wallet = journal.frames(FrameFilter(makers=frozenset({"0xabc"}), direction="out"))
    assert [f.wallet for f, _ in by_wallet] == ["0xAbC"]  # names as given, matched any case
    everything = journal.frames(FrameFilter(limit=10))
    assert [f.seq for f, _ in everything] == [5, 4, 3, 2, 1]
    page = journal.frames(FrameFilter(limit=2, before=key_of(everything[1][0])))
    assert [f.seq for f, _ in page] == [3, 2]


def test_the_retention_forgets_by_time_in_memory_and_in_the_file(db: HistoryDb) -> None:
    journal = journal_on(db, capacity=2)
    for n in range(5):
        record(journal, n)
        journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"levels"}')
    third = journal.requests(JournalFilter(request_id="req_2"))[0]
    journal.forget_before(third.at)
    assert ids(journal) == ["req_4", "req_3", "req_2"]
    assert all(f.at >= third.at for f, _ in journal.frames(FrameFilter()))
    db.flush()
    (rows,) = db.read("SELECT count(*) FROM journal_requests")[0]
    assert rows == 3


def test_a_clear_forgets_memory_and_file_and_numbers_go_on(db: HistoryDb) -> None:
    journal = journal_on(db, capacity=2)
    for n in range(4):
        record(journal, n)
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"levels"}')
    assert journal.clear() == 4
    assert ids(journal) == []
    assert journal.frames(FrameFilter()) == []
    assert db.read("SELECT count(*) FROM journal_frames")[0][0] == 0
    record(journal, 9)
    assert journal.requests(JournalFilter())[0].seq == 6


def test_numbering_resumes_after_a_restart_on_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "kept.sqlite3"
    first = HistoryDb(path)
    journal = journal_on(first)
    for n in range(5):
        record(journal, n)
    journal.record_frame("tx_test_a", "0xAbC", "in", '{"type":"levels"}')
    journal.save()
    first.close()
    again = HistoryDb(path)
    try:
        journal = journal_on(again, now=2_000.0)
        journal.resume()
        record(journal, 7)
        assert [(e.request_id, e.seq) for e in journal.requests(JournalFilter(limit=2))] == [
            ("req_7", 7),
            ("req_4", 5),
        ]
    finally:
        again.close()


def test_every_filter_and_cursor_is_an_index_range(
    db: HistoryDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many rows a day holds, a page reads along an index ending in (at, seq): no
    query sorts what matched (SQLite's plan names no temporary B-tree)."""
    archive = SqliteJournalArchive(db)
    read = db.read
    asked: list[tuple[str, list[Any]]] = []

    def recorded(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        asked.append((sql, list(params)))
        return read(sql, params)

    monkeypatch.setattr(db, "read", recorded)
    cursor = (1_000.0, 7)
    for where in (
        JournalFilter(),
        JournalFilter(before=cursor),
        JournalFilter(request_id="req_1", before=cursor),
        JournalFilter(path="/v2/rfq/request", before=cursor),
        JournalFilter(path="/v2/rfq/*", before=cursor),
        JournalFilter(method="post", status=400, since=1.0, until=2.0, before=cursor),
        JournalFilter(before=cursor, after=(900.0, 3), below_seq=5),
    ):
        archive.requests(where)
    for frames in (
        FrameFilter(before=cursor),
        FrameFilter(makers=frozenset({"tx_test_a", "0xabc"}), before=cursor),
        FrameFilter(rfq_id="rfq_1", direction="in", before=cursor),
    ):
        archive.frames(frames)
    assert len(asked) == 13  # by maker: one range per name and column
    for sql, params in asked:
        plan = " | ".join(row[3] for row in read(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "TEMP B-TREE" not in plan, (sql, plan)
        assert " INDEX journal_" in plan, (sql, plan)


def test_the_file_is_not_read_for_what_the_ring_answers(db: HistoryDb) -> None:
    journal = journal_on(db, capacity=4)
    for n in range(10):
        record(journal, n)
    journal.save()
    db.flush()
    archive = journal.archive
    assert isinstance(archive, SqliteJournalArchive)
    from_file: list[list[str]] = []
    ask = archive.requests

    def spied(where: JournalFilter) -> list[Any]:
        found = ask(where)
        from_file.append([e.request_id for e in found])
        return found

    archive.requests = spied  # type: ignore[method-assign]
    assert ids(journal, limit=3) == ["req_9", "req_8", "req_7"]
    assert ids(journal, limit=6) == ["req_9", "req_8", "req_7", "req_6", "req_5", "req_4"]
    # The ring's rows never come from the file; what is older, up to the page's size.
    assert from_file == [[], ["req_5", "req_4", "req_3", "req_2", "req_1", "req_0"]]


def test_header_values_are_redacted_in_one_pass_or_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    headers = {"X-Note": f"key {API_KEY}", "X-API-Key": API_KEY, "Accept": "*/*"}
    assert headers_view(headers) == [
        ("X-Note", "key tx_test_6ae2edaf29e7.<redacted>"),
        ("Accept", "*/*"),
    ]
    # A pattern that took a line break would join two values: each is then redacted alone.
    monkeypatch.setattr(journal_search, "redact", lambda text: text.replace("\n*", " *"))
    assert headers_view(headers) == [("X-Note", f"key {API_KEY}"), ("Accept", "*/*")]
