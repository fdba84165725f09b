"""Natural direction and price orientation: pairs are published as BASE_TARGET in the
corridor's direction with NGNS published as NGN; a trade is `buy` when the taker received the
base; its amounts are what left and reached the taker (the fee included); its price is target
per base, normalized by each token's decimals (18 and 6 here), to 18 places, half-even."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from simulator.services.feed.model import decimal_string, price_of
from tests.unit.services.feed.harness import NGNS, USDC, USDT, WBNB, Harness


def published(h: Harness) -> list[tuple[str, str, str]]:
    return [(m.ticker_id, m.base, m.target) for m in h.feed.pairs()]


def test_pairs_are_every_corridor_once_in_natural_direction() -> None:
    h = Harness()
    assert published(h) == [
        ("USDT_NGN", "USDT", "NGN"),  # fiat corridor: NGN per USDT
        ("USDC_USDT", "USDC", "USDT"),
        ("WBNB_USDT", "WBNB", "USDT"),  # asset corridor: USDT per WBNB
        ("USDC_NGN", "USDC", "NGN"),  # the BOOK corridor is listed like any other
    ]
    market = h.feed.markets()[0]
    assert [leg.chain_id for leg in market.legs] == [56, 97], "one ticker across both chains"


def test_published_chains_and_symbols_follow_the_settings() -> None:
    h = Harness(published_symbols={})
    assert published(h)[0] == ("USDT_NGNS", "USDT", "NGNS")
    only_live = Harness(chains=(56,))
    assert all(len(m.legs) == 1 and m.legs[0].chain_id == 56 for m in only_live.feed.markets())


async def test_taker_selling_the_base_is_a_sell_at_target_per_base_fee_included() -> None:
    h = Harness()
    # The taker paid 9.995 USDT to the maker plus a 0.005 USDT fee and received 15,990 NGNS.
    fill = h.fill(gave=NGNS, gave_amount=15_990 * 10**6, got=USDT, got_amount=9_995 * 10**15)
    await h.add(replace(fill, fee_amount=5 * 10**15))
    (trade,) = h.trades().sell
    assert trade.side == "sell"
    assert decimal_string(trade.base_volume) == "10"
    assert decimal_string(trade.target_volume) == "15990"
    assert decimal_string(trade.price) == "1599"


async def test_taker_receiving_the_base_is_a_buy() -> None:
    h = Harness()
    # One WBNB (18 dp) bought for 599.7 USDT (18 dp) to the maker and 0.3 USDT of fee.
    await h.add(
        h.fill(gave=WBNB, gave_amount=10**18, got=USDT, got_amount=5997 * 10**17, fee=3 * 10**17)
    )
    (trade,) = h.trades("WBNB_USDT").buy
    assert (trade.side, decimal_string(trade.price)) == ("buy", "600")
    assert decimal_string(trade.target_volume) == "600"


async def test_six_and_eighteen_decimals_normalize() -> None:
    h = Harness()
    # The taker sold 2.5 USDC (6 dp, fee included) and received 2.499 USDT (18 dp).
    await h.add(
        h.fill(gave=USDT, gave_amount=2499 * 10**15, got=USDC, got_amount=2_498_751, fee=1_249)
    )
    (trade,) = h.trades("USDC_USDT").sell
    assert decimal_string(trade.base_volume) == "2.5"
    assert decimal_string(trade.target_volume) == "2.499"
    assert decimal_string(trade.price) == "0.9996"
    # The other way round: the taker received 3 USDC for 1 USDT: 1/3 USDT per USDC.
    await h.add(h.fill(gave=USDC, gave_amount=3 * 10**6, got=USDT, got_amount=10**18))
    (bought,) = h.trades("USDC_USDT").buy
    assert decimal_string(bought.price) == "0.333333333333333333"


async def test_a_fill_on_the_book_corridor_is_published_under_it() -> None:
    h = Harness()
    await h.add(h.fill(gave=NGNS, gave_amount=1_595 * 10**6, got=USDC, got_amount=10**6))
    (trade,) = h.trades("USDC_NGN").sell
    assert decimal_string(trade.price) == "1595"


def test_numbers_are_plain_decimals_rounded_half_even_to_18_places() -> None:
    assert decimal_string(price_of(Decimal(2), Decimal(3))) == "0.666666666666666667"
    assert decimal_string(price_of(Decimal("1E-19"), Decimal(1))) == "0"
    assert decimal_string(price_of(Decimal("2.5E-18"), Decimal(1))) == "0.000000000000000002"
    assert decimal_string(price_of(Decimal("3.5E-18"), Decimal(1))) == "0.000000000000000004"
    assert decimal_string(Decimal("1E+3")) == "1000"
    assert decimal_string(Decimal(1).scaleb(-18)) == "0.000000000000000001"
    assert decimal_string(Decimal("12.5000")) == "12.5"
    assert decimal_string(Decimal(0)) == "0"
