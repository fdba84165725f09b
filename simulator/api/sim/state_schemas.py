"""Shapes of /_sim/reset, /_sim/snapshots, /_sim/requests and /_sim/maker-messages."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, ConfigDict, Field

from simulator.api.http.cursors import cursor_field, next_cursor_field
from simulator.api.http.schemas import ApiModel, SnakeApiModel

Keepable = Literal["webhooks", "keys", "limits", "faults", "clock"]
SNAPSHOT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class ResetRequest(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    keep: list[Keepable] = Field(
        default_factory=list,
        description="Parts left as they are: webhooks (the endpoint registry), keys (API keys "
        "created since start), limits, faults, clock (its offset)",
    )


class StateChangeResult(SnakeApiModel):
    took_ms: float = Field(description="How long the reset or restore took")
    interrupted_requests: int = Field(
        description="Requests still running after the drain time, answered 503 state_reset"
    )
    kept: list[str] = Field(description="State participants left as they were")


class SnapshotCreate(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(pattern=SNAPSHOT_NAME, description="Letters, digits, . _ -; 64 at most")


class SnapshotView(SnakeApiModel):
    name: str
    created_at: str = Field(description="Simulator time when it was taken")
    took_ms: float = Field(description="How long taking it took")
    chains: list[int] = Field(description="Chains whose state it holds")
    participants: list[str] = Field(description="Service state it holds, by participant")


class SnapshotList(ApiModel):
    snapshots: list[SnapshotView]


class SnapshotDeleted(ApiModel):
    name: str
    deleted: bool


class JournalQuery(SnakeApiModel):
    path: str | None = Field(default=None, max_length=512, description="Exact, or prefix*")
    method: str | None = Field(default=None, pattern=r"^[A-Za-z]{1,10}$")
    status: int | None = Field(default=None, ge=100, le=599)
    since: AwareDatetime | None = Field(
        default=None, description="Simulator time, inclusive, with its zone (…Z)"
    )
    request_id: str | None = Field(default=None, max_length=64)
    seq: int | None = Field(
        default=None, ge=0, description="The entry numbered so (a console link #/requests/N)"
    )
    until: AwareDatetime | None = Field(
        default=None, description="Simulator time, exclusive, with its zone (…Z)"
    )
    cursor: str | None = cursor_field()
    limit: int = Field(default=100, ge=1, le=100_000, description="The newest N matches")
    summary: bool = Field(
        default=False,
        description="Leave out bodies and headers (`request` and `response` are null): the "
        "console's live list",
    )


class JournalBody(SnakeApiModel):
    content_type: str | None = None
    size: int = Field(description="Bytes")
    headers: list[tuple[str, str]] = Field(
        default_factory=list,
        description="[name, value] as received or sent; credentials left out, values redacted",
    )
    body: Any = Field(
        default=None,
        description="JSON or text with secrets redacted; {omitted, size} above 16 KiB",
    )


class JournalEntryView(SnakeApiModel):
    seq: int = Field(description="Increasing; never reused")
    request_id: str
    at: str = Field(description="Simulator time the request arrived")
    method: str
    path: str
    query: str
    status: int
    latency_ms: float
    key_prefix: str | None = Field(description="The API key's public prefix, if one was sent")
    request: JournalBody | None = Field(description="Null when asked for a summary")
    response: JournalBody | None = Field(description="Null when asked for a summary")


class JournalPage(SnakeApiModel):
    requests: list[JournalEntryView] = Field(description="Newest first")
    capacity: int = Field(
        description="How many requests the ring keeps in memory; older ones are read from the "
        "history file for journal.kept_s"
    )
    next_cursor: str | None = next_cursor_field()


class JournalCleared(ApiModel):
    cleared: int


class MakerMessagesQuery(SnakeApiModel):
    maker: str | None = Field(
        default=None,
        max_length=64,
        description="Credential prefix, wallet, or a simulated maker's name (alpha, ...)",
    )
    direction: Literal["in", "out"] | None = Field(
        default=None, description="in: from the maker; out: to the maker"
    )
    since: AwareDatetime | None = Field(default=None, description="Simulator time, with zone")
    rfq_id: str | None = Field(
        default=None, max_length=64, description="Only the frames of this RFQ (rfq_…)"
    )
    until: AwareDatetime | None = Field(
        default=None, description="Simulator time, exclusive, with its zone (…Z)"
    )
    cursor: str | None = cursor_field()
    limit: int = Field(default=100, ge=1, le=100_000, description="The newest N matches")


class MakerMessageView(SnakeApiModel):
    seq: int
    at: str
    maker_id: str
    wallet: str
    maker_name: str | None = Field(description="The simulated maker's name (alpha, ...), if one")
    rfq_id: str | None = Field(
        description="The RFQ the frame belongs to (its rfq, quote or decline, released, filled, "
        "expired); null for levels, pings and the like"
    )
    direction: Literal["in", "out"]
    message: Any = Field(description="The frame (JSON when it is), secrets redacted")


class MakerMessagePage(SnakeApiModel):
    messages: list[MakerMessageView] = Field(description="Newest first")
    next_cursor: str | None = next_cursor_field()
