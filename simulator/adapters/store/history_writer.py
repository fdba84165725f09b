"""The history file's writer: a process of its own (`python -m
simulator.adapters.store.history_writer FILE`), started by history_db.py `HistoryDb`.

Why a process and not a thread: as a thread its work (compressing rows, SQLite inserts into
six indexes, checkpoints) took the interpreter lock between every row, in the process whose
event loop answers firm quotes. Here it holds no lock the event loop needs, and it runs at a
lower priority (`NICE`), so on a busy machine it takes the CPU the requests leave and catches
up when they leave more (docs/performance.md "History writer in a process of its own"). Once
a stop has begun, this process is given nothing more: it ends after its batch in hand, and
the simulator writes what is still queued itself with the same `Writer` (a temporary file's
is dropped with the file), so a stop on a busy machine never waits for a niced process to
catch up (history_db.py `HistoryDb.close`).

Standard library only, so it starts in tens of milliseconds. It reads batches from stdin and
answers each on stdout, both as frames (a 4-byte length, then a pickle):
- a batch: a list of `("write", sql, params, many)` and `("restore", backup_path)`, applied in
  order, the writes of a batch in one transaction; columns given as `Packed` are compressed
  here, and columns given as `Built` are built here first (the journal's rows: redacting every
  body is most of their cost, done here rather than in the simulator's process; the function
  named, pickled by reference, is imported here on first use: services/sim/journal_search.py,
  which needs the standard library and rfqkit/redaction.py only);
- its answer: `(applied, failure)`: how many of the batch's items were applied, and the first
  failure's text (then nothing more is written: reads go on, writes stop).
It ends when stdin closes (the simulator stopped, or was killed); signals meant for the
simulator's terminal (Ctrl-C) are ignored, so a stop never loses the last batch."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import signal
import sqlite3
import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from typing import IO, Any, NamedTuple

from simulator.adapters.store.row_dictionary import ROW_DICTIONARY

NICE = 10  # added to the writer's niceness: it yields the cores to the event loop
LENGTH = struct.Struct(">I")


class Packed(bytes):
    """A column kept compressed: JSON text, compressed by the writer (compress_row)."""


class Built(NamedTuple):
    """A column whose JSON is `build(source)`, built and compressed by the writer. `build` must
    be a module-level function (pickled by its name) of the standard library and rfqsim only."""

    build: Callable[[Any], Any]
    source: Any


# An 8 KiB window holds the dictionary and a row's nearest matches; zlib's default (32 KiB, and
# memory level 8) spent most of a small row's time setting up its tables: a maker frame took
# 22 µs instead of 108 (docs/performance.md "Journal rows built in the writer process").
WINDOW_BITS = 13
MEMORY_LEVEL = 5


def compress_row(json_text: bytes) -> bytes:
    """How a row's JSON is kept: compressed (a timeline or a quoted record shrinks severalfold),
    with the rows' preset dictionary (row_dictionary.py), so what every row repeats is not paid
    again in each."""
    compressor = zlib.compressobj(
        1, zlib.DEFLATED, WINDOW_BITS, MEMORY_LEVEL, zlib.Z_DEFAULT_STRATEGY, ROW_DICTIONARY
    )
    return compressor.compress(json_text) + compressor.flush()


def expand_row(blob: bytes) -> bytes:
    """A row's JSON as `compress_row` got it."""
    expander = zlib.decompressobj(zdict=ROW_DICTIONARY)
    return expander.decompress(blob) + expander.flush()


def write_frame(sink: IO[bytes], payload: object) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    sink.write(LENGTH.pack(len(data)) + data)
    sink.flush()


def read_frame(source: IO[bytes]) -> Any:
    """The next frame's value; EOFError when the other side closed."""
    head = source.read(LENGTH.size)
    if len(head) < LENGTH.size:
        raise EOFError
    (size,) = LENGTH.unpack(head)
    data = source.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # our own parent process wrote it


def connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def built_now(value: Any) -> Any:
    """A `Built` column as the `Packed` JSON the writer would build of it; any other as it is."""
    if type(value) is Built:
        return Packed(json.dumps(value.build(value.source)).encode())
    return value


def _column(value: Any) -> Any:
    value = built_now(value)
    return compress_row(value) if type(value) is Packed else value


def _unpacked(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(_column(v) for v in row)


class Writer:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.failure: str | None = None

    def apply(self, batch: list[tuple[Any, ...]]) -> tuple[int, str | None]:
        applied, writes = 0, list[tuple[Any, ...]]()
        for item in batch:
            if item[0] == "restore":
                applied += self._commit(writes)  # what was queued before it, first
                writes = []
                applied += self._restore(item[1])
            else:
                writes.append(item)
        applied += self._commit(writes)
        return applied, self.failure

    def _restore(self, source: str) -> int:
        if self.failure is None:
            try:
                with contextlib.closing(sqlite3.connect(source)) as backup:
                    backup.backup(self.conn)
            except sqlite3.Error as exc:
                self.failure = f"restore from {source}: {exc}"
        return 1  # counted like a write: later writes' numbers stay in step

    def _commit(self, writes: list[tuple[Any, ...]]) -> int:
        if not writes or self.failure is not None:
            return 0
        try:
            self.conn.execute("BEGIN")
            for _, sql, params, many in writes:
                if many:
                    self.conn.executemany(sql, [_unpacked(row) for row in params])
                else:
                    self.conn.execute(sql, _unpacked(params))
            self.conn.execute("COMMIT")
        except Exception as exc:  # a full disk, a removed file: writes stop, reads go on
            self.failure = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            return 0
        return len(writes)


def serve(path: str, source: IO[bytes], sink: IO[bytes]) -> None:
    writer = Writer(connect(path))
    try:
        while True:
            try:
                batch = read_frame(source)
            except EOFError:
                return
            write_frame(sink, writer.apply(batch))
    finally:
        writer.conn.close()


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.nice(NICE)
    serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    # Run as the module's importable self, so the `Packed` that pickle finds is this one.
    from simulator.adapters.store import history_writer

    history_writer.main()
