"""/_sim/rfqs/{rfq_id}/...: per-object time controls (services/rfq/time_control.py). Each answers
the RFQ as `GET /v2/rfq/{rfq_id}` renders it, after the change."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import RFQ
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.rfq import schemas
from simulator.errors import Conflict, InternalError, NotFound, UpstreamError


async def expire(request: web.Request) -> web.Response:
    record = await request.app[RFQ].time_control.expire(request.match_info["rfq_id"])
    return data_response(schemas.RfqRecord.model_validate(record))


async def give_up(request: web.Request) -> web.Response:
    record = await request.app[RFQ].time_control.give_up(request.match_info["rfq_id"])
    return data_response(schemas.RfqRecord.model_validate(record))


async def release(request: web.Request) -> web.Response:
    record = request.app[RFQ].time_control.release(request.match_info["rfq_id"])
    return data_response(schemas.RfqRecord.model_validate(record))


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim",), responses={200: schemas.RfqRecord})
    add(
        "POST",
        "/_sim/rfqs/{rfq_id}/expire",
        expire,
        "simExpireRfq",
        "This quoted RFQ lapses now (expiresAt becomes now; rfq.expired), nothing else moves",
        errors=(NotFound, Conflict, InternalError),
        placement="owner",
        record_param="rfq_id",
    )
    add(
        "POST",
        "/_sim/rfqs/{rfq_id}/give-up",
        give_up,
        "simGiveUpRfq",
        "This submitted RFQ's settlement stops waiting now: failed not_landed or reverted "
        "(rfq.failed), as past its order deadline",
        errors=(NotFound, Conflict, UpstreamError, InternalError),
        placement="owner",
        record_param="rfq_id",
    )
    add(
        "POST",
        "/_sim/rfqs/{rfq_id}/release",
        release,
        "simReleaseRfq",
        "This ended RFQ gives back its outstanding slot and taker reservation now",
        errors=(NotFound, Conflict, InternalError),
        placement="owner",
        record_param="rfq_id",
    )
