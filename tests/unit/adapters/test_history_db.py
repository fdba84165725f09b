"""The history database (adapters/store/history_db.py) and the RFQ rows in it
(adapters/store/rfq_archive.py): what is put is readable at once, before the writer thread has
committed it, and from the file once it has; records are forgotten by their at-rest time; the
file survives a reopen; a file of another format is refused with one line; a temporary one is
removed on close."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import sqlite3
import struct
import subprocess
import termios
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from simulator.adapters.store.history_db import (
    BACKUPS_PREFIX,
    SCHEMA_VERSION,
    TEMP_PREFIX,
    HistoryDb,
    HistoryFileError,
    HistoryState,
    remove_orphans,
)
from simulator.adapters.store.history_writer import NICE, Built, compress_row, expand_row
from simulator.adapters.store.rfq_archive import SqliteRfqArchive
from simulator.services.rfq.archived import ArchivedRfq
from simulator.services.rfq.model import FilledOrder, QuoteState
from simulator.services.shared.fills import Fill
from simulator.services.shared.state import StateFormatError
from tests.unit.services.rfq.stored_records import record as stored


def archived(rfq_id: str, at_rest_since: float, order_hash: bytes | None = None) -> ArchivedRfq:
    quote = None
    if order_hash is not None:
        order = FilledOrder(
            "0xM", "mq_1", order_hash, b"\x02" * 64, b"\x03" * 65, 10, 9, 8, 1, 7, 2_000, 1_900.5
        )
        quote = QuoteState([order], 1_900.5, 2_000, 2_000, 10, 10**27, "0xT", "0xR")
    record = stored(rfq_id)
    record.requested_sell = 10
    record.claim_hash = b"\x04" * 32
    record.created_at = at_rest_since - 1
    record.reply_by = at_rest_since - 0.25
    record.status = "no_quote" if quote is None else "expired"
    record.quote = quote
    record.provisional_since = None if quote is None else at_rest_since
    if quote is None:
        record.created_at = at_rest_since
    fills = {}
    if order_hash is not None:
        fills[order_hash] = Fill(
            97, "0xab", 0, at_rest_since, order_hash, "0xM", "0xT", "0xB", 8, "0xS", 9, 1
        )
    return ArchivedRfq(record=record, fills=fills)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[HistoryDb]:
    history = HistoryDb(tmp_path / "history.sqlite3")
    yield history
    history.close()


def test_a_record_put_is_read_back_before_and_after_the_writer_commits(db: HistoryDb) -> None:
    archive = SqliteRfqArchive(db)
    one = archived("rfq_1", 100.0, b"\x01" * 32)
    archive.put([one])
    assert archive.get("rfq_1") == one  # maybe still queued: read from what was put
    assert archive.rfq_of_order(b"\x01" * 32) == "rfq_1"
    archive.flush()
    assert db.read("SELECT count(*) FROM rfqs") == [(1,)]  # now in the file ...
    assert archive.get("rfq_1") == one  # ... and read from it
    assert archive.rfq_of_order(b"\x01" * 32) == "rfq_1"
    assert archive.get("rfq_2") is None
    assert archive.rfq_of_order(b"\x09" * 32) is None
    assert archive.count() == 1


def test_records_are_forgotten_by_their_at_rest_time(db: HistoryDb) -> None:
    archive = SqliteRfqArchive(db)
    archive.put([archived("rfq_old", 100.0, b"\x01" * 32), archived("rfq_new", 200.0)])
    archive.flush()
    archive.put([archived("rfq_pending", 150.0)])  # not committed yet
    assert archive.forget_at_rest_before(150.0) == {"rfq_old"}
    assert archive.get("rfq_old") is None  # at once, before the DELETE is committed
    assert archive.rfq_of_order(b"\x01" * 32) is None
    assert archive.forget_at_rest_before(160.0) == {"rfq_pending"}
    archive.flush()
    assert [a.record.rfq_id for a in archive.all()] == ["rfq_new"]
    assert db.read("SELECT count(*) FROM rfq_orders") == [(0,)]


def test_the_file_keeps_the_records_across_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    first = HistoryDb(path)
    SqliteRfqArchive(first).put([archived("rfq_1", 100.0, b"\x01" * 32)])
    first.close()  # commits what is queued
    again = HistoryDb(path)
    try:
        assert SqliteRfqArchive(again).get("rfq_1") == archived("rfq_1", 100.0, b"\x01" * 32)
    finally:
        again.close()
    assert path.exists()  # a file given by path is the caller's


def test_the_writer_is_a_process_of_its_own_at_a_lower_priority(db: HistoryDb) -> None:
    """Its work shares no interpreter lock with the event loop, and yields the cores to it;
    Ctrl-C at the simulator's terminal (SIGINT to the process group) does not end it, so the
    stop still commits the last batch; it ends when the simulator closes its input."""
    archive = SqliteRfqArchive(db)
    archive.put([archived("rfq_1", 100.0)])
    archive.flush()
    pid = db.writer_pid
    assert pid is not None
    assert pid != os.getpid()
    writer = psutil.Process(pid)
    assert writer.nice() == psutil.Process().nice() + NICE
    writer.send_signal(signal.SIGINT)
    archive.put([archived("rfq_2", 100.0)])
    archive.flush()  # the writer took it after the signal
    assert db.read("SELECT id FROM rfqs ORDER BY id") == [("rfq_1",), ("rfq_2",)]
    db.close()  # waits for the writer to end
    assert not writer.is_running()


def test_a_built_column_is_built_by_the_writer_then_compressed(db: HistoryDb) -> None:
    """The journal's rows are built there (their redaction is the costly part): the function
    named goes by reference, its JSON is what the file keeps, compressed."""
    db.write("CREATE TABLE built (n INTEGER, blob BLOB)")
    db.write_many(
        "INSERT INTO built VALUES (?, ?)",
        [(1, Built(os.path.basename, "/journal/a.txt")), (2, Built(sorted, ["b", "a"]))],
    )
    db.flush()
    rows = db.read("SELECT n, blob FROM built ORDER BY n")
    assert [(n, expand_row(blob)) for n, blob in rows] == [(1, b'"a.txt"'), (2, b'["a", "b"]')]


def _unread_by(pid: int) -> int:
    """Bytes waiting in a process's standard input (a pipe), not yet read by it."""
    fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
    try:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])
    finally:
        os.close(fd)


