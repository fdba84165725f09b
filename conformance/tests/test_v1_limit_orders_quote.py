"""GET /v1/limit-orders/quote and prepare with pricing (spec 3): minBuyAmount, fastFill against
the best filling market-maker bid with its depth block and unavailable reasons, queue computed
exactly by the spec's formula against the best competing resting order, both in the maker frame
(buyToken per sellToken), and the pricing block prepare returns. The competing orders of the
queue checks are the test's own, on chain 97's RFQ corridor USDT/NGNS (18 and 6 decimals),
where the simulated fleet rests none; the best competing rate is read from the order book.

Without control the integrator is the given ``key:v1``, makers are funded from the given taker
wallet, and what the spec leaves to the venue (the fee's size and so minBuyAmount, the reason
strings, extra fields, the `queue` pricing mode) is held to rfqsim's decisions only on rfqsim.
"""

from __future__ import annotations

import pytest

from conformance.calls.v1_book import (
    RAY,
    Integrator,
    book_rate,
    funded_maker,
    limit_order_quote,
    order_book,
    place,
    prepare,
    prepare_body,
    rate,
    wait_fast_fill_bids,
)
from conformance.calls.v1_target import (
    Shapes,
    book_chain,  # noqa: F401  (overrides the chain fixture)
)
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.venue import Token, VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data, assert_error
from rfqkit.wallets import Wallet

pytestmark = pytest.mark.needs("key:v1")
PRICING_FIELDS = {"mode", "marginBps", "assumedRateRay", "depth"}


QUOTE_FIELDS = {
    "sellAmount",
    "minBuyAmount",
    "fastFill",
    "fastFillUnavailableReason",
    "queue",
    "depth",
}
DEPTH_FIELDS = {"makers", "totalCapacity", "maxMakerCapacity"}
MIN_BUY_AMOUNT = 2000  # rfqsim: 10000 / 5 bp, the smallest output whose fee is one atomic unit


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote",
    "v1/endpoints/get-v1-limit-orders-quote/query",
    "v1/endpoints/get-v1-limit-orders-quote/fastfill-crosses-best-market-maker",
    "v1/endpoints/get-v1-limit-orders-quote/depth-figures-advisory-change",
    "v1/resources/limit-order-quote-response/sellamount-minbuyamount-smallest-output",
    "v1/resources/limit-order-quote-response/rates-maker-frame-buytoken-per-selltoken",
)
def test_fast_fill_is_priced_off_the_best_filling_bid_with_fee_and_margin_headroom(
    integrator: Integrator, chain: VenueChain, target: Target
) -> None:
    shapes = Shapes(target)
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(800)  # the maker sells 800 NGNS for USDC on the BOOK corridor
    data = wait_fast_fill_bids(integrator.client, chain, ngns, usdc, sell)
    shapes.fields(data, QUOTE_FIELDS if shapes.exact else QUOTE_FIELDS - {"depth"})
    assert data["sellAmount"] == str(sell)
    if shapes.exact:
        assert data["minBuyAmount"] == str(MIN_BUY_AMOUNT)
    assert int(data["minBuyAmount"]) > 0
    fast = data["fastFill"]
    assert fast is not None, data
    assert data["fastFillUnavailableReason"] is None
    shapes.fields(fast, {"buyAmount", "rateRay", "marginBps", "depth"})
    assert fast["marginBps"] == 10, "marginBps defaults to 10"
    shapes.fields(fast["depth"], DEPTH_FIELDS)
    assert fast["depth"]["makers"] >= 1
    assert int(fast["depth"]["maxMakerCapacity"]) >= sell
    assert int(fast["depth"]["totalCapacity"]) >= int(fast["depth"]["maxMakerCapacity"])
    # Maker frame: USDC per NGNS, decimal-normalised, about 1/1600 with the operator's edge.
    buy = int(fast["buyAmount"])
    assert fast["rateRay"] == str(rate(sell, 6, buy, 6))
    if shapes.exact:  # the simulated fleet's price
        assert RAY // 1700 < int(fast["rateRay"]) < RAY // 1600
    # More margin conceded, less asked: buyAmount * (1 + (fee + marginBps) / 10000) is the same
    # bid whatever the margin (within rounding and the operator's levels moving a little).
    asked = {10: buy}
    for margin in (0, 510):
        other = limit_order_quote(integrator.client, chain, ngns, usdc, sell, marginBps=margin)[
            "fastFill"
        ]
        assert other["marginBps"] == margin
        asked[margin] = int(other["buyAmount"])
    assert asked[0] > asked[10] > asked[510]
    if shapes.exact:  # rfqsim's 5 bp fee
        bids = [amount * (10_000 + 5 + margin) for margin, amount in asked.items()]
        assert max(bids) - min(bids) <= max(bids) // 10_000, asked


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote/fastfill-crosses-best-market-maker",
    "v1/resources/limit-order-quote-response/sellamount-minbuyamount-smallest-output",
)
def test_fast_fill_is_null_with_a_reason_when_no_single_maker_can_take_the_order(
    integrator: Integrator, chain: VenueChain, target: Target
) -> None:
    exact = target.is_simulator  # the reason strings and the top-level depth are rfqsim's
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    probe = wait_fast_fill_bids(integrator.client, chain, ngns, usdc, ngns.units(800))
    depth = probe["depth"] if exact else probe["fastFill"]["depth"]  # B23: the same block
    ceiling = int(depth["maxMakerCapacity"])
    too_big = limit_order_quote(integrator.client, chain, ngns, usdc, ceiling * 2 + 1)
    assert too_big["fastFill"] is None
    reason = too_big["fastFillUnavailableReason"]
    assert reason == "exceeds_max_maker_capacity" if exact else isinstance(reason, str), reason
    if exact:
        assert set(too_big["depth"]) == DEPTH_FIELDS
        assert int(too_big["depth"]["maxMakerCapacity"]) < ceiling * 2 + 1
    tiny = limit_order_quote(integrator.client, chain, ngns, usdc, ngns.units(1))  # ~0.0006 USDC
    assert tiny["fastFill"] is None
    reason = tiny["fastFillUnavailableReason"]
    assert reason == "below_min_buy_amount" if exact else isinstance(reason, str), reason
    if exact:
        assert tiny["minBuyAmount"] == str(MIN_BUY_AMOUNT)


