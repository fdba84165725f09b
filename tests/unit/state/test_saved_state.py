"""State saved by declaration (services/shared/state.py): every participant the simulator
registers writes through a schema of its own and reads back exactly what it wrote; a saved state
that does not fit a schema (an older version's, a foreign one) is refused naming the participant
and the field, and nothing is replaced.

The round trip runs on each participant as the area's own builder wires it, with the area's
state made busy first (quotes, fills, a failed RFQ corrected late, keys and grants, orders and
swaps, transfers, webhook deliveries, trades on the feed, the provider sandbox's customers), and
is checked on a fresh twin: load what the busy one dumped (through JSON), dump again, equal."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account

from provider_sandbox.clock import SandboxClock
from provider_sandbox.config import SandboxConfig
from provider_sandbox.core import Sandbox
from provider_sandbox.kyc import submit
from provider_sandbox.state import SandboxCustomer
from simulator.adapters.rfq.indexer import FillIndexer
from simulator.adapters.store.history_db import TABLES, HistoryDb, HistorySaved, HistoryState
from simulator.adapters.store.rfq_archive import SqliteRfqArchive
from simulator.adapters.store.timeline_archive import SqliteTimelineArchive
from simulator.api.http.appkeys import STATE
from simulator.clock import Clock
from simulator.errors import UpstreamError
from simulator.randomness import RandomSource
from simulator.runtime.access import access_state, build_access
from simulator.runtime.app import create_app
from simulator.runtime.feed import feed_state
from simulator.runtime.limit_orders import book_state
from simulator.runtime.provider import SANDBOX_STATE, SandboxParticipant
from simulator.runtime.ramp import ramp_state
from simulator.runtime.rfq import indexer_state, rfq_state
from simulator.runtime.state import shared_state
from simulator.runtime.swaps import swaps_state
from simulator.runtime.webhooks import build_webhooks, webhooks_state
from simulator.services.ramp.ports import ProviderTransfer, ProviderUnreachable
from simulator.services.ramp.webhooks import sign
from simulator.services.rfq.store import TieredRfqStore
from simulator.services.shared.fills import Fill
from simulator.services.shared.idempotency import (
    IdempotencyScope,
    IdempotencyStore,
    StoredResponse,
)
from simulator.services.shared.state import (
    SavedAttributes,
    StateFormatError,
    StateParticipant,
    StateRegistry,
)
from simulator.services.swaps.model import SwapRecord
from simulator.settings import LimitSettings, WebhookSettings, load_settings
from tests.unit.services.feed.harness import NGNS, USDT
from tests.unit.services.feed.harness import Harness as FeedHarness
from tests.unit.services.limit_orders.harness import build, caller, place
from tests.unit.services.ramp_events import event
from tests.unit.services.ramp_harness import SECRET, NoChain, Ramp, sign_proof
from tests.unit.services.rfq.harness import TX, RfqHarness
from tests.unit.services.swaps.swap_requests import COST, TAKER, swap_request
from tests.unit.webhook_fakes import (
    MemoryDeliveryArchive,
    RecordingCertificates,
    ScriptedTransport,
    rfq_event,
)

World = dict[str, StateParticipant]


def by_name(participants: list[StateParticipant]) -> World:
    return {p.name: p for p in participants}


async def shared(busy: bool) -> World:
    clock, random = Clock(), RandomSource(9)
    ids = random.fork("ids")  # streams are forked when the app is built, drawn from later
    idempotency = IdempotencyStore(clock)
    if busy:
        await clock.advance(90)
        ids.new_id("x", 8)
        scope = IdempotencyScope("key:tx_test_a", "POST", "/v1/swaps", "k-1")
        _, record = await idempotency.begin(scope)
        record.fingerprint = "f" * 64
        headers = (("Content-Type", "application/json"),)
        await idempotency.finish(record, StoredResponse(201, headers, b'{"data":{}}', "req_1"))
    return by_name(shared_state(clock, random, idempotency))


async def access(busy: bool) -> World:
    clock = Clock()
    area = build_access(load_settings(environ={}), clock, RandomSource(1), signatures=NoChain())
    if busy:
        partner = area.keys.create_partner("unit")
        area.keys.create_key(partner_id=partner.partner_id, environment="test", scopes=frozenset())
        area.limiter.hit("rate:ip:127.0.0.1", 10)
        account = Account.create()
        proof = sign_proof(clock, account)
        await area.proofs.authorize(
            taker=account.address, chain_id=97, proof=proof, caller="ip:127.0.0.1"
        )
        area.faults.update(chain_unreachable={97}, internal_errors=2)
        area.limits = LimitSettings(outstanding_default=3)
    return by_name(access_state(area))


async def busy_rfq() -> RfqHarness:
    harness = RfqHarness()
    harness.maker(1)
    filled = await harness.quoted()
    await harness.fill_all(filled)
    await harness.quoted()  # live: holds, reservations, a slot
    failed = await harness.quoted()
    assert failed.quote is not None
    harness.service.submit(failed, TX)
    await harness.advance_to(failed.quote.order_deadline + 1)
    await harness.settlement.sweep()
    await harness.fill_all(failed, tx_hash="0x" + "cd" * 32)  # the late fill
    await harness.settled_makers()
    return harness


async def rfq(busy: bool) -> World:
    harness = await busy_rfq() if busy else RfqHarness()
    return by_name(rfq_state(harness.area))


HISTORY_FILES: list[HistoryDb] = []  # closed (temporary files removed) after the module


@pytest.fixture(autouse=True, scope="module")
def _close_history_files() -> Iterator[None]:
    yield
    for db in HISTORY_FILES:
        db.close()


async def history(busy: bool) -> World:
    """The history file: the busy RFQ world's records at rest and its timelines, moved there.
    Its dump names a copy of the file, so the generic round trip below compares the rows."""
    db = HistoryDb()
    HISTORY_FILES.append(db)
    rfq_archive, timeline_archive = SqliteRfqArchive(db), SqliteTimelineArchive(db)
    if busy:
        harness = await busy_rfq()
        store = harness.store
        assert isinstance(store, TieredRfqStore)
        store.archive = rfq_archive  # instead of the harness's fake
        assert store.spill(float("inf")) == 3  # filled, corrected late, and one that expired
        timelines = harness.area.deps.history.timelines
        timelines.archive = timeline_archive
        timelines.capacity = 0
        timelines.restore(timelines.saved())  # over capacity: every one leaves memory
        assert timelines.spill() == 3
    return by_name([HistoryState(db, [rfq_archive.restored, timeline_archive.restored])])


def history_rows(participant: StateParticipant, state: dict[str, Any]) -> object:
    """What a history dump stands for: every row of the copy it names."""
    path = HistorySaved.model_validate(state).backup
    with contextlib.closing(sqlite3.connect(path)) as copy:
        return {
            table: sorted(copy.execute(f"SELECT * FROM {table}").fetchall()) for table in TABLES
        }


async def book_and_swaps(busy: bool) -> World:
    h = build()
    if busy:
        for maker in range(3):
            await place(h, sell_amount=1600 * 10**6, buy_amount=10**6, maker=maker)
        swap = await h.swaps.create(caller(), swap_request(2 * COST))
        assert isinstance(swap, SwapRecord)
        for order in swap.orders:
            h.chain.mine_fill(order.order, TAKER, "0x" + "ef" * 32, h.clock.time())
        await h.swaps.get(caller(), swap.swap_id)  # the read catches the index up: both fill
        await h.sweep.sweep()
    return by_name([*book_state(h.book_area), *swaps_state(h.swaps_area)])


async def lost(transfer_id: str, *, reference: str) -> ProviderTransfer:
    raise ProviderUnreachable("connection reset before the provider answered")


async def ramp(busy: bool) -> World:
    harness = Ramp()
    if busy:
        await harness.verified()
        stalled = (await harness.create(email="buyer@example.com")).record
        sold = (await harness.create("sell", intent_key="intent-key-000002")).record
        received = harness.fake.set_status(sold.provider_transfer_id, "funds_received")
        body = event(harness, received, "evt_1")
        harness.webhooks.receive("ngnramp", body, sign(SECRET, 1, body))
        harness.move(stalled, "funds_converted")
        harness.fake.customers[stalled.customer_id or ""].balance = stalled.target_amount
        await harness.clock.advance(9)  # past the 8 s re-check: the read sees it stuck
        await harness.retries.check(stalled.id, harness.call())
        await harness.clock.advance(1200)
        harness.fake.retry_payout = lost  # type: ignore[method-assign]
        with pytest.raises(UpstreamError):  # the retry's booking is never answered
            await harness.retries.retry(stalled.id, harness.call())
        await harness.sweep.sweep()
    return by_name(ramp_state(harness.area))


async def webhooks(busy: bool) -> World:
    clock = Clock()
    area = build_webhooks(
        WebhookSettings(),
        clock,
        RandomSource(7),
        transport=ScriptedTransport(clock),
        certificates=RecordingCertificates(),
        archive=MemoryDeliveryArchive(),
    )
    if busy:
        area.registry.create("ptn_a", "https://a.example/", ["rfq.expired", "rfq.filled"])
        area.dispatcher.publish(rfq_event("rfq.expired", "rfq_1", "ptn_a"))
        area.dispatcher.publish(rfq_event("rfq.filled", "rfq_2", "ptn_a"))
        area.faults.update(duplicate=True, delay_ms=None, drop_first=1)
    return by_name(webhooks_state(area))


async def feed(busy: bool) -> World:
    harness = FeedHarness()
    if busy:
        await harness.add(
            harness.fill(gave=NGNS, gave_amount=1500 * 10**6, got=USDT, got_amount=10**18)
        )
        await harness.add(
            harness.fill(gave=USDT, gave_amount=10**18, got=NGNS, got_amount=1490 * 10**6)
        )
    return by_name(feed_state(harness.area))


async def no_fill(fill: Fill) -> None:
    """The indexer's subscriber: this test runs no chain, so none ever comes."""


