"""Wire shapes of GET /_sim/rfqs, /_sim/swaps, /_sim/limit-orders, /_sim/transfers and one
object's timeline (the same shapes the console's live stream sends)."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, ConfigDict, Field

from simulator.api.http.cursors import cursor_field, next_cursor_field
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.api.webhooks.schemas import DeliveryView


class TimelineQuery(ApiModel):
    status: str | None = Field(
        default=None, max_length=32, description="Only objects whose status is this (any case)"
    )
    taker: str | None = Field(
        default=None,
        max_length=64,
        description="Only this taker's (the wallet; a ramp transfer's wallet)",
    )
    maker: str | None = Field(
        default=None,
        max_length=64,
        description="Only those a maker took part in: its wallet, credential prefix or fleet "
        "name (alpha, ...)",
    )
    pair: str | None = Field(
        default=None,
        max_length=100,
        pattern=r"^0x[0-9a-fA-F]{40}/0x[0-9a-fA-F]{40}$",
        description="Only those selling the first token for the second: SELL/BUY token "
        "addresses (any case)",
    )
    since: AwareDatetime | None = Field(
        default=None, description="Created at or after this simulator time, with its zone"
    )
    until: AwareDatetime | None = Field(
        default=None, description="Created before this simulator time, with its zone"
    )
    cursor: str | None = cursor_field()
    limit: int = Field(default=100, ge=1, le=100_000, description="The newest N matches")


class MakerRef(ApiModel):
    wallet: str
    name: str | None = Field(description="The simulated maker's name (alpha, ...), if one")


class StepView(SnakeApiModel):
    """One thing that happened. Besides these fields, each kind carries its own (the list is
    in docs/admin-api.md "Timelines"); a `maker` wallet comes with its `maker_name`."""

    model_config = ConfigDict(extra="allow")

    at: str = Field(description="Simulator time, ISO-8601 UTC with milliseconds")
    offset_ms: float = Field(description="Milliseconds since the object was created")
    kind: str


class TimelineItem(SnakeApiModel):
    id: str
    created_at: str = Field(description="Simulator time the object came to be")
    status: str = Field(description="Its status now, as its own API names it")
    makers: list[MakerRef] = Field(
        description="Makers it involved: asked, or whose orders it holds"
    )
    summary: dict[str, Any] = Field(
        description="What lists show: pair, amounts, taker, and per kind (RFQs: caller, "
        "reply_budget_ms, expires_at, winners)"
    )


class TimelineList(SnakeApiModel):
    items: list[TimelineItem] = Field(description="Newest first")
    kept: int = Field(
        description="How many objects of this kind are kept in memory (timelines.kept); older "
        "ones are read from the history database until the correction window and the retention "
        "have passed"
    )
    next_cursor: str | None = next_cursor_field()


class TimelineDetail(TimelineItem):
    steps: list[StepView] = Field(description="Oldest first")
    webhooks: list[DeliveryView] = Field(
        description="The webhook deliveries of the events it produced, with every attempt"
    )
