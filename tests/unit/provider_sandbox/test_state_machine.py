from __future__ import annotations

import pytest

from provider_sandbox.state import ALL_STATUSES, PROGRESSION, SETTLED
from provider_sandbox.transfers import can_move, next_status


def test_progression_moves_forward_only() -> None:
    for i, current in enumerate(PROGRESSION):
        for j, new in enumerate(PROGRESSION):
            assert can_move(current, new) is (j > i), (current, new)


@pytest.mark.parametrize("settled", sorted(SETTLED))
def test_settled_never_changes(settled: str) -> None:
    assert not any(can_move(settled, new) for new in ALL_STATUSES)


def test_failed_only_becomes_refunded() -> None:
    assert [s for s in ALL_STATUSES if can_move("failed", s)] == ["refunded"]
    assert [s for s in ALL_STATUSES if can_move(s, "refunded")] == ["failed"]


def test_cancel_only_before_funds() -> None:
    assert [s for s in ALL_STATUSES if can_move(s, "cancelled")] == ["awaiting_funds"]


def test_fail_from_any_unfinished_step() -> None:
    assert [s for s in ALL_STATUSES if can_move(s, "failed")] == list(PROGRESSION[:-1])


def test_no_status_moves_to_itself() -> None:
    for status in ALL_STATUSES:
        assert not can_move(status, status)


def test_next_status_walks_the_progression() -> None:
    walked = [PROGRESSION[0]]
    while (step := next_status(walked[-1])) is not None:
        walked.append(step)
    assert tuple(walked) == PROGRESSION
    assert all(next_status(s) is None for s in ("failed", "refunded", "cancelled"))
