"""/_sim/reset and /_sim/snapshots: back to the state right after start-up, or to a named point
(services/sim/state.py does the work)."""

from __future__ import annotations

from aiohttp import web

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import CONFIGURATION, STATE
from simulator.api.http.forwarding import repeated
from simulator.api.http.parsing import parse_body
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.sim import state_schemas as schemas
from simulator.errors import (
    Conflict,
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
    VenueUnavailable,
)
from simulator.services.sim.state import ChangeReport, Snapshot, StateControl


def _control(request: web.Request) -> StateControl:
    return request.app[STATE]


def _here_only(request: web.Request) -> tuple[str, ...] | None:
    """Of a venue of several instances, a change another instance made first and repeats
    here: what this one leaves as that one made it (the venue's shared configuration), and
    this instance changes its own services only (the chains are the venue's, changed there).
    None: the change is this instance's to make whole."""
    if not repeated(request):
        return None
    replica = request.app[CONFIGURATION]
    return replica.parts if replica is not None else ()


def _result(report: ChangeReport) -> schemas.StateChangeResult:
    return schemas.StateChangeResult(
        took_ms=round(report.took_s * 1000, 1),
        interrupted_requests=report.interrupted_requests,
        kept=list(report.kept),
    )


def _view(snapshot: Snapshot) -> schemas.SnapshotView:
    return schemas.SnapshotView(
        name=snapshot.name,
        created_at=isoformat_unix(snapshot.created_at) or "",
        took_ms=round(snapshot.taken_in * 1000, 1),
        chains=sorted(snapshot.chains),
        participants=list(snapshot.services),
    )


async def reset(request: web.Request) -> web.Response:
    body = (
        await parse_body(request, schemas.ResetRequest)
        if request.body_exists
        else schemas.ResetRequest()
    )
    here_only = _here_only(request)
    report = await _control(request).reset(
        keep=body.keep, chains=here_only is None, keep_prefixes=here_only or ()
    )
    return data_response(_result(report))


async def create_snapshot(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.SnapshotCreate)
    snapshot = await _control(request).take_snapshot(body.name, chains=_here_only(request) is None)
    return data_response(_view(snapshot), status=201)


async def list_snapshots(request: web.Request) -> web.Response:
    control = _control(request)
    views = [_view(s) for s in control.snapshots.values()]
    return data_response(schemas.SnapshotList(snapshots=views))


async def restore_snapshot(request: web.Request) -> web.Response:
    here_only = _here_only(request)
    report = await _control(request).restore(
        request.match_info["name"], chains=here_only is None, keep_prefixes=here_only or ()
    )
    return data_response(_result(report))


async def delete_snapshot(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    _control(request).delete_snapshot(name)
    return data_response(schemas.SnapshotDeleted(name=name, deleted=True))


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim-state",), gated=False)  # the state control's own gate
    changes = (Conflict, UpstreamError, VenueUnavailable, InternalError)
    add(
        "POST",
        "/_sim/reset",
        reset,
        "simReset",
        "Back to the state right after start-up (every area, makers, both chains)",
        body=schemas.ResetRequest,
        responses={200: schemas.StateChangeResult},
        errors=(InvalidRequest, PayloadTooLarge, *changes),
        changes_configuration=True,
        placement="every",  # each instance's own records (the chains: the first one's)
    )
    add(
        "POST",
        "/_sim/snapshots",
        create_snapshot,
        "simCreateSnapshot",
        "Take a named snapshot of the service state and every chain together",
        body=schemas.SnapshotCreate,
        responses={201: schemas.SnapshotView},
        errors=(InvalidRequest, PayloadTooLarge, *changes),
        placement="every",
    )
    add(
        "GET",
        "/_sim/snapshots",
        list_snapshots,
        "simListSnapshots",
        "The snapshots taken, oldest first",
        responses={200: schemas.SnapshotList},
        errors=(Conflict, InternalError),
    )
    add(
        "POST",
        "/_sim/snapshots/{name}/restore",
        restore_snapshot,
        "simRestoreSnapshot",
        "Put the simulator and its chains back to a snapshot (it stays available)",
        responses={200: schemas.StateChangeResult},
        errors=(NotFound, *changes),
        changes_configuration=True,
        placement="every",
    )
    add(
        "DELETE",
        "/_sim/snapshots/{name}",
        delete_snapshot,
        "simDeleteSnapshot",
        "Forget a snapshot",
        responses={200: schemas.SnapshotDeleted},
        errors=(NotFound, Conflict, InternalError),
        placement="every",
    )
