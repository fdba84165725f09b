"""The collector-pause recorder (services/sim/gc_pauses.py): each collection's pause from its
start and stop callbacks, per generation and per wall-clock second, on a fake timer; and once
on the real collector."""

from __future__ import annotations

import gc

from simulator.services.sim.gc_pauses import GcCallback, GcPauseRecorder


class FakeTimer:
    def __init__(self) -> None:
        self.now = 100.0
        self.cpu = 5.0
        self.cpu_reads = 0

    def read_cpu(self) -> float:
        self.cpu_reads += 1
        return self.cpu

    def __call__(self) -> float:
        return self.now


def _recorder(timer: FakeTimer, *, kept: int = 600) -> GcPauseRecorder:
    # Wall clock 1,000,000 s ahead of the timer: second labels are Unix seconds. CPU time runs
    # at a quarter of the wall time unless a collection says otherwise.
    return GcPauseRecorder(
        timer=timer,
        cpu=timer.read_cpu,
        wall=lambda: timer.now + 1_000_000,
        seconds_kept=kept,
    )


def _collect(
    recorder: GcPauseRecorder,
    timer: FakeTimer,
    generation: int,
    ms: float,
    cpu_ms: float | None = None,
) -> None:
    recorder.callback("start", {"generation": generation})
    timer.now += ms / 1000
    timer.cpu += (ms / 4 if cpu_ms is None else cpu_ms) / 1000
    recorder.callback("stop", {"generation": generation, "collected": 0, "uncollectable": 0})


def test_pauses_are_totalled_per_generation_and_per_second() -> None:
    timer = FakeTimer()
    recorder = _recorder(timer)
    _collect(recorder, timer, 0, 0.5)
    _collect(recorder, timer, 0, 1.5)
    _collect(recorder, timer, 2, 40.0, cpu_ms=4.0)  # waited for a core most of the time
    _collect(recorder, timer, 2, 30.0, cpu_ms=29.0)
    timer.now += 1.0  # the next second
    _collect(recorder, timer, 1, 3.0)
    young, middle, full = recorder.generations
    assert (young.collections, round(young.total_ms, 6), round(young.longest_ms, 6)) == (
        2,
        2.0,
        1.5,
    )
    assert (middle.collections, round(middle.longest_ms, 6)) == (1, 3.0)
    assert (full.collections, round(full.longest_ms, 6)) == (2, 40.0)
    assert round(full.longest_cpu_ms or 0, 6) == 29.0
    assert round(recorder.longest_ms, 6) == 40.0
    seconds = recorder.seconds()
    assert [s.at for s in seconds] == [1_000_100, 1_000_101]
    assert [s.totals.collections for s in seconds] == [4, 1]
    # CPU time is read for full collections only: a young one costs no system call.
    assert round(seconds[0].totals.longest_cpu_ms or 0, 6) == 29.0
    assert seconds[1].totals.longest_cpu_ms is None
    assert young.longest_cpu_ms is None
    assert [round(s.totals.longest_ms, 6) for s in seconds] == [40.0, 3.0]


def test_since_keeps_the_second_that_holds_it_and_later_ones() -> None:
    timer = FakeTimer()
    recorder = _recorder(timer)
    for _ in range(3):
        _collect(recorder, timer, 0, 1.0)
        timer.now += 1.0
    assert [s.at for s in recorder.seconds(since=1_000_101.7)] == [1_000_101, 1_000_102]
    assert recorder.seconds(since=1_000_200.0) == []


def test_collections_within_one_second_add_no_record_and_old_seconds_drop_off() -> None:
    timer = FakeTimer()
    recorder = _recorder(timer, kept=2)
    for _ in range(500):  # young collections under load: many per second
        _collect(recorder, timer, 0, 0.001)
    assert len(recorder.seconds()) == 1
    assert timer.cpu_reads == 0  # no system call for a young collection
    for _ in range(3):
        timer.now += 1.0
        _collect(recorder, timer, 0, 0.1)
    assert [s.at for s in recorder.seconds()] == [1_000_102, 1_000_103]
    assert recorder.seconds_kept == 2
    assert recorder.generations[0].collections == 503  # the totals keep everything


def test_a_stop_without_its_start_is_not_counted() -> None:
    timer = FakeTimer()
    recorder = _recorder(timer)
    recorder.callback("stop", {"generation": 2})  # installed while that collection ran
    assert recorder.generations[2].collections == 0
    assert recorder.seconds() == []


def test_install_and_uninstall_in_a_callback_list() -> None:
    callbacks: list[GcCallback] = []
    recorder = _recorder(FakeTimer())
    recorder.install(callbacks)
    assert callbacks == [recorder.callback]
    recorder.uninstall()
    recorder.uninstall()  # twice is harmless (a stop after a failed start)
    assert callbacks == []


def test_the_real_collector_reports_a_full_collection() -> None:
    recorder = GcPauseRecorder()
    recorder.install()
    try:
        gc.collect()
    finally:
        recorder.uninstall()
    assert recorder.callback not in gc.callbacks
    full = recorder.generations[2]
    assert full.collections >= 1
    assert full.longest_ms > 0
    assert full.longest_cpu_ms is not None
    assert recorder.seconds()[-1].totals.collections >= 1
