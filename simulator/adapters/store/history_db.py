"""The history database: one SQLite file holding what is at rest (RFQ records past their live
life, timelines that left memory, finished webhook deliveries, the rates feed's tape), so the
heap holds only what requests decide on.

- WAL journal, `synchronous=NORMAL`: a crash loses at most the last batch, never the file.
- One writer, in a process of its own (history_writer.py: no interpreter lock shared with the
  event loop, a lower priority): a thread here takes every write from a queue, builds the rows
  of those given as functions, and hands everything queued when it wakes to the writer as one
  batch (one transaction), so a request never waits on the disk.
- A stop never waits for that niced process to catch up on a busy machine: once `close()`
  begins, what is still queued is written by the same thread with the same `Writer`, after the
  writer process answered its batch in hand and ended; a temporary file's writer is killed and
  its queue dropped, since the file is removed next.
- Reads run on the caller's thread through a connection of their own (WAL lets them read while
  the writer writes). A write is visible to reads once committed; the archives built on this
  (rfq_archive.py, timeline_archive.py) keep what they queued visible until then
  (`committed`).
- The file's schema is history_schema.py `SCHEMA` at `PRAGMA user_version` `SCHEMA_VERSION`:
  a file of another version is refused with one line, before anything is written to it.
- Without a path the file is a temporary one, removed on close. Nothing is opened before the
  first read or write, so an app built and never started leaves no file behind."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import psutil
from pydantic import BaseModel

from simulator.adapters.store import history_writer
from simulator.adapters.store.history_schema import HISTORY_FILE as HISTORY_FILE
from simulator.adapters.store.history_schema import SCHEMA as SCHEMA
from simulator.adapters.store.history_schema import SCHEMA_VERSION as SCHEMA_VERSION
from simulator.adapters.store.history_schema import TABLES as TABLES
from simulator.adapters.store.history_writer import (
    Packed,
    Writer,
    expand_row,
    read_frame,
    write_frame,
)
from simulator.services.shared.state import StateFormatError, StateSchema, read_schema

RowT = TypeVar("RowT", bound=BaseModel)

Rows = Iterable[Sequence[Any]] | Callable[[], Iterable[Sequence[Any]]]
Write = tuple[str, Sequence[Any] | Rows, bool]  # (sql, params, many)


TEMP_PREFIX = "rfqsim-history-"  # then the owner's pid, a dash, a random part
BACKUPS_PREFIX = "rfqsim-history-backups-"  # the same, for a process's snapshot copies


def _orphaned(path: Path, prefix: str) -> bool:
    owner = path.name[len(prefix) :].partition("-")[0]
    return owner.isdigit() and not psutil.pid_exists(int(owner))


def remove_orphans(directory: Path) -> list[Path]:
    """Temporary history files and snapshot copies whose process is gone (killed, so it could
    not remove its own): removed, a file with its WAL and shared-memory files; returns what
    was removed."""
    removed = []
    for path in directory.glob(f"{BACKUPS_PREFIX}*"):
        if path.is_dir() and _orphaned(path, BACKUPS_PREFIX):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    for path in directory.glob(f"{TEMP_PREFIX}*.sqlite3"):
        if _orphaned(path, TEMP_PREFIX):
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(f"{path}{suffix}")
            removed.append(path)
    return removed


def pack(schema: BaseModel) -> Packed:
    """A row's JSON, compressed by the writer process (history_writer.py)."""
    return Packed(schema.model_dump_json().encode())


def unpack(schema: type[RowT], blob: bytes) -> RowT:
    return schema.model_validate_json(expand_row(blob))


def _package_root() -> str:
    """Where the writer process finds `simulator` (this checkout, installed or not)."""
    root = str(Path(__file__).resolve().parents[3])
    return os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)


class HistoryFileError(RuntimeError):
    """One line: which file, what is wrong, what to do."""


class _Barrier:
    def __init__(self) -> None:
        self.done = threading.Event()


class _Restore:
    """Replace the file's contents with a backup's: done by the writer, between batches."""

    def __init__(self, source: Path) -> None:
        self.source = source


Item = Write | _Barrier | _Restore | None  # None: stop


class HistoryWriterFailed(RuntimeError):
    """The writer process stopped writing: what it reported, or that it is gone."""


