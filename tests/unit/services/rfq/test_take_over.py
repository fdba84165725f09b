"""Several instances: the RFQs of an instance gone, taken over by another (docs/decisions.md
SC19; services/rfq/take_over.py). Two harnesses are two instances on one venue's owners."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.take_over import MISSING_FOR_S, TakeOver
from simulator.services.shared.fills import Fill, FillSubscriber
from tests.unit.services.rfq.fake_owners import VenueOwners
from tests.unit.services.rfq.harness import TX, RfqHarness


@dataclass
class MinedFills:
    """The chain's index: every fill mined, handed again on a replay."""

    mined: list[Fill] = field(default_factory=list)
    asked: list[tuple[int, list[bytes], float]] = field(default_factory=list)

    async def replay(
        self, chain_id: int, order_hashes: Sequence[bytes], since: float, to: FillSubscriber
    ) -> int:
        self.asked.append((chain_id, list(order_hashes), since))
        found = [f for f in self.mined if f.order_hash in order_hashes]
        for fill in found:
            await to(fill)
        return len(found)


def fills_of(harness: RfqHarness, record: StoredRfq) -> list[Fill]:
    assert record.quote is not None
    return [harness.fill(o, log_index=i) for i, o in enumerate(record.quote.orders)]


async def test_a_live_rfq_of_an_instance_gone_is_taken_over_and_its_missed_fill_settles_it() -> (
    None
):
    venue = VenueOwners()
    gone = RfqHarness(owners=venue.at(1))
    gone.maker(1)
    record = await gone.quoted()
    await gone.settled_makers()
    assert venue.live == {1: {record.rfq_id}}
    chain = MinedFills(fills_of(gone, record))  # mined while instance 1 was already gone
    survivor = RfqHarness(owners=venue.at(0))
    maker = survivor.maker(1)  # the same maker, connected to the survivor
    take_over = TakeOver(survivor.service, survivor.settlement, venue.at(0), chain)

    assert await take_over.departed([0], now=50.0) == 0  # just missed: its lease may return
    assert survivor.store.get(record.rfq_id) is None
    assert await take_over.departed([0], now=50.0 + MISSING_FOR_S) == 1

    held = survivor.store.get(record.rfq_id)
    assert held is not None
    assert held.status == "filled"
    assert held.tx_hash == TX
    assert record.quote is not None
    hashes = [o.order_hash for o in record.quote.orders]
    assert chain.asked == [(97, hashes, record.created_at)]
    assert survivor.event_types() == [("rfq.filled", record.rfq_id)]
    assert len(maker.told("filled")) == len(hashes)
    timeline = survivor.history.timelines.get(record.rfq_id)  # listed where it is now
    assert timeline is not None
    assert (timeline.created_at, timeline.status) == (record.created_at, "filled")
    assert timeline.summary["taker"] == record.taker
    statuses = [(s[2], s[3]) for s in timeline.steps if s[1] == "status"]
    assert statuses == [
        ("quoted", "taken over from instance 1, which is gone"),
        ("filled", "every order's fill seen on chain"),
    ]
    assert venue.owner[record.rfq_id] == 0
    assert not any(venue.live.values())  # at rest: nobody needs to take it over again
    assert await take_over.departed([0], now=60.0) == 0
    await survivor.settled_makers()


async def test_a_fill_the_copy_holds_is_not_handed_again_and_one_survivor_takes_it() -> None:
    venue = VenueOwners()
    gone = RfqHarness(owners=venue.at(1))
    gone.maker(1)
    record = await gone.quoted()
    await gone.settled_makers()
    gone.service.submit(record, TX)
    chain = MinedFills(fills_of(gone, record))
    for fill in chain.mined:  # seen by instance 1, copied with its fill
        await gone.settlement.on_fill(fill)
    assert record.status == "filled"
    assert not any(venue.live.values())
    survivor, late = RfqHarness(owners=venue.at(0)), RfqHarness(owners=venue.at(2))
    maker = survivor.maker(1)
    first = TakeOver(survivor.service, survivor.settlement, venue.at(0), chain)
    second = TakeOver(late.service, late.settlement, venue.at(2), chain)

    assert await first.departed([0, 2], now=0.0 + MISSING_FOR_S * 2) == 0  # none live
    assert await first.record(record.rfq_id, 1)  # a request for it reached instance 0
    assert not await second.record(record.rfq_id, 1)  # instance 2 asked a moment later
    held = survivor.store.get(record.rfq_id)
    assert held is not None
    assert held.status == "filled"
    assert maker.told("filled") == []  # the fill was in the copy: not handed twice
    assert survivor.event_types() == []
    assert late.store.get(record.rfq_id) is None
    await survivor.settled_makers()


async def test_an_instance_known_gone_is_taken_over_without_the_patience() -> None:
    """Its process exited (the first instance saw it): no lease can come back."""
    venue = VenueOwners()
    gone = RfqHarness(owners=venue.at(1))
    gone.maker(1)
    record = await gone.quoted()
    await gone.settled_makers()
    survivor = RfqHarness(owners=venue.at(0))
    survivor.maker(1)
    take_over = TakeOver(survivor.service, survivor.settlement, venue.at(0), MinedFills())
    take_over.gone_for_sure(1)
    assert await take_over.departed([0], now=50.0) == 1  # at the first round
    held = survivor.store.get(record.rfq_id)
    assert held is not None
    assert held.status == "quoted"
    await survivor.settled_makers()
