"""conformance/deployment/run_cost.py: a run's loans summed per area, what a selection needs at
once, the runs a balance still pays for, and the amounts as the pre-run check writes them."""

from __future__ import annotations

from decimal import Decimal

from conformance.deployment import run_cost
from conformance.deployment.run_cost import COIN

LOANS_JSON = {
    "lent": [
        {
            "test": "conformance/tests/test_feed_trades.py::test_one",
            "chain_id": 97,
            "tokens": {"USDT": "60", "USDC": "5"},
            "native": "1",
        },
        {
            "test": "conformance/tests/test_feed_trades.py::test_two",
            "chain_id": 97,
            "tokens": {"USDT": "10"},
            "native": "0",
        },
        {
            "test": "conformance/tests/test_v1_swaps_lifecycle.py::test_three",
            "chain_id": 97,
            "tokens": {"NGNS": "1480"},
            "native": "1",
        },
        {
            "test": "conformance/tests/test_feed_pairs_tickers.py::test_four",
            "chain_id": 56,
            "tokens": {"USDT": "300"},
            "native": "0.5",
        },
    ]
}


def test_loans_are_summed_per_area_and_chain() -> None:
    per_area = run_cost.lent_per_area(LOANS_JSON)
    assert per_area == {
        "feed": {
            97: {"USDT": Decimal(70), "USDC": Decimal(5), COIN: Decimal(1)},
            56: {"USDT": Decimal(300), COIN: Decimal("0.5")},
        },
        "v1": {97: {"NGNS": Decimal(1480), COIN: Decimal(1)}},
    }
    table = run_cost.markdown(per_area)
    assert "| feed | 97 | USDC 5, USDT 70, coin 1 |" in table
    assert "| v1 | 97 | NGNS 1,480, coin 1 |" in table


def test_a_selection_needs_the_sum_of_its_areas() -> None:
    per_area = run_cost.lent_per_area(LOANS_JSON)
    assert run_cost.needed(["feed", "v1", "auth"], per_area) == {
        97: {"USDT": Decimal(70), "USDC": Decimal(5), "NGNS": Decimal(1480), COIN: Decimal(2)},
        56: {"USDT": Decimal(300), COIN: Decimal("0.5")},
    }
    assert run_cost.needed(["auth"], per_area) == {}


def test_runs_left_count_what_each_run_keeps_after_what_it_needs_at_once() -> None:
    need = {"USDT": Decimal(100), COIN: Decimal(2)}
    kept = {"USDT": Decimal(10), COIN: Decimal("0.5"), "NGNS": Decimal(-900)}  # NGNS comes in
    # USDT: 100 needed at once, 10 kept per run: 150 pays for 6 runs; the coin for 19.
    held = {"USDT": Decimal(150), COIN: Decimal(11), "NGNS": Decimal(0)}
    assert run_cost.runs_left(held, need, kept) == 6
    assert run_cost.runs_left({"USDT": Decimal(99), COIN: Decimal(11)}, need, kept) == 0
    assert run_cost.runs_left(held, need, {"NGNS": Decimal(-1)}) is None


def test_amounts_read_as_a_person_writes_them() -> None:
    text = run_cost.amounts_text(
        {COIN: Decimal("5.9089233"), "USDT": Decimal("312.490849315"), "NGNS": Decimal(300936)}
    )
    assert text == "NGNS 300,936, USDT 312.49, coin 5.91"