def _best_competing(client: Client, chain: VenueChain, sell: Token, buy: Token) -> int:
    """The highest resting book rate among orders selling `sell` for `buy`: the order book a
    taker sees for the opposite direction."""
    book = order_book(client, chain, buy, sell)
    return max(int(o["rateRay"]) for o in book["offers"])


def _queue(best: int, sell_amount: int, sell_decimals: int, buy_decimals: int) -> tuple[int, int]:
    """The spec's formula, word for word."""
    queue_rate = best * (10_000 + 2) // 10_000
    buy = sell_amount * 10**buy_decimals * RAY // (queue_rate * 10**sell_decimals)
    return buy, RAY * RAY // queue_rate


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote/queue-rests-order-just",
    "v1/endpoints/get-v1-limit-orders-quote/queue-quote-can-worse",
    "v1/resources/limit-order-quote-response/rates-maker-frame-buytoken-per-selltoken",
)
@pytest.mark.parametrize("side", ["NGNS->USDT", "USDT->NGNS"])
@pytest.mark.needs("taker_wallet")
def test_queue_follows_the_spec_formula_in_both_orientations(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, side: str
) -> None:
    sell_symbol, buy_symbol = side.split("->")
    sell, buy = chain.token(sell_symbol), chain.token(buy_symbol)
    # A competing ask on that side (an ask: the operator, bidding below the mid, leaves it).
    if sell_symbol == "NGNS":
        amount, wanted = sell.units(1500), buy.units(1)
    else:
        amount, wanted = sell.units(1), buy.units(1700)
    maker = funded_maker(chain, source, {sell: amount})
    place(integrator, clock, chain, maker, sell, amount, buy, buy_amount=wanted)
    best = _best_competing(integrator.client, chain, sell, buy)
    assert best >= book_rate(amount, sell.decimals, wanted, buy.decimals)
    size = amount // 2
    data = limit_order_quote(integrator.client, chain, sell, buy, size)
    expected_buy, expected_rate = _queue(best, size, sell.decimals, buy.decimals)
    assert data["queue"] == {"buyAmount": str(expected_buy), "rateRay": str(expected_rate)}
    # Resting there beats the best competing order by the 2 bp edge.
    assert book_rate(size, sell.decimals, expected_buy, buy.decimals) > best
    # "Equivalently" (within the rounding of the two floors).
    again = size * expected_rate * 10**buy.decimals // (RAY * 10**sell.decimals)
    assert abs(again - expected_buy) <= 1 + expected_buy // 10**9
    # queue is null when the buyAmount falls below minBuyAmount (reachable when the output
    # token has 6 decimals; with 18 even one atomic unit sold asks more than minBuyAmount).
    min_buy = int(data["minBuyAmount"])
    tiny = size * (min_buy - 1) // expected_buy
    if tiny:
        assert limit_order_quote(integrator.client, chain, sell, buy, tiny)["queue"] is None


