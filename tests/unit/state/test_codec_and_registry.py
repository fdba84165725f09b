"""The state codec and the participant registry: every kind of value the stores hold comes
back equal and of the same type; what cannot be written is refused naming its path; a load
replaces state in place, all or nothing; `keep` leaves participants as they are."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from contracts.orders import ZERO_ADDRESS, RfqOrder
from simulator.services.shared import state_codec
from simulator.services.shared.faults import Faults
from simulator.services.shared.state import AttributeState, StateRegistry
from simulator.services.shared.state_codec import StateCodecError, decode, encode
from simulator.settings import LimitSettings


@dataclass(frozen=True)
class Frozen:
    key: bytes
    amount: int


@dataclass
class Store:
    by_bytes: dict[bytes, Frozen] = field(default_factory=dict)
    by_tuple: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    grouped: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    ordered: OrderedDict[str, int] = field(default_factory=OrderedDict)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=3))
    heap: list[tuple[float, str]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    money: Decimal = Decimal("0")
    when: datetime | None = None
    tags: frozenset[str] = frozenset()
    stream: random.Random = field(default_factory=lambda: random.Random(7))
    limits: LimitSettings | None = None


def populated() -> Store:
    store = Store()
    store.by_bytes[b"\x01\x02"] = Frozen(b"\xff", 2**255)
    store.by_tuple[(97, "0xabc")] = {"q1", "q2"}
    store.grouped["maker"].add("q3")
    store.ordered["b"] = 2
    store.ordered["a"] = 1
    store.recent.extend(["x", "y", "z", "w"])
    store.heap.extend([(1.5, "r1"), (0.5, "r0")])
    store.counts.update(["a", "a", "b"])
    store.money = Decimal("1234.000001")
    store.when = datetime(2026, 11, 24, tzinfo=UTC)
    store.tags = frozenset({"t"})
    store.stream.random()
    store.limits = LimitSettings(keyless_per_minute=7)
    return store


def test_every_kind_of_value_comes_back_equal_and_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The sample classes live in this test module: let the codec load them here.
    monkeypatch.setattr(state_codec, "ALLOWED_MODULES", (*state_codec.ALLOWED_MODULES, "tests."))
    store = populated()
    text = json.dumps(encode(store))  # JSON all the way
    back = decode(json.loads(text))
    assert isinstance(back, Store)
    assert back.by_bytes == store.by_bytes
    assert back.by_tuple == store.by_tuple
    assert isinstance(back.grouped, defaultdict)
    back.grouped["new"].add("works")  # the factory came back too
    assert list(back.ordered) == ["b", "a"]
    assert isinstance(back.ordered, OrderedDict)
    assert back.recent == deque(["y", "z", "w"])
    assert back.recent.maxlen == 3
    assert back.heap == store.heap
    assert back.counts == store.counts
    assert isinstance(back.counts, Counter)
    assert back.money == store.money
    assert back.when == store.when
    assert back.tags == store.tags
    assert isinstance(back.tags, frozenset)
    assert back.stream.random() == store.stream.random()
    assert back.limits == store.limits


def test_what_cannot_be_written_is_refused_naming_where(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_codec, "ALLOWED_MODULES", (*state_codec.ALLOWED_MODULES, "tests."))
    store = populated()
    store.ordered["lock"] = asyncio.Lock()  # type: ignore[assignment]
    with pytest.raises(StateCodecError, match=r"\$\.ordered\['lock'\]: cannot write a Lock"):
        encode(store)


def test_classes_outside_rfqsim_are_never_loaded() -> None:
    with pytest.raises(StateCodecError, match="refusing to load class 'os:system'"):
        decode({"__object__": "os:system", "v": {}})
    with pytest.raises(StateCodecError, match="does not exist in this version"):
        decode({"__dataclass__": "simulator.settings:NoSuchClass", "v": {}})


def test_a_load_replaces_state_in_place_and_all_or_nothing() -> None:
    faults = Faults()
    participant = AttributeState.of("access.faults", faults)
    saved = participant.dump()
    held = faults  # what every service holds
    faults.update(venue_paused=True, chain_unreachable=[97])
    participant.load(saved)
    assert held.venue_paused is False
    assert held.chain_unreachable == set()
    faults.update(venue_paused=True)
    broken = dict(saved)
    broken["indexer_paused"] = {"__object__": "os:system", "v": {}}
    with pytest.raises(StateCodecError):
        participant.load(broken)
    assert faults.venue_paused is True  # nothing was replaced


def test_the_registry_keeps_what_it_is_told_to() -> None:
    kept, reset = Faults(), Faults()
    registry = StateRegistry()
    registry.register(
        AttributeState.of("webhooks.faults", kept), AttributeState.of("access.faults", reset)
    )
    baseline = registry.dump()
    kept.update(venue_paused=True)
    reset.update(venue_paused=True)
    registry.load(baseline, keep=("webhooks.",))
    assert kept.venue_paused is True
    assert reset.venue_paused is False
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(AttributeState.of("access.faults", Faults()))


def test_a_class_without_state_attributes_must_say_so() -> None:
    class Service:
        pass

    with pytest.raises(TypeError, match="lists no STATE_ATTRIBUTES"):
        AttributeState.of("x", Service())


def test_a_signed_order_comes_back_and_a_foreign_class_is_refused_when_written() -> None:

    order = RfqOrder(
        reactor="0x" + "11" * 20,
        maker="0x" + "22" * 20,
        taker=ZERO_ADDRESS,
        inputToken="0x" + "33" * 20,
        inputAmount=5,
        outputToken="0x" + "44" * 20,
        outputAmount=7,
        feeAmount=1,
        nonce=9,
        deadline=1_800_000_000,
    )
    assert decode(json.loads(json.dumps(encode({"order": order})))) == {"order": order}
    # A class the loader would refuse to name is refused when the state is written, not when a
    # snapshot is restored: this module is not one of rfqsim's packages.
    with pytest.raises(StateCodecError, match=r"\$\[0\]: cannot write a Frozen"):
        encode([Frozen(b"k", 1)])
