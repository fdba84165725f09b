"""/_sim/book: the v1 book's own facts for tests and operators: the 5-minute sweep's progress
(so a test can wait for a sweep to have run instead of sleeping) and how many orders rest."""

from __future__ import annotations

from aiohttp import web
from pydantic import Field

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import BOOK, CLOCK, SETTINGS
from simulator.api.http.responses import data_response
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.errors import InternalError


class SweepView(SnakeApiModel):
    runs: int = Field(description="Sweeps completed since start-up")
    last_run_at: str | None = Field(
        description="Simulator time the last completed sweep started: everything due then is done"
    )
    next_run_at: str | None = Field(description="Simulator time the next sweep is due")
    interval_s: float
    notify_lag_s: float = Field(description="expired/cancelled notices wait this past deadline")


class BookView(ApiModel):
    orders: int = Field(description="Limit orders accepted since start-up")
    resting: int = Field(description="Orders that can still settle, as storage knows")
    holds: int = Field(description="Resting orders reserved by built swaps now")
    sweep: SweepView


async def book_state(request: web.Request) -> web.Response:
    store = request.app[BOOK].service.store
    settings = request.app[SETTINGS].book
    now = request.app[CLOCK].time()
    return data_response(
        BookView(
            orders=len(store.orders),
            resting=sum(1 for o in store.orders.values() if o.live_at(now)),
            holds=sum(1 for h in store.holds.values() if h.until > now),
            sweep=SweepView(
                runs=store.sweep.runs,
                last_run_at=isoformat_unix(store.sweep.last_run_at),
                next_run_at=isoformat_unix(store.sweep.next_run_at),
                interval_s=settings.sweep_interval_s,
                notify_lag_s=settings.notify_lag_s,
            ),
        )
    )


def add_routes(table: RouteTable) -> None:
    table.add(
        Operation(
            method="GET",
            path="/_sim/book",
            handler=book_state,
            operation_id="simBook",
            summary="The v1 book: orders, holds and the limit-order sweep's progress",
            document="sim",
            tags=("sim",),
            responses={200: BookView},
            errors=(InternalError,),
        )
    )