async def indexer(busy: bool) -> World:
    index = FillIndexer(None, "0x" + "11" * 20, no_fill)  # type: ignore[arg-type]  # no chain
    if busy:
        index.next_block = 1234
    return by_name([indexer_state(97, index)])


async def sandbox(busy: bool) -> World:
    core = Sandbox(SandboxConfig(chains=(), seed=3), SandboxClock())
    if busy:
        state = core.state
        customer = SandboxCustomer(
            id=state.new_id("cus"),
            type="individual",
            reference="0x" + "ab" * 20,
            first_name="Ada",
            last_name="Obi",
            email="ada@example.com",
            phone="+2348012345678",
            birth_date="31-01-1990",
            address={"city": "Lagos"},
            created_at=1_700_000_000.5,
            balance=Decimal("12.5"),
        )
        customer.review = submit(customer, "A1234567", 1_700_000_001.0, 30.0)
        state.customers[customer.id] = customer
        state.calls["POST /api/v1/customers"] += 1
        core.walk.level(15)
    return {SANDBOX_STATE: SandboxParticipant(core)}


WORLDS: list[Callable[[bool], Awaitable[World]]] = [
    shared,
    access,
    rfq,
    history,
    book_and_swaps,
    ramp,
    webhooks,
    feed,
    indexer,
    sandbox,
]
PARTICIPANTS = [
    "clock",
    "random",
    "idempotency",
    "access.keys",
    "access.limiter",
    "access.proofs",
    "access.faults",
    "access.limits",
    "rfq.store",
    "rfq.inventory",
    "rfq.funds",
    "rfq.slots",
    "rfq.events",
    "rfq.timelines",
    "rfq.replies",
    "history",
    "book.store",
    "book.events",
    "book.timelines",
    "swaps.store",
    "swaps.events",
    "swaps.timelines",
    "ramp.transfers",
    "ramp.customers",
    "ramp.emails",
    "ramp.retry",
    "ramp.sweep",
    "ramp.webhooks",
    "ramp.timelines",
    "webhooks.registry",
    "webhooks.outbox",
    "webhooks.faults",
    "feed.store",
    "rfq.indexer.97",
    SANDBOX_STATE,
]


