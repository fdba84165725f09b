"""The health endpoints' view of the dependencies: ok while all are up, degraded when one is down,
each with the service time its status began."""

from __future__ import annotations

from simulator.services.shared.health import DependencyHealth


def overall(health: DependencyHealth) -> str:
    return health.overall  # read afresh each time (mypy would narrow the property)


def test_degraded_while_any_dependency_is_down() -> None:
    now = [100.0]
    health = DependencyHealth(lambda: now[0])
    assert overall(health) == "ok"  # nothing reported: nothing down
    assert health.report("chain:97", True) is True
    assert health.report("chain:97", True) is False  # no change
    now[0] = 105.0
    assert health.report("chain:97", False, "node exited") is True
    assert overall(health) == "degraded"
    state = health.get("chain:97")
    assert state is not None
    assert (state.status, state.detail, state.since) == ("down", "node exited", 105.0)
    health.report("chain:97", False, "still exited")
    assert health.snapshot()["chain:97"].since == 105.0  # same status: since unchanged
    now[0] = 110.0
    health.report("chain:97", True)
    assert overall(health) == "ok"
    assert list(health.snapshot()) == ["chain:97"]
