"""Bad quotes are never used (docs/decisions.md R9): wrong terms, a signature that is not the
maker's, a cutoff outside the window, a deadline before the cutoff, a maker the chain reader
shows underfunded, short of allowance or with a spent nonce. Each is refused with `released`
(reason invalid) naming the fault, and holds nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rfqkit.wallets import demo_wallet, maker_wallet
from simulator.errors import UpstreamError
from simulator.services.shared.amounts import net_of_fee
from tests.unit.services.rfq.harness import (
    NGNS,
    ONE,
    RATE,
    TAKER,
    FakeMaker,
    RfqHarness,
    replace_order,
)

NET = net_of_fee(100 * ONE, 5)  # what the maker receives on a 100 USDT exact-input request
GIVES = int(NET * RATE)

Setup = Callable[[RfqHarness, FakeMaker], None]


def tamper(**changes: Any) -> Setup:
    def setup(rfq: RfqHarness, maker: FakeMaker) -> None:
        maker.tamper = replace_order(**changes)

    return setup


def deadline_before_cutoff(rfq: RfqHarness, maker: FakeMaker) -> None:
    maker.deadline_slack_s = -2


def cutoff_too_soon(rfq: RfqHarness, maker: FakeMaker) -> None:
    maker.life_ms = -1_000  # before replyBy + 5 s


def signed_by_someone_else(rfq: RfqHarness, maker: FakeMaker) -> None:
    maker.signer = maker_wallet(9).private_key


def underfunded(rfq: RfqHarness, maker: FakeMaker) -> None:
    rfq.chain.maker_funds[maker.wallet.address.lower()] = (GIVES - 1, 2**256 - 1)


def short_allowance(rfq: RfqHarness, maker: FakeMaker) -> None:
    rfq.chain.maker_funds[maker.wallet.address.lower()] = (10**40, GIVES - 1)


def nonce_spent_on_chain(rfq: RfqHarness, maker: FakeMaker) -> None:
    rfq.chain.used_nonces.add((maker.wallet.address.lower(), 1_000_001))


BAD_QUOTES: list[tuple[str, Setup, str]] = [
    ("bad signature", signed_by_someone_else, "signature is not by the maker's funding wallet"),
    ("wrong output amount", tamper(outputAmount=NET - 1), f"outputAmount must be {NET}"),
    ("wrong taker", tamper(taker=demo_wallet(5).address), f"taker must be {TAKER.address}"),
    ("wrong input token", tamper(inputToken=TAKER.address), f"inputToken must be {NGNS.address}"),
    (
        "wrong fee",
        tamper(feeAmount=NET * 5 // 10_000 + 1),
        "feeAmount must be outputAmount * 5 / 10000, rounded down",
    ),
    ("deadline before the cutoff", deadline_before_cutoff, "deadline must be at or after"),
    ("cutoff too soon", cutoff_too_soon, "expiresAtMs outside [minExpiresAtMs, maxExpiresAtMs]"),
    ("underfunded maker", underfunded, f"underfunded: balance {GIVES - 1}, committed 0"),
    (
        "short allowance",
        short_allowance,
        f"allowance to the signature-transfer contract is {GIVES - 1}",
    ),
    ("nonce spent on chain", nonce_spent_on_chain, "nonce already used"),
]


@pytest.mark.parametrize(
    ("setup", "detail"), [(s, d) for _, s, d in BAD_QUOTES], ids=[n for n, _, _ in BAD_QUOTES]
)
async def test_a_bad_quote_is_released_as_invalid_and_never_used(
    rfq: RfqHarness, setup: Setup, detail: str
) -> None:
    maker = rfq.maker(1)
    setup(rfq, maker)
    record = (await rfq.request(sell=100 * ONE)).record
    assert (record.status, record.no_quote_reason) == ("no_quote", "no_valid_quote")
    (released,) = maker.told("released")
    assert (released["reason"], released["rfqId"]) == ("invalid", record.rfq_id)
    assert released["quoteId"] == maker.rfqs()[0]["quoteId"]
    assert released["detail"].startswith(detail), released["detail"]
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == 0


async def test_a_wrong_input_amount_on_exact_output_is_refused(rfq: RfqHarness) -> None:
    maker = rfq.maker(1, tamper=lambda o: replace_order(inputAmount=o.inputAmount - 1)(o))
    record = (await rfq.request(sell=None, buy=150_000 * 10**6)).record
    assert record.status == "no_quote"
    (released,) = maker.told("released")
    assert released["detail"] == f"inputAmount must be {150_000 * 10**6}"


async def test_a_bad_quote_does_not_spoil_a_good_one(rfq: RfqHarness) -> None:
    bad = rfq.maker(1, rate=RATE * 2, signer=maker_wallet(9).private_key)
    good = rfq.maker(2)
    record = (await rfq.request()).record
    assert record.quote is not None
    assert [o.maker for o in record.quote.orders] == [good.wallet.address]
    assert [m["reason"] for m in bad.told("released")] == ["invalid"]
    assert record.routing.open_market_quotes_received == 1


async def test_funding_counts_what_the_maker_promised_to_other_live_quotes(
    rfq: RfqHarness,
) -> None:
    maker = rfq.maker(1)
    rfq.chain.maker_funds[maker.wallet.address.lower()] = (GIVES * 3 // 2, 2**256 - 1)
    first = await rfq.quoted()
    second = (await rfq.request()).record
    assert second.status == "no_quote"
    (released,) = maker.told("released")
    assert released["detail"] == f"underfunded: balance {GIVES * 3 // 2}, committed {GIVES}"
    await rfq.service.cancel(first)  # the first quote's hold is dropped ...
    third = await rfq.quoted()  # ... so the same balance serves the next one
    assert third.quote is not None
    assert rfq.inventory.committed(97, maker.wallet.address, NGNS.address) == GIVES


async def test_a_nonce_held_by_another_live_quote_is_refused(rfq: RfqHarness) -> None:
    maker = rfq.maker(1, tamper=replace_order(nonce=42))
    await rfq.quoted()
    second = (await rfq.request()).record
    assert second.status == "no_quote"
    (released,) = maker.told("released")
    assert released["detail"] == "nonce already used"


async def test_unreadable_maker_funding_is_502_and_leaves_nothing_behind(
    rfq: RfqHarness,
) -> None:
    rfq.maker(1)
    rfq.chain.maker_reads_down = True
    with pytest.raises(UpstreamError) as refused:
        await rfq.request()
    assert refused.value.details == {"reason": "chain_unreachable"}
    assert rfq.store.all() == []  # a request that fails while soliciting leaves no record
    assert rfq.slots.count(rfq.caller.identity) == 0
    assert await rfq.funds.committed(97, TAKER.address, "0x" + "a1" * 20) == 0