async def participant(name: str, busy: bool) -> StateParticipant:
    for world in WORLDS:
        found = (await world(busy)).get(name)
        if found is not None:
            return found
    raise AssertionError(f"no world registers {name}")


def test_every_participant_of_the_app_is_covered_here() -> None:
    """The app's own registry (the indexers and the sandbox register theirs while they run);
    the participants that only forget (caches, the journal) save nothing."""
    app = create_app(load_settings(environ={}), start_chains=False)
    registry = app[STATE].registry
    forgotten = {"scenario", "feed.cache", "journal", "console"}
    saved = {name for name in registry.names if name not in forgotten}
    assert saved == set(PARTICIPANTS) - {"rfq.indexer.97", SANDBOX_STATE}


def as_read(participant: StateParticipant, state: dict[str, Any]) -> object:
    """`state` as the participant's schema reads it. A set is written as a list in the set's
    iteration order, which for strings follows the process's hash seed (a new one in every
    process, so in every xdist worker): one set loaded back iterates in another order in one
    process of ~40, and the same state would be written as another list. Compared as read,
    sets are sets and every list keeps its order."""
    if isinstance(participant, SavedAttributes):
        return participant.check(state)
    if isinstance(participant, HistoryState):
        return history_rows(participant, state)
    return state


@pytest.mark.parametrize("name", PARTICIPANTS)
async def test_a_participant_reads_back_what_it_wrote(name: str) -> None:
    busy = await participant(name, busy=True)
    written = busy.dump()
    assert written, f"{name} wrote nothing"
    through_json = json.loads(json.dumps(written))
    fresh = await participant(name, busy=False)
    assert fresh.dump() != written, f"{name}: the busy state is no different from a fresh one"
    fresh.load(through_json)
    assert as_read(fresh, fresh.dump()) == as_read(fresh, written)


