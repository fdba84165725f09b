"""/_sim/requests and /_sim/maker-messages: what callers sent and got, and what every maker
exchanged on the stream (services/sim/journal.py). Of several instances the journal is the
first instance's, and the others send it what they served (adapters/sim/venue_journal.py):
`/_venue/journal` takes it, `/_venue/journal/flush` asks an instance to send what it holds."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from rfqkit.redaction import redact
from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import JOURNAL, MAKER_NAMES
from simulator.api.http.cursors import decode_cursor, encode_cursor
from simulator.api.http.forwarding import FORWARDING, sent_on
from simulator.api.http.parsing import parse_query
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.sim import state_schemas as schemas
from simulator.errors import Conflict, InternalError, InvalidRequest, NotFound
from simulator.services.sim.journal import RequestJournal
from simulator.services.sim.journal_search import (
    FrameFilter,
    JournalEntry,
    JournalFilter,
    StreamEntry,
    body_view,
    headers_view,
)
from simulator.services.sim.journal_transfer import received


def _journal(request: web.Request) -> RequestJournal:
    journal = request.app.get(JOURNAL)
    if journal is None:
        raise Conflict(
            "The journal is off (journal.enabled: false)", details={"reason": "journal_off"}
        )
    return journal


def summary_json(entry: JournalEntry) -> dict[str, Any]:
    """The entry without bodies and headers, as JSON-ready data: no body to redact and no
    model to build, so it is cheap enough to push every request to a console page."""
    return {
        "seq": entry.seq,
        "request_id": entry.request_id,
        "at": isoformat_unix(entry.at) or "",
        "method": entry.method,
        "path": entry.path,
        "query": redact(entry.query) if entry.query else "",
        "status": entry.status,
        "latency_ms": entry.latency_ms,
        "key_prefix": entry.key_prefix,
        "request": None,
        "response": None,
    }


def render_summary(entry: JournalEntry) -> schemas.JournalEntryView:
    return schemas.JournalEntryView.model_validate(summary_json(entry))


def render_entry(entry: JournalEntry) -> schemas.JournalEntryView:
    summary = render_summary(entry)
    summary.request = schemas.JournalBody(
        content_type=entry.request_type,
        size=entry.request_size,
        headers=headers_view(entry.request_headers),
        body=body_view(entry.request_body, entry.request_size),
    )
    summary.response = schemas.JournalBody(
        content_type="application/json" if entry.response_size else None,
        size=entry.response_size,
        headers=headers_view(entry.response_headers),
        body=body_view(entry.response_body, entry.response_size),
    )
    return summary


# Not under /_sim, which --no-control-api takes away: the journal is kept without it too.
JOURNAL_PATH = "/_venue/journal"
FLUSH_PATH = "/_venue/journal/flush"


async def _gathered(request: web.Request, journal: RequestJournal) -> None:
    """Of several instances: every request any of them answered so far is in the journal."""
    if journal.relay is not None:
        await journal.relay.flush()
    forwarding = request.app[FORWARDING]
    if forwarding is not None:
        await forwarding.tell_others(FLUSH_PATH)


def _venue_only(request: web.Request) -> RequestJournal:
    """The journal, for a call of another instance of the venue (nobody else may make it)."""
    journal = request.app.get(JOURNAL)
    if journal is None or not sent_on(request):
        raise NotFound("No such resource")
    return journal


async def take_entries(request: web.Request) -> web.Response:
    journal = _venue_only(request)
    for data in await request.json():
        journal.record_here(**received(data))
    return web.Response(status=204)


async def flush_entries(request: web.Request) -> web.Response:
    journal = _venue_only(request)
    if journal.relay is not None:
        await journal.relay.flush()
    return web.Response(status=204)


async def list_requests(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.JournalQuery)
    journal = _journal(request)
    await _gathered(request, journal)
    where = JournalFilter(
        path=query.path,
        method=query.method,
        status=query.status,
        since=query.since.timestamp() if query.since else None,
        until=query.until.timestamp() if query.until else None,
        request_id=query.request_id,
        seq=query.seq,
        before=None if query.cursor is None else decode_cursor(query.cursor, int),
        limit=query.limit + 1,  # one more than asked: whether another page follows
    )
    render = render_summary if query.summary else render_entry
    found = journal.requests(where)
    page = found[: query.limit]
    return data_response(
        schemas.JournalPage(
            requests=[render(e) for e in page],
            capacity=journal.capacity,
            next_cursor=_next_cursor(page[-1] if page else None, len(found) > query.limit),
        )
    )


def _next_cursor(last: JournalEntry | StreamEntry | None, more: bool) -> str | None:
    return encode_cursor(last.at, last.seq) if more and last is not None else None


async def clear_requests(request: web.Request) -> web.Response:
    return data_response(schemas.JournalCleared(cleared=_journal(request).clear()))


def _message(text: str) -> Any:
    redacted = redact(text)
    try:
        return json.loads(redacted)
    except ValueError:
        return redacted


async def list_maker_messages(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.MakerMessagesQuery)
    names = request.app[MAKER_NAMES]
    makers = None
    if query.maker is not None:  # a simulated maker's name (alpha) stands for its wallet
        makers = frozenset({(names.wallet_of(query.maker) or query.maker).lower()})
    found = _journal(request).frames(
        FrameFilter(
            makers=makers,
            direction=query.direction,
            since=query.since.timestamp() if query.since else None,
            until=query.until.timestamp() if query.until else None,
            rfq_id=query.rfq_id,
            before=None if query.cursor is None else decode_cursor(query.cursor, int),
            limit=query.limit + 1,
        )
    )
    page = found[: query.limit]
    views = [
        schemas.MakerMessageView(
            seq=f.seq,
            at=isoformat_unix(f.at) or "",
            maker_id=f.maker_id,
            wallet=f.wallet,
            maker_name=names.name_of(f.wallet),
            rfq_id=rfq_id,
            direction=f.direction,
            message=_message(f.text),
        )
        for f, rfq_id in page
    ]
    next_cursor = _next_cursor(page[-1][0] if page else None, len(found) > query.limit)
    return data_response(schemas.MakerMessagePage(messages=views, next_cursor=next_cursor))


def add_routes(table: RouteTable) -> None:
    # Reading the journal adds no rows to it, and a reset or restore does not wait for it.
    add = table.adder("sim", ("sim-journal",), journaled=False, gated=False)
    for path, handler, op_id, summary in (
        (JOURNAL_PATH, take_entries, "simVenueJournal", "Requests another instance served"),
        (FLUSH_PATH, flush_entries, "simVenueJournalFlush", "Send the journal what is held"),
    ):
        add(
            "POST",
            path,
            handler,
            op_id,
            summary,
            responses={204: None},
            errors=(NotFound, InternalError),
            documented=False,
            placement="here",
        )
    add(
        "GET",
        "/_sim/requests",
        list_requests,
        "simListRequests",
        "The latest requests: method, path, status, latency, key prefix, bodies "
        "(secrets redacted), newest first, from memory then the history file (journal.kept_s); "
        "filters path (prefix*), method, status, since, until, request_id, seq; pages by cursor",
        query=schemas.JournalQuery,
        responses={200: schemas.JournalPage},
        errors=(InvalidRequest, Conflict, InternalError),
    )
    add(
        "DELETE",
        "/_sim/requests",
        clear_requests,
        "simClearRequests",
        "Forget every recorded request and maker stream message",
        responses={200: schemas.JournalCleared},
        errors=(Conflict, InternalError),
    )
    add(
        "GET",
        "/_sim/maker-messages",
        list_maker_messages,
        "simListMakerMessages",
        "Maker stream frames in and out, newest first, from memory then the history file; "
        "filters maker (id, wallet or fleet name), direction, rfq_id, since, until; pages by "
        "cursor",
        query=schemas.MakerMessagesQuery,
        responses={200: schemas.MakerMessagePage},
        errors=(InvalidRequest, Conflict, InternalError),
    )
