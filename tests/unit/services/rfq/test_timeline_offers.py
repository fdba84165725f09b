"""Who quoted what, as an RFQ's timeline keeps it (GET /_sim/rfqs/{id}, the console's quotes
table): each answer carrying a signed order records its amounts and rate, the selection says how
far each losing quote's rate fell short of the winner's, and the summary carries the amounts the
record shows (the quote's, then what settled)."""

from __future__ import annotations

from typing import Any

from simulator.services.rfq.model import StoredRfq
from simulator.services.shared.amounts import rate_ray, shortfall_bps
from simulator.services.shared.timelines import render_steps
from tests.unit.services.rfq.harness import NGNS, ONE, RATE, USDT, RfqHarness, replace_order


def steps(rfq: RfqHarness, record: StoredRfq, kind: str) -> list[dict[str, Any]]:
    timeline = rfq.history.timelines.get(record.rfq_id)
    assert timeline is not None
    return [s for s in render_steps(timeline, rfq.history.timelines.kinds) if s["kind"] == kind]


def summary(rfq: RfqHarness, record: StoredRfq) -> dict[str, Any]:
    timeline = rfq.history.timelines.get(record.rfq_id)
    assert timeline is not None
    return timeline.summary


async def test_each_quote_keeps_its_amounts_and_the_losers_their_distance_from_the_winner(
    rfq: RfqHarness,
) -> None:
    worse = rfq.maker(1, rate=RATE)
    best = rfq.maker(2, rate=RATE * 3 / 2)
    declining = rfq.maker(3, mode="decline")
    record = await rfq.quoted(sell=100 * ONE)
    assert record.quote is not None
    (order,) = record.quote.orders
    answered = {s["maker"]: s for s in steps(rfq, record, "answered")}
    won = answered[best.wallet.address]
    assert won["outcome"] == "quoted"
    assert (won["sell_amount"], won["buy_amount"], won["fee_amount"]) == (
        str(order.taker_pays),
        str(order.maker_gives),
        str(order.fee_amount),
    )
    assert won["rate_ray"] == str(record.quote.rate_ray)  # the quote's own rate, same rule
    lost = answered[worse.wallet.address]
    lost_rate = rate_ray(int(lost["sell_amount"]), USDT.decimals, int(lost["buy_amount"]), 6)
    assert lost["rate_ray"] == str(lost_rate)
    no_order = answered[declining.wallet.address]
    assert no_order["outcome"] == "declined"
    assert [no_order[k] for k in ("sell_amount", "buy_amount", "fee_amount", "rate_ray")] == [
        None
    ] * 4
    (selected,) = steps(rfq, record, "selected")
    losers = {wallet: (why, behind) for wallet, why, behind in selected["losers"]}
    expected = shortfall_bps(record.quote.rate_ray, lost_rate)
    assert losers == {
        worse.wallet.address: ("worse_price", expected),
        declining.wallet.address: ("declined", None),
    }
    assert 3333 < expected < 3334  # 1 against 1.5: a third short


async def test_a_rejected_order_still_shows_what_it_offered(rfq: RfqHarness) -> None:
    rfq.maker(1)
    cheat = rfq.maker(2, rate=RATE * 2, tamper=replace_order(feeAmount=0))
    record = await rfq.quoted()
    (cheated,) = [s for s in steps(rfq, record, "answered") if s["maker"] == cheat.wallet.address]
    assert (cheated["outcome"], cheated["reason"]) == ("rejected", "terms")
    assert cheated["fee_amount"] == "0"
    assert int(cheated["buy_amount"]) > 0
    (selected,) = steps(rfq, record, "selected")
    assert [why for wallet, why, _ in selected["losers"] if wallet == cheat.wallet.address] == [
        "rejected: terms"
    ]
    assert [b for wallet, _, b in selected["losers"] if wallet == cheat.wallet.address] == [None]


async def test_the_summary_carries_the_quotes_amounts_then_what_settled(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    record = await rfq.quoted(sell=100 * ONE)
    assert record.quote is not None
    assert summary(rfq, record)["sell_amount"] == str(record.quote.taker_pays)
    assert summary(rfq, record)["buy_amount"] == str(record.quote.buy_amount)
    await rfq.fill_all(record)
    assert record.status == "filled"
    assert record.settled_buy is not None
    assert summary(rfq, record)["buy_amount"] == str(record.settled_buy)
    assert summary(rfq, record)["sell_amount"] == str(record.settled_sell)
    assert summary(rfq, record)["buy_token"] == NGNS.address


async def test_exact_output_keeps_the_asked_buy_amount_and_the_quotes_sell_amount(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    record = await rfq.quoted(sell=None, buy=150_000 * 10**6)
    assert record.quote is not None
    assert summary(rfq, record)["buy_amount"] == str(150_000 * 10**6)
    assert summary(rfq, record)["sell_amount"] == str(record.quote.taker_pays)
