"""Timelines: what happened to each RFQ, v1 swap, limit order and ramp transfer, step by step,
kept as data so the console, `GET /_sim/rfqs/{id}` (and its siblings) and tests read one record.

Each area appends to its own `Timelines` (the port its services see is `TimelineSink`): one
`Timeline` per object, in creation order, holding a small summary for lists and filters and its
steps. Only the last `capacity` objects are kept, whatever the traffic: the oldest drop off as new
ones start. Recording is on the firm-quote path, so a step is a plain tuple `(at, kind, *values)`
appended to a list. Each kind has its type, a `NamedTuple` of those same fields (`at`, `kind`,
then its values, typed; `SimTime` marks a time), listed in the area's step table (`StepKinds`,
with the statuses its objects can have); names and types are applied only when a timeline is
read (`typed_step`, `render_steps`, and the API's one model per kind).

Every step value is JSON-native (str, int, float, bool, None, lists of those), so a dump for
snapshots and the state directory is little more than the data (through the state codec, as
every participant's is)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple, NewType, Protocol, get_type_hints

from simulator.services.shared.events import Event
from simulator.services.shared.state import StateSchema, read_schema

Step = tuple[Any, ...]  # (at, kind, *values): as kept; its kind's NamedTuple names the values
StepType = type[NamedTuple]  # one kind's step: fields `at: SimTime`, `kind: str`, then its values
SimTime = NewType("SimTime", float)  # a simulator time in seconds: rendered as ISO-8601


class StatusStep(NamedTuple):
    """The object's status changed (`Timelines.status`); cause: why, in words."""

    at: SimTime
    kind: str
    status: str
    cause: str


class EventStep(NamedTuple):
    """An event was published about the object (`EventSteps`)."""

    at: SimTime
    kind: str
    type: str
    id: str


class SubmittedStep(NamedTuple):
    """The taker reported its settlement transaction."""

    at: SimTime
    kind: str
    tx_hash: str


@dataclass(frozen=True)
class StepKinds:
    """An area's step table: each kind and its type (a `NamedTuple` whose fields are the kept
    tuple's, in order), and every status its objects can have (the console's status filter)."""

    types: Mapping[str, StepType]
    statuses: tuple[str, ...]

    def names(self, kind: str) -> tuple[str, ...]:
        """The names of a kind's values (after `at` and `kind`); none for an unknown kind."""
        step_type = self.types.get(kind)
        return () if step_type is None else step_type._fields[2:]


@cache
def time_fields(step_type: StepType) -> frozenset[str]:
    """The fields of a step type that are simulator times (`SimTime`, or `SimTime | None`)."""
    return frozenset(
        name
        for name, hint in get_type_hints(step_type).items()
        if hint is SimTime or hint == SimTime | None
    )


ChangeListener = Callable[[str, str], None]  # (topic, object id): told every change


@dataclass
class Timeline:
    object_id: str
    created_at: float  # simulator time the object came to be
    status: str  # its status now, as the area names it
    summary: dict[str, Any]  # JSON-native facts lists show and filters read (taker, makers, ...)
    steps: list[Step] = field(default_factory=list)  # oldest first


class TimelineSink(Protocol):
    """What a service records through: start an object's timeline, add a step, move its status.
    Steps and statuses for an object whose timeline is gone (dropped off, or never started) are
    ignored."""

    def start(
        self,
        object_id: str,
        status: str,
        summary: dict[str, Any],
        created_at: float | None = None,
    ) -> None: ...

    def step(self, object_id: str, kind: str, *values: Any) -> None: ...

    def status(self, object_id: str, status: str, cause: str, *values: Any) -> None: ...

    def get(self, object_id: str) -> Timeline | None: ...


class TimelineArchive(Protocol):
    """Where timelines go when they leave memory (adapters/store/timeline_archive.py: the
    history database). What is put is visible to reads at once."""

    def put(self, topic: str, timelines: list[Timeline]) -> None:
        """Keep these (replacing what was kept under the same ids)."""
        ...

    def get(self, topic: str, object_id: str) -> Timeline | None: ...

    def forget_before(self, created_before: float) -> None:
        """Forget every timeline, of every topic, created before this time."""
        ...

    def all(self, topic: str) -> list[Timeline]:
        """Every one kept of a topic, oldest first (snapshots: a full read)."""
        ...

    def clear(self, topic: str) -> None: ...