@pytest.mark.spec("v1/endpoints/get-v1-limit-orders-quote/queue-rests-order-just")
def test_queue_is_null_on_an_empty_side(
    integrator: Integrator, chain: VenueChain, target: Target
) -> None:
    # No resting order sells WBNB for USDT on chain 97 in this suite; a deployment may have one.
    wbnb, usdt = chain.token("WBNB"), chain.token("USDT")
    offers = order_book(integrator.client, chain, usdt, wbnb)["offers"]
    if offers and not target.is_simulator:
        pytest.skip("the deployment's book has orders selling WBNB for USDT: no empty side")
    assert offers == []
    assert limit_order_quote(integrator.client, chain, wbnb, usdt, wbnb.units(1))["queue"] is None


@pytest.mark.spec(
    "v1/endpoints/get-v1-limit-orders-quote/query",
    "v1/endpoints/must-not-combined",
    "v1/limits/list-limits",
    "v1/errors/400-invalid_request",
)
def test_quote_refuses_bad_parameters(integrator: Integrator, chain: VenueChain) -> None:
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    base = {
        "chainId": chain.chain_id,
        "sellToken": ngns.address,
        "buyToken": usdc.address,
        "sellAmount": "1000000",
    }
    wallets = [f"0x{i:040x}" for i in range(1, 12)]
    for bad in (
        {"marginBps": -1},
        {"marginBps": 1001},
        {"marginBps": "ten"},
        {"sellAmount": None},
        {"sellAmount": "1.5"},
        {"buyToken": ngns.address},
        {"chainId": 999_999},
        {"preferredLiquidityWallets": ",".join(wallets)},
        {"preferredLiquidityWallets": wallets[0], "restrictedLiquidityWallets": wallets[1]},
    ):
        query = {k: v for k, v in {**base, **bad}.items() if v is not None}
        resp = integrator.client.get("/v1/limit-orders/quote", params=query)
        assert_error(resp, 400, "invalid_request")
    ok = {**base, "marginBps": 1000, "restrictedLiquidityWallets": ",".join(wallets[:10])}
    assert_data(integrator.client.get("/v1/limit-orders/quote", params=ok))


@pytest.mark.spec(
    "v1/resources/limit-order-prepare-response/when-pricing-used-response",
    "v1/endpoints/post-v1-limit-orders-prepare/mode-fastfill-documented-value",
    "v1/endpoints/post-v1-limit-orders-prepare/caller-should-verify-assumed",
)
@pytest.mark.needs("taker_wallet")
def test_prepare_with_pricing_carries_the_assumed_rate_and_reference_depth(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet, target: Target
) -> None:
    shapes = Shapes(target)
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    deadline = clock.now_ms() // 1000 + 600
    maker = Wallet.create()
    sell = ngns.units(1000)
    wait_fast_fill_bids(integrator.client, chain, ngns, usdt, sell)
    fast = prepare(
        integrator.client,
        prepare_body(
            chain,
            maker,
            ngns,
            sell,
            usdt,
            deadline=deadline,
            pricing={"mode": "fastFill", "marginBps": 25},
        ),
    )
    pricing = fast["pricing"]
    shapes.fields(
        pricing, {"assumedRateRay", "depth"} | ({"mode", "marginBps"} if shapes.exact else set())
    )
    if shapes.exact:  # the block's mode and marginBps are rfqsim's (the spec names two fields)
        assert (pricing["mode"], pricing["marginBps"]) == ("fastFill", 25)
        assert set(pricing["depth"]) == DEPTH_FIELDS
    # What a careful caller checks before signing: the order asks exactly the assumed rate.
    asked = int(fast["order"]["outputAmount"])
    assert pricing["assumedRateRay"] == str(rate(sell, 6, asked, 18))
    # Without pricing there is no pricing block.
    plain = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdt, deadline=deadline, buy_amount=asked),
    )
    assert "pricing" not in plain
    if not shapes.exact:
        return  # other pricing modes: "not shown"
    # queue (rfqsim's second mode) mirrors the quote's queue block.
    competitor = funded_maker(chain, source, {ngns: ngns.units(1500)})
    place(
        integrator, clock, chain, competitor, ngns, ngns.units(1500), usdt, buy_amount=usdt.units(1)
    )
    best = _best_competing(integrator.client, chain, ngns, usdt)
    queued = prepare(
        integrator.client,
        prepare_body(chain, maker, ngns, sell, usdt, deadline=deadline, pricing={"mode": "queue"}),
    )
    expected_buy, expected_rate = _queue(best, sell, 6, 18)
    assert queued["order"]["outputAmount"] == str(expected_buy)
    assert queued["pricing"]["assumedRateRay"] == str(expected_rate)
    assert queued["pricing"]["mode"] == "queue"
    assert queued["pricing"]["marginBps"] == 10
