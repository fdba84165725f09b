"""The control API under /_sim: what the real service does not have. Clock and info here; later
areas add keys, makers, faults and provider controls."""

from __future__ import annotations

from dataclasses import asdict

from aiohttp import web

from rfqkit.timestamps import isoformat
from simulator.api.http.appkeys import CLOCK, INSTANCES, SETTINGS, VENUE
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.sim.schemas import ClockAdvance, ClockState, SimInfo
from simulator.errors import InternalError, InvalidRequest, PayloadTooLarge, UpstreamError
from simulator.services.sim.info import simulator_info


async def get_clock(request: web.Request) -> web.Response:
    clock = request.app[CLOCK]
    return data_response(
        ClockState(now=isoformat(clock.now()), offset_seconds=clock.offset_seconds)
    )


async def advance_clock(request: web.Request) -> web.Response:
    body = await parse_body(request, ClockAdvance)
    clock = request.app[CLOCK]
    now = await clock.advance(body.seconds)
    return data_response(ClockState(now=isoformat(now), offset_seconds=clock.offset_seconds))


async def get_info(request: web.Request) -> web.Response:
    info = simulator_info(request.app[SETTINGS], request.app[VENUE], str(request.url.origin()))
    info["instances"] = [asdict(i) for i in await request.app[INSTANCES].instances()]
    return data_response(SimInfo.model_validate(info))


def add_routes(table: RouteTable) -> None:
    common = {"document": "sim", "tags": ("sim",)}
    table.add(
        Operation(
            method="GET",
            path="/_sim/clock",
            handler=get_clock,
            operation_id="simGetClock",
            summary="The simulated clock",
            responses={200: ClockState},
            errors=(InternalError,),
            **common,  # type: ignore[arg-type]
            placement="here",
        )
    )
    table.add(
        Operation(
            method="POST",
            path="/_sim/clock/advance",
            handler=advance_clock,
            operation_id="simAdvanceClock",
            summary="Move simulated time and every chain's block time forward together",
            body=ClockAdvance,
            responses={200: ClockState},
            errors=(InvalidRequest, PayloadTooLarge, UpstreamError, InternalError),
            **common,  # type: ignore[arg-type]
            placement="here",
        )
    )
    table.add(
        Operation(
            method="GET",
            path="/_sim/info",
            handler=get_info,
            operation_id="simInfo",
            summary="Chains, RPC URLs, contracts, tokens, corridors and demo wallets",
            responses={200: SimInfo},
            errors=(InternalError,),
            **common,  # type: ignore[arg-type]
            placement="primary",  # the venue: its chains as they were started, every instance
        )
    )