class HistoryDb:
    def __init__(self, path: Path | None = None) -> None:
        self.temporary = path is None
        self._path = path
        self._queue: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.queued = 0  # writes handed to the writer (loop thread)
        self.committed = 0  # of those, committed (sender thread; an int read is atomic)
        self.failure: BaseException | None = None  # the writer's fatal error, if any
        # A stop has begun: what is still queued is written by this process (a kept file) or
        # dropped with the file (a temporary one), never left to the niced writer process.
        self.stopping = False
        self._here: Writer | None = None  # this process's own writer, once a stop has begun
        self._reader: sqlite3.Connection | None = None
        self._sender: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._backups: Path | None = None  # snapshots' copies of the file, removed on close
        self._backup_count = 0

    @property
    def path(self) -> Path:
        self.open()
        assert self._path is not None
        return self._path

    @property
    def writer_pid(self) -> int | None:
        """The writer process (None before the first read or write, and after close)."""
        return self._process.pid if self._process is not None else None

    def open(self) -> None:
        """Create or check the file and start the writer (once; every read and write does)."""
        if self._reader is not None:
            return
        if self._path is None:
            remove_orphans(Path(tempfile.gettempdir()))
            handle, name = tempfile.mkstemp(
                prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".sqlite3"
            )
            os.close(handle)
            self._path = Path(name)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._check_version(self._path)
        self._reader = history_writer.connect(str(self._path))
        self.stopping = False
        self._process = subprocess.Popen(
            [sys.executable, "-m", history_writer.__name__, str(self._path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": _package_root()},
        )
        self._sender = threading.Thread(
            target=self._send_loop, args=(self._process,), name="history-db", daemon=True
        )
        self._sender.start()

    @staticmethod
    def check_file(path: Path) -> None:
        """Refuse (HistoryFileError) a file that is not a history file of this format; a
        missing one is fine (created on first use)."""
        if path.exists():
            HistoryDb._check_version(path)

    @staticmethod
    def _check_version(path: Path) -> None:
        try:
            conn = sqlite3.connect(path)
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables and version != SCHEMA_VERSION:
                    raise HistoryFileError(
                        f"{path}: a history file of format {version}; this rfqsim writes "
                        f"format {SCHEMA_VERSION}: start with another --state-dir or move it away"
                    )
                conn.executescript(SCHEMA)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise HistoryFileError(
                f"{path}: not a readable rfqsim history file ({exc}): start with "
                "another --state-dir or move it away"
            ) from exc

    # --- writes (queued; the writer process commits them) -----------------------------------

    def write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Queue one statement; returns its number (visible to reads once `committed` >= it)."""
        self.open()
        self._queue.put((sql, params, False))
        self.queued += 1
        return self.queued

    def write_many(self, sql: str, rows: Rows) -> int:
        """Queue one statement for many rows. Rows given as a function are built by the sender
        thread, so their serialisation is off the event loop too (the function must only read
        what the caller no longer changes)."""
        self.open()
        self._queue.put((sql, rows if callable(rows) else list(rows), True))
        self.queued += 1
        return self.queued

    def flush(self, timeout: float = 30.0) -> None:
        """Block until everything queued so far is committed (stop, snapshots, tests)."""
        if self._sender is None:
            return  # nothing was ever written
        barrier = _Barrier()
        self._queue.put(barrier)
        if not barrier.done.wait(timeout) and self.failure is None:
            raise TimeoutError(f"history writer did not commit within {timeout} s")
        if self.failure is not None:
            raise RuntimeError(f"history writer failed: {self.failure}") from self.failure

    def _send_loop(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            while True:
                item = self._queue.get()
                batch: list[tuple[Any, ...]] = []
                barriers: list[_Barrier] = []
                stop = False
                while True:
                    if item is None:
                        stop = True
                    elif isinstance(item, _Barrier):
                        barriers.append(item)
                    elif isinstance(item, _Restore):
                        batch.append(("restore", str(item.source)))
                    else:
                        batch.append(self._built(item))
                    if len(batch) >= 2000:
                        break
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                self._hand_over(process, batch)
                for barrier in barriers:
                    barrier.done.set()
                if stop:
                    return
        finally:
            self._end_writer(process)
            process.stdout.close()
            if self._here is not None:
                self._here.conn.close()
                self._here = None

    def _built(self, write: Write) -> tuple[Any, ...]:
        sql, params, many = write
        if callable(params) and self.failure is None:
            try:
                params = params()
            except Exception as exc:  # a row that would not build: writes stop, reads go on
                self.failure = exc
        return ("write", sql, params if not callable(params) else [], many)

    def _hand_over(self, process: subprocess.Popen[bytes], batch: list[tuple[Any, ...]]) -> None:
        if self.failure is not None:  # restores still count: later numbers stay in step
            self.committed += sum(item[0] == "restore" for item in batch)
            return
        if not batch:
            return
        if self.stopping:
            self._write_here(process, batch)
            return
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            write_frame(process.stdin, batch)
            applied, failure = read_frame(process.stdout)
        except (OSError, EOFError, ValueError):
            if self.stopping and self.temporary:
                return  # killed by close(): its file goes with it
            self.failure = HistoryWriterFailed(
                f"the history writer process {process.pid} is gone "
                f"(exit status {process.poll()}); history is no longer written"
            )
            return
        self._count(applied, failure)

    def _write_here(self, process: subprocess.Popen[bytes], batch: list[tuple[Any, ...]]) -> None:
        """Once a stop has begun: a temporary file's writes are dropped (the file is removed
        next); a kept file's are written by this thread, at the simulator's priority, in place
        of the writer process, so a stop on a busy machine does not wait for the niced process
        to catch up."""
        if self.temporary:
            return
        if self._here is None:
            # It answered every batch it was given, so it holds no transaction: ended at once
            # (a niced interpreter's own exit took 0.7 s on a busy machine).
            process.kill()
            self._end_writer(process)
            self._here = Writer(history_writer.connect(str(self._path)))
        self._count(*self._here.apply(batch))

    def _count(self, applied: int, failure: str | None) -> None:
        if failure is not None:
            self.failure = HistoryWriterFailed(failure)
        self.committed += applied

    @staticmethod
    def _end_writer(process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None
        with contextlib.suppress(OSError):
            process.stdin.close()  # the writer ends once it has read everything
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    # --- reads (the caller's thread) --------------------------------------------------------

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.open()
        assert self._reader is not None
        return self._reader.execute(sql, params).fetchall()

    def size_bytes(self) -> int:
        """The file and its write-ahead log, as on disk (0 before it is opened)."""
        if self._path is None:
            return 0
        total = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                total += Path(str(self._path) + suffix).stat().st_size
        return total

    # --- the engine's own backup and restore (snapshots, reset) ------------------------------

    def backup(self) -> Path:
        """A copy of the whole file as committed now (SQLite's online backup: page by page,
        no row is read as data), kept until close; returns where it is."""
        self.open()
        self.flush()
        if self._backups is None:
            prefix = f"{BACKUPS_PREFIX}{os.getpid()}-"
            self._backups = Path(tempfile.mkdtemp(prefix=prefix))
        self._backup_count += 1
        target = self._backups / f"{self._backup_count}.sqlite3"
        assert self._reader is not None
        with contextlib.closing(sqlite3.connect(target)) as copy:
            self._reader.backup(copy)
        return target

    def restore(self, source: Path) -> None:
        """Make the file's contents those of a backup (and wait until they are)."""
        self.open()
        self._queue.put(_Restore(source))
        self.queued += 1
        self.flush()

    def clear(self) -> None:
        """Everything at rest forgotten (reset to a baseline taken before any history)."""
        for table in TABLES:
            self.write(f"DELETE FROM {table}")  # the table names are ours

    def close(self) -> None:
        """Commit what is queued and stop the writer; a temporary file is removed instead, its
        writer killed at once (nothing of it is kept, so nothing is waited for)."""
        if self._sender is None or self._reader is None:
            return
        self.stopping = True
        if self.temporary and self._process is not None:
            self._process.kill()
        self._queue.put(None)
        self._sender.join(timeout=60)
        self._reader.close()
        self._sender, self._reader, self._process = None, None, None
        if self._backups is not None:
            shutil.rmtree(self._backups, ignore_errors=True)
            self._backups = None
        if self.temporary:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.remove(str(self._path) + suffix)


class HistorySaved(StateSchema):
    backup: str  # where HistoryDb.backup put the copy


class HistoryState:
    """The history file as a state participant: a snapshot (and the baseline reset goes back
    to) is a copy made by the engine's own backup, so it costs a page copy of the file, not a
    read of every row; a load copies it back. A state directory holds the file itself, so the
    JSON written at stop leaves this out (`kept_in_file`)."""

    name = "history"
    kept_in_file = True

    def __init__(self, db: HistoryDb, restored: list[Callable[[], None]]) -> None:
        self._db = db
        self._restored = restored  # told after a load: the archives forget what they cached

    def dump(self) -> dict[str, Any]:
        return HistorySaved(backup=str(self._db.backup())).model_dump(mode="json")

    def check(self, state: object) -> HistorySaved:
        saved = read_schema(self.name, HistorySaved, state)
        if not Path(saved.backup).is_file():
            raise StateFormatError(f"the saved state of {self.name} names no backup on disk")
        return saved

    def load(self, state: dict[str, Any]) -> None:
        self._db.restore(Path(self.check(state).backup))
        for restored in self._restored:
            restored()
