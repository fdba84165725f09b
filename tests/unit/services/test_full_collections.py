"""The simulator's schedule of full collections: after an idle spell that followed requests,
or once memory grew by the set amount; never twice for one idle spell, never while requests
run or keep arriving."""

from __future__ import annotations

from simulator.services.sim.full_collections import Activity, FullCollectionSchedule


def schedule(idle_s: float = 2.0, growth_mb: float = 256) -> FullCollectionSchedule:
    return FullCollectionSchedule(
        idle_s=idle_s, memory_growth_mb=growth_mb, start=Activity(0, 0, 100.0, 0.0)
    )


def test_an_idle_spell_after_requests_is_one_full_collection() -> None:
    s = schedule()
    assert s.due(Activity(5, 1, 110.0, 1.0)) is None  # requests running
    assert s.due(Activity(9, 0, 110.0, 1.5)) is None  # more came in; quiet from now
    assert s.due(Activity(9, 0, 110.0, 3.4)) is None  # 1.9 s quiet
    assert s.due(Activity(9, 0, 110.0, 3.5)) == "idle"
    s.collected("idle", 104.0)
    assert s.due(Activity(9, 0, 104.0, 9.0)) is None  # the same spell: nothing new ran
    assert s.runs == {"idle": 1, "memory": 0}


def test_no_collection_while_requests_keep_arriving() -> None:
    s = schedule()
    for k in range(1, 100):
        # Each look sees new requests, none inside at that instant: never quiet for 2 s.
        assert s.due(Activity(k, 0, 110.0, k * 0.5)) is None


def test_a_process_that_never_idles_is_collected_once_it_grew() -> None:
    s = schedule(growth_mb=256)
    assert s.due(Activity(1, 3, 355.0, 1.0)) is None
    assert s.due(Activity(2, 3, 356.0, 1.5)) == "memory"
    s.collected("memory", 300.0)
    assert s.due(Activity(3, 3, 400.0, 2.0)) is None  # measured from the memory after it
    assert s.due(Activity(4, 3, 556.0, 2.5)) == "memory"
    assert s.runs == {"idle": 0, "memory": 1}


def test_a_simulator_idle_from_its_start_is_left_alone() -> None:
    s = schedule()
    assert s.due(Activity(0, 0, 100.0, 60.0)) is None  # start-up already collected and froze
