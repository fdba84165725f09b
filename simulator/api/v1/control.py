"""GET /_sim/idempotency: the live Idempotency-Key records (in flight or finished), so a test
or an integrator can see what a retry would get without sending it."""

from __future__ import annotations

from aiohttp import web

from rfqkit.timestamps import from_unix, isoformat
from simulator.api.http.appkeys import IDEMPOTENCY
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.v1 import schemas
from simulator.errors import InternalError


async def list_idempotency(request: web.Request) -> web.Response:
    store = request.app[IDEMPOTENCY]
    records = [
        schemas.IdempotencyRecordView(
            caller=record.scope.caller,
            method=record.scope.method,
            path=record.scope.path,
            key=record.scope.key,
            state="in_flight" if record.response is None else "finished",
            status=record.response.status if record.response is not None else None,
            created_at=isoformat(from_unix(record.created_at)),
            expires_at=isoformat(from_unix(store.expires_at(record))),
        )
        for record in await store.records()
    ]
    return data_response(schemas.IdempotencyRecords(records=records))


def add_routes(table: RouteTable) -> None:
    table.adder("sim", ("sim",))(
        "GET",
        "/_sim/idempotency",
        list_idempotency,
        "simIdempotency",
        "Live Idempotency-Key records (in flight or finished), oldest first",
        responses={200: schemas.IdempotencyRecords},
        errors=(InternalError,),
    )