@pytest.mark.parametrize(
    ("name", "state", "said"),
    [
        ("rfq.inventory", {"holds": {}}, "by_book: Field required"),
        ("access.keys", {"partners": {}, "keys": {"k": {"key_id": 5}}}, "keys.k"),
        ("clock", {"offset": 5}, "offset_seconds: Field required"),
        ("rfq.store", {"__dict__": []}, "does not fit this version's RfqStoreSaved"),
    ],
)
async def test_an_older_or_foreign_state_is_refused_naming_the_participant(
    name: str, state: dict[str, Any], said: str
) -> None:
    target = await participant(name, busy=False)
    before = target.dump()
    with pytest.raises(StateFormatError) as refused:
        target.load(state)
    message = str(refused.value)
    assert message.startswith(f"the saved state of {name} does not fit")
    assert said in message
    assert target.dump() == before  # nothing replaced


async def test_the_registry_reads_every_part_before_it_replaces_any() -> None:
    """One part that does not fit leaves every participant as it was."""
    registry = StateRegistry()
    world = await shared(busy=False)
    registry.register(*world.values())
    busy = await shared(busy=True)
    state = {name: p.dump() for name, p in busy.items()}
    before = registry.dump()
    state["idempotency"] = {"records": "not pairs"}
    with pytest.raises(StateFormatError, match="idempotency"):
        registry.load(state)
    assert registry.dump() == before
    with pytest.raises(StateFormatError, match="idempotency"):
        registry.check(state)