class Timelines:
    """The per-area history (implements TimelineSink): the newest `capacity` objects in memory;
    older ones in the archive when there is one (written by `spill`, off the request path),
    else forgotten."""

    def __init__(
        self,
        topic: str,
        clock_time: Callable[[], float],
        kinds: StepKinds,
        *,
        capacity: int,
        changes: ChangeListener | None = None,
        archive: TimelineArchive | None = None,
    ) -> None:
        self.topic = topic  # the area's name on the change feed and in the API (rfqs, swaps, ...)
        self.kinds = kinds  # what each step kind's values are called (render_steps)
        self.capacity = capacity  # objects kept in memory; the oldest leave
        self._time = clock_time
        self.changes = changes  # the live feed (console pages); None: nobody listens
        self.archive = archive
        self.items: OrderedDict[str, Timeline] = OrderedDict()  # by id, oldest first
        # Left `items` (or read back from the archive to change) and not archived yet.
        self._leaving: dict[str, Timeline] = {}

    def start(
        self,
        object_id: str,
        status: str,
        summary: dict[str, Any],
        created_at: float | None = None,
    ) -> None:
        """A new object's timeline (`created_at`: when it came to be elsewhere, else now)."""
        born = self._time() if created_at is None else created_at
        self.items[object_id] = Timeline(object_id, born, status, summary)
        if len(self.items) > self.capacity:
            _, oldest = self.items.popitem(last=False)
            if self.archive is not None:
                self._leaving[oldest.object_id] = oldest
        self._changed(object_id)

    def _changing(self, object_id: str) -> Timeline | None:
        """The timeline to change: in memory, leaving it, or read back from the archive (then
        written back by the next spill)."""
        timeline = self.items.get(object_id) or self._leaving.get(object_id)
        if timeline is None and self.archive is not None:
            timeline = self.archive.get(self.topic, object_id)
            if timeline is not None:
                self._leaving[object_id] = timeline
        return timeline

    def step(self, object_id: str, kind: str, *values: Any) -> None:
        timeline = self._changing(object_id)
        if timeline is not None:
            timeline.steps.append((self._time(), kind, *values))
            self._changed(object_id)

    def update(self, object_id: str, **facts: Any) -> None:
        """Facts of its summary changed (an RFQ's amounts once quoted, once settled)."""
        timeline = self._changing(object_id)
        if timeline is not None:
            timeline.summary.update(facts)
            self._changed(object_id)

    def status(self, object_id: str, status: str, cause: str, *values: Any) -> None:
        """The object's status changed: a `status` step (status, cause, extra values)."""
        timeline = self._changing(object_id)
        if timeline is not None:
            timeline.status = status
            timeline.steps.append((self._time(), "status", status, cause, *values))
            self._changed(object_id)

    def get(self, object_id: str) -> Timeline | None:
        found = self.items.get(object_id) or self._leaving.get(object_id)
        if found is None and self.archive is not None:
            found = self.archive.get(self.topic, object_id)
        return found

    def newest_first(self) -> Iterator[Timeline]:
        return reversed(self.items.values())

    def in_memory_newest_first(self) -> Iterator[Timeline]:
        yield from self.newest_first()
        yield from sorted(self._leaving.values(), key=lambda t: t.created_at, reverse=True)

    def in_memory_ids(self) -> set[str]:
        return {*self.items, *self._leaving}

    def spill(self) -> int:
        """Write the timelines that left memory to the archive; returns how many."""
        if not self._leaving or self.archive is None:
            return 0
        leaving, self._leaving = list(self._leaving.values()), {}
        self.archive.put(self.topic, leaving)
        return len(leaving)

    def _changed(self, object_id: str) -> None:
        if self.changes is not None:
            self.changes(self.topic, object_id)

    def forget(self) -> None:
        self.items.clear()
        self._leaving.clear()

    # --- state (reset, snapshots, the state directory) -------------------------------------

    def saved(self) -> TimelinesSaved:
        return TimelinesSaved(
            timelines=list(self.items.values()), leaving=list(self._leaving.values())
        )

    def restore(self, saved: TimelinesSaved) -> None:
        """The memory tier put back (the archive's rows are a participant of their own)."""
        items = OrderedDict((t.object_id, t) for t in saved.timelines)
        self._leaving = {t.object_id: t for t in saved.leaving}
        while len(items) > self.capacity:
            _, oldest = items.popitem(last=False)
            if self.archive is not None:
                self._leaving[oldest.object_id] = oldest
        self.items = items


class TimelinesSaved(StateSchema):
    """What reset and snapshots put back of an area's timelines in memory, oldest first
    (steps hold JSON values only: times, kinds, ids, amounts as text): those kept, and those
    that left and are not in the archive yet."""

    timelines: list[Timeline]
    leaving: list[Timeline] = []


class TimelineState:
    """A `Timelines` as a state participant (services/shared/state.py)."""

    def __init__(self, name: str, timelines: Timelines) -> None:
        self.name = name
        self._timelines = timelines

    def dump(self) -> dict[str, Any]:
        return self._timelines.saved().model_dump(mode="json")

    def check(self, state: object) -> TimelinesSaved:
        return read_schema(self.name, TimelinesSaved, state)

    def load(self, state: dict[str, Any]) -> None:
        self._timelines.restore(self.check(state))


def typed_step(step: Step, kinds: StepKinds) -> NamedTuple | None:
    """A kept step as its kind's `NamedTuple` (None for a kind the table does not know, or a
    step of an older version with other values)."""
    step_type = kinds.types.get(step[1])
    if step_type is None or len(step) != len(step_type._fields):
        return None
    return step_type._make(step)


def render_step(step: Step, kinds: StepKinds, since: float) -> dict[str, Any]:
    """One step as the API shows it: `at`, `offset_ms` from `since`, `kind` and named values
    (a value the kind does not name, from an older version, is left out)."""
    at, kind, *values = step
    out: dict[str, Any] = {"at": at, "offset_ms": round((at - since) * 1000, 3), "kind": kind}
    out.update(zip(kinds.names(kind), values, strict=False))
    return out


def render_steps(timeline: Timeline, kinds: StepKinds) -> list[dict[str, Any]]:
    return [render_step(s, kinds, timeline.created_at) for s in timeline.steps]


class EventSteps:
    """Subscribes to an area's event log: every event published becomes an `event` step (type,
    id) of its subject's timeline (the id after the type: `rfq.filled:<rfq id>`); its webhook
    deliveries are joined when the timeline is read."""

    def __init__(self, timelines: Timelines) -> None:
        self._timelines = timelines

    def publish(self, event: Event) -> None:
        subject = event.id.partition(":")[2]
        self._timelines.step(subject, "event", event.type, event.id)
