"""/_sim/makers: the makers online on the stream (ours and any integrator's bot) and live
reconfiguration of the simulated fleet (behaviour, latency, prices, online/offline)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aiohttp import web
from pydantic import Field

from makers.config import Behaviour, LatencyConfig
from rfqkit.timestamps import from_unix, isoformat
from simulator.api.http.appkeys import CHANGES, MAKER_NAMES, RFQ, VENUE
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import SnakeApiModel
from simulator.errors import (
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
)
from simulator.services.rfq.fleet_control import MakersStatus
from simulator.services.rfq.history import HISTOGRAM_BIN_MS, RfqHistory, summarize


class RepliesView(SnakeApiModel):
    counts: dict[str, int] = Field(
        description="Answers by outcome since the last reset: quoted, declined, silent, late, "
        "rejected, disconnected, unverified (as in RFQ timelines)"
    )
    latencies_kept: int = Field(description="Latencies the percentiles are over (the latest)")
    p50_ms: float | None
    p99_ms: float | None
    histogram: list[int] = Field(description="Answers per bin of `histogram_bin_ms`, from 0")
    histogram_bin_ms: int


class OnlineMakerView(SnakeApiModel):
    maker_id: str
    wallet: str
    name: str | None = Field(description="The simulated maker's name (alpha, ...), if one")
    replies: RepliesView = Field(description="Its answers to firm requests, as the venue saw them")
    environment: str
    connected_at: str
    pairs_with_levels: int = Field(description="Pair directions whose levels are fresh")


class FleetMakerView(SnakeApiModel):
    name: str
    wallet: str
    behaviour: Behaviour
    online: bool
    connected: bool
    chains: list[int]
    live_quotes: int
    stats: dict[str, Any]
    config: dict[str, Any]
    replies: RepliesView


class MakersView(SnakeApiModel):
    online: list[OnlineMakerView]
    fleet: list[FleetMakerView]
    reply_budget_ms: int = Field(description="The shortest reply budget of the RFQ corridors")


class MakerChange(SnakeApiModel):
    behaviour: Behaviour | None = Field(
        default=None,
        description="normal; silent (never answers); late (answers after the reply budget); "
        "decline; bad_signature; underfunded (quotes more than it holds); flaky (declines "
        "flaky_decline_fraction of requests)",
    )
    latency: LatencyConfig | None = None
    spread_bps: float | None = Field(default=None, ge=0, le=5000)
    impact_bps: float | None = Field(default=None, ge=0, le=2500)
    max_inventory_fraction: float | None = Field(default=None, gt=0, le=1)
    flaky_decline_fraction: float | None = Field(default=None, ge=0, le=1)
    quote_ttl_ms: int | None = Field(default=None, gt=0, description="Cutoff after replyBy")
    deadline_slack_s: int | None = Field(
        default=None, ge=0, le=7 * 86_400, description="Order deadline after the cutoff"
    )
    mids: dict[str, float] | None = None
    online: bool | None = None
    fills_book: bool | None = Field(
        default=None,
        description="A filling operator of the v1 book (its credential decides "
        "whether its levels count as fastFill bids)",
    )


def _replies(history: RfqHistory, wallet: str) -> RepliesView:
    summary = summarize(history.replies.get(wallet.lower()))
    return RepliesView(**asdict(summary), histogram_bin_ms=HISTOGRAM_BIN_MS)


def makers_view(app: web.Application, status: MakersStatus) -> MakersView:
    """/_sim/makers as JSON (also what the console's live stream sends)."""
    history = app[RFQ].deps.history
    names = app[MAKER_NAMES]
    budgets = [
        corridor.timing.reply_budget_ms
        for chain in app[VENUE].chains.values()
        for corridor in chain.corridors
        if corridor.timing.mode == "RFQ"
    ]
    return MakersView(
        online=[
            OnlineMakerView(
                maker_id=maker.maker_id,
                wallet=maker.wallet,
                name=names.name_of(maker.wallet),
                replies=_replies(history, maker.wallet),
                environment=maker.environment,
                connected_at=isoformat(from_unix(maker.connected_at)),
                pairs_with_levels=maker.pairs_with_levels,
            )
            for maker in status.online
        ],
        fleet=[
            FleetMakerView.model_validate(
                {**asdict(member), "replies": _replies(history, member.wallet)}
            )
            for member in status.fleet
        ],
        reply_budget_ms=min(budgets, default=0),
    )


async def list_makers(request: web.Request) -> web.Response:
    status = await request.app[RFQ].maker_control.status()
    return data_response(makers_view(request.app, status))


async def change_maker(request: web.Request) -> web.Response:
    body = await parse_body(request, MakerChange)
    status = await request.app[RFQ].maker_control.change(
        request.match_info["name"], body.model_dump(exclude_none=True)
    )
    request.app[CHANGES].mark("makers")
    return data_response(makers_view(request.app, status))


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/_sim/makers",
            handler=list_makers,
            operation_id="simListMakers",
            summary="Makers online on the stream, and the simulated fleet's state",
            document="sim",
            tags=("sim",),
            responses={200: MakersView},
            errors=(InternalError,),
        )
    )
    table.add(
        Operation(
            method="PATCH",
            path="/_sim/makers/{name}",
            handler=change_maker,
            operation_id="simChangeMaker",
            summary="Reconfigure a simulated maker live (behaviour, latency, prices, online)",
            document="sim",
            tags=("sim",),
            body=MakerChange,
            responses={200: MakersView},
            errors=(InvalidRequest, NotFound, PayloadTooLarge, UpstreamError, InternalError),
        )
    )
