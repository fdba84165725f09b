"""Timelines beyond memory (services/shared/timelines.py with the history database's
adapters/store/timeline_archive.py): the newest `capacity` stay in memory, the older ones go to
the file at a spill and stay readable, changeable and searchable; a list's filter and cursor
give the same answer across both tiers; forgetting is by creation time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from simulator.adapters.store.history_db import HistoryDb, HistoryState
from simulator.adapters.store.timeline_archive import SqliteTimelineArchive
from simulator.services.rfq.history import RFQ_STEPS
from simulator.services.shared.timeline_search import TimelineFilter, key_of, search
from simulator.services.shared.timelines import Timelines, TimelineState
from tests.unit.services.ticks import Ticks

SELL, BUY = "0x" + "aa" * 20, "0x" + "bb" * 20


def ticks() -> Ticks:
    return Ticks(now=1_000.0, step=1.0)


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[SqliteTimelineArchive]:
    db = HistoryDb(tmp_path / "history.sqlite3")
    yield SqliteTimelineArchive(db)
    db.close()


def filled(timelines: Timelines, count: int) -> list[str]:
    ids = []
    for n in range(count):
        object_id = f"rfq_{n:02d}"
        taker = "0xT1" if n % 2 else "0xT2"
        sell, buy = (SELL, BUY) if n < 6 else (BUY, SELL)
        summary = {
            "taker": taker,
            "sell_token": sell,
            "buy_token": buy,
            "makers": [f"0xM{n % 3}"],
            "maker_ids": [],
        }
        timelines.start(object_id, "soliciting", summary)
        timelines.status(object_id, "quoted" if n % 3 else "no_quote", "answered")
        ids.append(object_id)
    return ids


def test_the_oldest_leave_memory_for_the_file_and_stay_readable(
    archive: SqliteTimelineArchive,
) -> None:
    timelines = Timelines("rfqs", ticks(), RFQ_STEPS, capacity=3, archive=archive)
    ids = filled(timelines, 8)
    assert list(timelines.items) == ids[-3:]
    assert timelines.spill() == 5
    assert timelines.spill() == 0
    archive.db.flush()
    assert archive.db.read("SELECT count(*) FROM timelines") == [(5,)]
    old = timelines.get(ids[0])
    assert old is not None
    assert (old.status, [s[1] for s in old.steps]) == ("no_quote", ["status"])
    timelines.status(ids[0], "expired", "late")  # a change reaches a timeline in the file
    assert timelines.spill() == 1
    archive.db.flush()
    again = archive.get("rfqs", ids[0])
    assert again is not None
    assert again.status == "expired"
    assert len(again.steps) == 2


@pytest.mark.parametrize(
    "where",
    [
        TimelineFilter(),
        TimelineFilter(taker="0xt1"),
        TimelineFilter(status="no_quote"),
        TimelineFilter(makers=frozenset({"0xm1"})),
        TimelineFilter(pair=f"{SELL}/{BUY}"),
        TimelineFilter(since=1_004.0, until=1_012.0),
        TimelineFilter(taker="0xt2", status="quoted", makers=frozenset({"0xm2", "0xm0"})),
        TimelineFilter(taker="0xnobody"),
    ],
    ids=["all", "taker", "status", "maker", "pair", "time", "combined", "none"],
)
def test_a_filter_answers_alike_in_memory_and_in_the_file(
    archive: SqliteTimelineArchive, where: TimelineFilter
) -> None:
    everything = Timelines("rfqs", ticks(), RFQ_STEPS, capacity=100)
    tiered = Timelines("rfqs", ticks(), RFQ_STEPS, capacity=3, archive=archive)
    filled(everything, 10)
    filled(tiered, 10)
    tiered.spill()
    expected = [t.object_id for t in search(everything, where, 100)]
    assert [t.object_id for t in search(tiered, where, 100)] == expected  # pending writes
    archive.db.flush()
    assert [t.object_id for t in search(tiered, where, 100)] == expected  # from the file
    # Paged three at a time by the cursor: the same objects, each once.
    paged: list[str] = []
    before = None
    while True:
        page = search(tiered, TimelineFilter(**{**where.__dict__, "before": before}), 3)
        paged += [t.object_id for t in page]
        if len(page) < 3:
            break
        before = key_of(page[-1])
    assert paged == expected


def test_forgetting_is_by_creation_time_and_a_snapshot_keeps_both_tiers(
    archive: SqliteTimelineArchive,
) -> None:
    timelines = Timelines("rfqs", ticks(), RFQ_STEPS, capacity=3, archive=archive)
    ids = filled(timelines, 8)
    timelines.spill()
    memory = TimelineState("rfq.timelines", timelines)
    in_file = HistoryState(archive.db, [archive.restored])
    saved = (memory.dump(), in_file.dump())
    archive.forget_before(1_005.0)  # the first two were created at 1001 and 1003
    assert timelines.get(ids[0]) is None
    assert timelines.get(ids[2]) is not None
    timelines.forget()  # memory only
    assert timelines.get(ids[5]) is None
    assert timelines.get(ids[4]) is not None  # in the file
    memory.load(saved[0])
    in_file.load(saved[1])
    assert [t.object_id for t in search(timelines, TimelineFilter(), 100)] == list(reversed(ids))
