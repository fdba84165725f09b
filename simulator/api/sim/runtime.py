"""GET /_sim/runtime: the simulator process itself, as a load report needs it: its resident
memory and the garbage collector's pauses (services/sim/gc_pauses.py), overall and per second,
so a slow answer can be told apart from a pause of the simulator."""

from __future__ import annotations

import gc
import os
from typing import Literal

import psutil
from aiohttp import web
from pydantic import AwareDatetime, Field

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import FULL_COLLECTIONS, GC_PAUSES, HISTORY, RFQ
from simulator.api.http.parsing import parse_query
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.http.schemas import SnakeApiModel
from simulator.errors import InternalError, InvalidRequest
from simulator.services.sim.gc_pauses import PauseTotals


class RuntimeQuery(SnakeApiModel):
    since: AwareDatetime | None = Field(
        default=None,
        description="Only the seconds from this wall-clock time on (the second holding it "
        "included), with its zone",
    )


class PausesView(SnakeApiModel):
    collections: int
    pause_total_ms: float = Field(description="Wall time of all of them")
    pause_longest_ms: float = Field(description="Wall time of the longest")
    pause_longest_cpu_ms: float | None = Field(
        description="The most CPU time one full collection (generation 2) used: the "
        "collector's own work, so a wall time far above it waited for a core; null when none "
        "ran (young collections are not timed in CPU)"
    )


class GenerationPausesView(PausesView):
    generation: int = Field(description="0 and 1: young collections; 2: full collections")


class SecondPausesView(PausesView):
    at: str = Field(description="The wall-clock second the collections ended in (not the clock)")


class GcView(SnakeApiModel):
    enabled: bool
    thresholds: list[int] = Field(description="gc.get_threshold(): per generation")
    recording_since: str = Field(description="Wall-clock time the recorder started")
    pause_longest_ms: float = Field(
        description="The longest pause (wall time) since then, any generation"
    )
    generations: list[GenerationPausesView]
    seconds: list[SecondPausesView] = Field(
        description="Each second with a collection, oldest first, of the last `seconds_kept`"
    )
    seconds_kept: int
    full_collections: FullCollectionsView


class FullCollectionsView(SnakeApiModel):
    schedule: Literal["when_idle", "interpreter"] = Field(
        description="Who starts full collections (`collector.full_collections`): the "
        "simulator when idle or grown, or CPython's own thresholds"
    )
    when_idle: int = Field(description="Full collections the simulator ran after an idle spell")
    memory_grown: int = Field(
        description="Full collections the simulator ran because the process had grown by "
        "`collector.memory_growth_mb`"
    )


class StoreView(SnakeApiModel):
    file_bytes: int = Field(
        description="Size of the history database (its file and write-ahead log) on disk"
    )
    rfqs_in_memory: int = Field(
        description="RFQ records in memory: the live ones and those at rest for less than "
        "`retention.rfq_in_memory_s`; the others are in the history database"
    )
    writer_pid: int | None = Field(
        description="The history database's writer process (null until the first write)"
    )
    writes_waiting: int = Field(
        description="Writes handed to the writer and not yet committed: grows while the "
        "writer, at a lower priority, waits for the CPU the requests leave"
    )


class RuntimeView(SnakeApiModel):
    pid: int
    rss_bytes: int = Field(description="Resident memory of the simulator process (not Anvil's)")
    gc: GcView
    store: StoreView


def _totals(totals: PauseTotals) -> dict[str, int | float | None]:
    cpu = totals.longest_cpu_ms
    return {
        "collections": totals.collections,
        "pause_total_ms": round(totals.total_ms, 3),
        "pause_longest_ms": round(totals.longest_ms, 3),
        "pause_longest_cpu_ms": None if cpu is None else round(cpu, 3),
    }


def _full_collections(app: web.Application) -> FullCollectionsView:
    schedule = app.get(FULL_COLLECTIONS)
    if schedule is None:
        return FullCollectionsView(schedule="interpreter", when_idle=0, memory_grown=0)
    runs = schedule.runs
    return FullCollectionsView(
        schedule="when_idle", when_idle=runs["idle"], memory_grown=runs["memory"]
    )


async def get_runtime(request: web.Request) -> web.Response:
    query = parse_query(request, RuntimeQuery)
    recorder = request.app[GC_PAUSES]
    history = request.app[HISTORY]
    since = query.since.timestamp() if query.since is not None else None
    return data_response(
        RuntimeView(
            pid=os.getpid(),
            rss_bytes=psutil.Process().memory_info().rss,
            gc=GcView(
                enabled=gc.isenabled(),
                thresholds=list(gc.get_threshold()),
                recording_since=isoformat_unix(recorder.since),
                pause_longest_ms=round(recorder.longest_ms, 3),
                generations=[
                    GenerationPausesView.model_validate({"generation": n, **_totals(totals)})
                    for n, totals in enumerate(recorder.generations)
                ],
                seconds=[
                    SecondPausesView.model_validate(
                        {"at": isoformat_unix(s.at), **_totals(s.totals)}
                    )
                    for s in recorder.seconds(since)
                ],
                seconds_kept=recorder.seconds_kept,
                full_collections=_full_collections(request.app),
            ),
            store=StoreView(
                file_bytes=history.size_bytes(),
                rfqs_in_memory=request.app[RFQ].store.in_memory(),
                writer_pid=history.writer_pid,
                writes_waiting=history.queued - history.committed,
            ),
        )
    )


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim",))
    add(
        "GET",
        "/_sim/runtime",
        get_runtime,
        "simRuntime",
        "The simulator process: resident memory, the garbage collector's pauses, overall "
        "and per second (wall clock), and the history database's size",
        query=RuntimeQuery,
        responses={200: RuntimeView},
        errors=(InvalidRequest, InternalError),
        placement="here",
    )
