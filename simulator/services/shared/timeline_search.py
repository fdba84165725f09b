"""Looking back over the timelines (GET /_sim/rfqs and its siblings, the console's lists): the
filter a list applies, the cursor that pages through it, and the archive port behind the memory
tier (adapters/store/timeline_archive.py keeps the timelines that left memory in the history
database, until the correction window and the retention have passed).

Lists are newest first by (created_at, id); a cursor is the last item's key, so a page never
repeats or skips an object while new ones arrive at the head."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Protocol, runtime_checkable

from simulator.services.shared.timelines import Timeline, TimelineArchive, Timelines

# Per topic, the summary field `taker=` matches (a limit order's maker is its owner; a ramp
# transfer's wallet).
TAKER_FIELDS: dict[str, str] = {
    "rfqs": "taker",
    "swaps": "taker",
    "limit-orders": "maker",
    "transfers": "wallet",
}

Key = tuple[float, str]  # (created_at, object id): the list's order, newest first


def key_of(timeline: Timeline) -> Key:
    return (timeline.created_at, timeline.object_id)


def pair_of(summary: dict[str, object]) -> str | None:
    """`sell/buy` token addresses, lowercase, when the object names both."""
    sell, buy = summary.get("sell_token"), summary.get("buy_token")
    if isinstance(sell, str) and isinstance(buy, str):
        return f"{sell}/{buy}".lower()
    return None


def makers_of(summary: dict[str, object]) -> set[str]:
    """Wallets and credential prefixes of the makers involved, lowercase."""
    found: set[str] = set()
    for field in ("makers", "maker_ids"):
        values = summary.get(field)
        if isinstance(values, list):
            found |= {str(v).lower() for v in values}
    return found


@dataclass(frozen=True)
class TimelineFilter:
    status: str | None = None  # lowercase
    taker: str | None = None  # lowercase; matched against the topic's TAKER_FIELDS entry
    makers: frozenset[str] | None = None  # lowercase wallets / credential prefixes, any of
    pair: str | None = None  # "sell/buy" token addresses, lowercase
    since: float | None = None  # created at or after
    until: float | None = None  # created before
    before: Key | None = None  # the cursor: strictly older than this key

    def matches(self, topic: str, timeline: Timeline) -> bool:
        summary = timeline.summary
        if self.status is not None and timeline.status.lower() != self.status:
            return False
        if self.taker is not None:
            taker = summary.get(TAKER_FIELDS.get(topic, "taker"))
            if not isinstance(taker, str) or taker.lower() != self.taker:
                return False
        if self.makers is not None and not makers_of(summary) & self.makers:
            return False
        if self.pair is not None and pair_of(summary) != self.pair:
            return False
        if self.since is not None and timeline.created_at < self.since:
            return False
        if self.until is not None and timeline.created_at >= self.until:
            return False
        return self.before is None or key_of(timeline) < self.before


@runtime_checkable
class SearchableArchive(TimelineArchive, Protocol):
    """An archive that can answer a list's filter itself (by index, not by reading every row)."""

    def search(
        self, topic: str, where: TimelineFilter, limit: int, exclude: set[str]
    ) -> list[Timeline]:
        """The newest `limit` matches, newest first, leaving out the ids in `exclude` (the
        ones memory holds a newer copy of). For lists: a timeline read from the file comes
        without its steps (`get` reads one whole)."""
        ...


def search(timelines: Timelines, where: TimelineFilter, limit: int) -> list[Timeline]:
    """The newest `limit` timelines of an area that match, newest first: memory first (it holds
    the newest), then the archive for the rest."""
    topic = timelines.topic
    matching = (t for t in timelines.in_memory_newest_first() if where.matches(topic, t))
    found = list(islice(matching, limit))
    archive = timelines.archive
    if len(found) < limit and archive is not None:
        if isinstance(archive, SearchableArchive):
            older = archive.search(topic, where, limit - len(found), timelines.in_memory_ids())
        else:
            held = timelines.in_memory_ids()
            older = [
                t
                for t in reversed(archive.all(topic))
                if t.object_id not in held and where.matches(topic, t)
            ][: limit - len(found)]
        found += older
    found.sort(key=key_of, reverse=True)
    return found[:limit]