def test_once_a_stop_began_the_queued_rows_are_written_here(db: HistoryDb) -> None:
    """The niced writer builds and writes rows while the simulator runs; what is still queued
    when a stop begins is built, compressed and inserted by the simulator's own process once
    the writer answered its batch in hand, so a stop on a busy machine does not wait for the
    niced process to catch up. `os.readlink("/proc/self")` names the builder's pid."""
    builder = Built(os.readlink, "/proc/self")
    insert = "INSERT INTO built VALUES (?, ?)"
    db.write("CREATE TABLE built (n INTEGER, blob BLOB)")
    db.write_many(insert, [(1, builder)])
    db.flush()
    path, writer = db.path, psutil.Process(db.writer_pid)
    writer.suspend()
    while writer.status() != psutil.STATUS_STOPPED:  # SIGSTOP takes effect asynchronously
        time.sleep(0.001)
    db.write(insert, (0, None))
    while _unread_by(writer.pid) == 0:  # handed over: the sender waits for its answer now
        time.sleep(0.001)
    db.write_many(insert, [(2, builder)])  # queued behind it
    stopping = threading.Thread(target=db.close)
    stopping.start()
    while not db.stopping:  # close() says so before it queues the end
        stopping.join(timeout=0.001)
    writer.resume()
    stopping.join(timeout=30)
    assert not stopping.is_alive()
    assert not writer.is_running()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT n, blob FROM built WHERE n > 0 ORDER BY n").fetchall()
    assert [(n, json.loads(expand_row(blob))) for n, blob in rows] == [
        (1, str(writer.pid)),
        (2, str(os.getpid())),
    ]


def test_a_temporary_file_is_closed_without_waiting_for_its_writer() -> None:
    """Nothing of a temporary file is kept, so its close neither waits for the writer's batch
    in hand nor writes what is queued: the writer is killed and the file removed, even while
    the writer gets no CPU at all (suspended here, as a niced process on a busy machine
    nearly is)."""
    db = HistoryDb()
    db.write("CREATE TABLE kept (n INTEGER)")
    db.flush()
    path, writer = db.path, psutil.Process(db.writer_pid)
    writer.suspend()
    while writer.status() != psutil.STATUS_STOPPED:
        time.sleep(0.001)
    db.write("INSERT INTO kept VALUES (1)")
    while _unread_by(writer.pid) == 0:  # handed over: the sender waits for its answer now
        time.sleep(0.001)
    db.write("INSERT INTO kept VALUES (2)")  # queued behind it
    stopping = threading.Thread(target=db.close)
    stopping.start()
    stopping.join(timeout=30)  # a wait for the suspended writer would never end
    assert not stopping.is_alive()
    assert not writer.is_running()
    assert not path.exists()
    assert db.failure is None


