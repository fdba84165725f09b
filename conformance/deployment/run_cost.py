"""What a run lends from the funding wallet, per area and chain, and what the pre-run check makes
of it.

A run's ``loans.json`` says what each test lent (conformance/deployment/loans.py); ``python -m
conformance.deployment.run_cost REPORT_DIR`` sums it per area and prints the table
docs/conformance.md shows. :data:`LENT` is that table as measured over a full control-free run
against ``rfqsim serve --no-control-api``; every loan is given back at the end of the run, so a run
needs the sum of what its areas lend, all at once, and keeps only what its tests trade away and the
gas (:data:`KEPT`, measured from the funding wallet's balances before and after such a run).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

from conformance.wire.areas import AREAS, area_of

COIN = "coin"  # the chain's native coin, beside the token symbols
Amounts = dict[int, dict[str, Decimal]]  # chain id -> symbol (or COIN) -> whole amount

# Whole tokens and coin lent by a full control-free run, per area and chain: measured on
# 2026-11-29, once the tests traded the smallest sizes the corridors allow (56 wallets), rounded
# up. The feed's NGNS follows the makers' inventory (its ticker test reserves a share of it).
# Areas absent lend nothing.
LENT: dict[str, Amounts] = {
    "rfq": {97: {"USDC": Decimal(10), "USDT": Decimal("112.5"), COIN: Decimal(5)}},
    "timing": {97: {"USDT": Decimal(6)}},
    "feed": {
        97: {
            "NGNS": Decimal(335_000),
            "USDC": Decimal("70.5"),
            "USDT": Decimal("251.5"),
            COIN: Decimal(7),
        }
    },
    "v1": {
        97: {
            "NGNS": Decimal(47_580),
            "USDC": Decimal("7.5"),
            "USDT": Decimal("2.5"),
            COIN: Decimal(34),
        }
    },
}

# What a full control-free run keeps of the funding wallet's funds (before minus after, same
# measurement): the USDT its takers sold to the venue's makers at the smallest sizes the
# corridors allow, and gas. USDC and NGNS come back a little richer (what the takers bought),
# which no count of runs left depends on.
KEPT: Amounts = {97: {"USDT": Decimal("0.6"), COIN: Decimal("0.12")}}


def lent_per_area(loans_json: Mapping[str, Any]) -> dict[str, Amounts]:
    """Sum a run's ``loans.json`` ("lent": one entry per funded wallet) per area and chain."""
    totals: dict[str, Amounts] = {}
    for loan in loans_json.get("lent") or []:
        area = area_of(str(loan.get("test") or ""))
        chain = totals.setdefault(area, {}).setdefault(int(loan["chain_id"]), {})
        for symbol, amount in (loan.get("tokens") or {}).items():
            chain[symbol] = chain.get(symbol, Decimal(0)) + Decimal(amount)
        chain[COIN] = chain.get(COIN, Decimal(0)) + Decimal(loan.get("native") or 0)
    return totals


def needed(areas: Iterable[str], table: Mapping[str, Amounts] | None = None) -> Amounts:
    """What a run of ``areas`` lends at most, per chain: the sum of its areas' loans."""
    total: Amounts = {}
    for area in areas:
        for chain_id, amounts in (LENT if table is None else table).get(area, {}).items():
            into = total.setdefault(chain_id, {})
            for symbol, amount in amounts.items():
                into[symbol] = into.get(symbol, Decimal(0)) + amount
    return total


def runs_left(
    balances: Mapping[str, Decimal], need: Mapping[str, Decimal], kept: Mapping[str, Decimal]
) -> int | None:
    """Full runs the balances still pay for on one chain: each needs ``need`` at once and keeps
    ``kept``. None when nothing is kept (no end in sight)."""
    counts = []
    for symbol, amount in kept.items():
        if amount <= 0:
            continue
        spare = balances.get(symbol, Decimal(0)) - need.get(symbol, Decimal(0))
        counts.append(max(0, int(spare // amount) + 1) if spare >= 0 else 0)
    return min(counts) if counts else None


def amounts_text(amounts: Mapping[str, Decimal]) -> str:
    """``NGNS 24,065.61, USDT 10, coin 5.91`` (tokens by name, the coin last)."""
    names = sorted(s for s in amounts if s != COIN) + ([COIN] if COIN in amounts else [])
    return ", ".join(f"{name} {_number(amounts[name])}" for name in names)


def _number(amount: Decimal) -> str:
    rounded = amount.quantize(Decimal("0.01")) if amount != amount.to_integral() else amount
    text = f"{rounded:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def markdown(per_area: Mapping[str, Amounts]) -> str:
    """The table docs/conformance.md shows: one row per area and chain."""
    lines = ["| area | chain | lent (whole tokens; coin) |", "|---|---|---|"]
    for area in [*AREAS, *sorted(set(per_area) - set(AREAS))]:
        for chain_id, amounts in sorted(per_area.get(area, {}).items()):
            lines.append(f"| {area} | {chain_id} | {amounts_text(amounts)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.deployment.run_cost",
        description="What a run lent from the funding wallet, per area and chain (from the "
        "loans.json of its report directory).",
    )
    parser.add_argument("report", type=Path, help="the run's report directory")
    args = parser.parse_args(argv)
    path = args.report / "loans.json"
    if not path.exists():
        print(f"{path}: no such file (a run against --base-url writes it)", file=sys.stderr)
        return 2
    print(markdown(lent_per_area(json.loads(path.read_text()))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