def test_a_writer_that_is_gone_stops_the_writes_and_says_so(db: HistoryDb) -> None:
    archive = SqliteRfqArchive(db)
    archive.put([archived("rfq_1", 100.0)])
    archive.flush()
    pid = db.writer_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    psutil.Process(pid).wait(timeout=10)
    archive.put([archived("rfq_2", 100.0)])
    with pytest.raises(RuntimeError, match=f"history writer process {pid} is gone"):
        db.flush()
    assert archive.get("rfq_2") is not None  # still readable from what was put
    assert db.read("SELECT id FROM rfqs") == [("rfq_1",)]  # and reads of the file go on


def test_a_temporary_file_is_made_on_first_use_and_removed_on_close() -> None:
    db = HistoryDb()
    db.close()  # never used: nothing was made
    db = HistoryDb()
    SqliteRfqArchive(db).put([archived("rfq_1", 100.0)])
    path = db.path
    assert path.exists()
    db.close()
    assert not path.exists()
    assert not Path(f"{path}-wal").exists()


def test_a_file_of_another_format_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE rfqs (id TEXT)")
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(
        HistoryFileError, match=f"format 99; this rfqsim writes format {SCHEMA_VERSION}"
    ):
        HistoryDb(path).open()
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database at all, but long enough to have a header" * 10)
    with pytest.raises(HistoryFileError, match="not a readable rfqsim history file"):
        HistoryDb(junk).open()


def test_a_snapshot_is_a_copy_of_the_file_and_a_load_puts_it_back(db: HistoryDb) -> None:
    """HistoryState: the engine's backup, not a read of the rows; what was queued before the
    snapshot is in it, what came after is gone once it is loaded back."""
    archive = SqliteRfqArchive(db)
    participant = HistoryState(db, [archive.restored])
    archive.put([archived("rfq_1", 100.0, b"\x01" * 32)])  # queued, maybe not committed yet
    saved = participant.dump()
    archive.put([archived("rfq_2", 200.0)])
    archive.forget_at_rest_before(150.0)  # rfq_1 goes after the snapshot ...
    assert archive.get("rfq_1") is None
    participant.load(saved)  # ... and comes back with it
    assert [a.record.rfq_id for a in archive.all()] == ["rfq_1"]
    assert archive.rfq_of_order(b"\x01" * 32) == "rfq_1"
    assert archive.get("rfq_2") is None
    db.clear()
    db.flush()
    assert archive.all() == []
    participant.load(saved)  # a snapshot can be restored more than once
    assert archive.count() == 1
    with pytest.raises(StateFormatError, match="names no backup on disk"):
        participant.load({"backup": str(db.path) + ".gone"})


def test_temporary_files_of_killed_processes_are_removed_by_the_next_one(tmp_path: Path) -> None:
    """A killed simulator cannot remove its temporary history file; the next one to make a
    temporary file removes every one whose process is gone, and none of a live process."""
    dead_pid = subprocess.Popen(["true"])  # a process that has ended
    dead_pid.wait()
    orphan = tmp_path / f"{TEMP_PREFIX}{dead_pid.pid}-abc.sqlite3"
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-def.sqlite3"
    foreign = tmp_path / "rfqsim-history-notapid.sqlite3"
    for path in (orphan, Path(f"{orphan}-wal"), live, foreign):
        path.write_bytes(b"x")
    copies = tmp_path / f"{BACKUPS_PREFIX}{dead_pid.pid}-ghi"
    copies.mkdir()
    (copies / "1.sqlite3").write_bytes(b"x")
    (tmp_path / f"{BACKUPS_PREFIX}{os.getpid()}-jkl").mkdir()
    assert sorted(remove_orphans(tmp_path)) == sorted([copies, orphan])
    kept = [live.name, foreign.name, f"{BACKUPS_PREFIX}{os.getpid()}-jkl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_rows_are_compressed_with_the_preset_dictionary() -> None:
    """A maker frame as the journal keeps it: read back exactly, and the keys and constant
    values the dictionary holds are not paid for again (zlib alone: more than twice the size)."""
    frame = json.dumps(
        [
            "tx_test_6143027e13cd",
            "0xE3C60CbdF28c508986D8B1694561056214747d98",
            json.dumps(
                {
                    "type": "released",
                    "quoteId": "mq_0123456789abcdef0123",
                    "rfqId": "rfq_0123456789abcdef01234567",
                    "reason": "not_selected",
                }
            ),
        ]
    ).encode()
    kept = compress_row(frame)
    assert expand_row(kept) == frame
    assert len(kept) * 2 < len(zlib.compress(frame, 1))
