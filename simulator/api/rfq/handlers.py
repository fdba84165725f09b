"""HTTP handlers of the v2 RFQ API: parse, call the service, render. Nothing else."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import CALLER, LADDER_BYTES, RFQ
from simulator.api.http.parsing import parse_body, parse_query, taker_proof
from simulator.api.http.responses import Joined, data_response, raw_json_response
from simulator.api.http.routes import Access, RouteTable
from simulator.api.http.server_timing import record_maker_wait
from simulator.api.rfq import schemas
from simulator.errors import (
    Conflict,
    Forbidden,
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    Unauthorized,
    UpstreamError,
    VenueUnavailable,
)
from simulator.services.rfq.model import StoredRfq
from simulator.services.rfq.service import FirmRequest


async def preview(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.PreviewBody)
    answer = await request.app[RFQ].service.preview(body.trade())
    return data_response(schemas.PreviewResult.model_validate(answer), exclude_none=True)


async def request_quote(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.RfqRequestBody)
    outcome = await request.app[RFQ].service.request(
        request[CALLER],
        FirmRequest(body.trade(), body.taker, taker_proof(body.taker_proof)),
    )
    record_maker_wait(request, outcome.maker_wait_s, outcome.maker_waits_s)
    answer = schemas.RfqRequestResult.model_validate(Joined(outcome, outcome.record))
    return data_response(answer, exclude_none=True)


def _owned(request: web.Request) -> StoredRfq:
    return request.app[RFQ].service.owned(
        request.match_info["rfq_id"], request[CALLER], request.headers.get("X-Rfq-Claim")
    )


async def get_rfq(request: web.Request) -> web.Response:
    return data_response(schemas.RfqRecord.model_validate(_owned(request)))


async def cancel(request: web.Request) -> web.Response:
    record = _owned(request)
    await request.app[RFQ].service.cancel(record)
    return data_response(schemas.CancelResult(rfq_id=record.rfq_id, status="released"))


async def submit(request: web.Request) -> web.Response:
    record = _owned(request)
    body = await parse_body(request, schemas.SubmitBody)
    request.app[RFQ].service.submit(record, body.tx_hash)
    return data_response(schemas.RfqRecord.model_validate(record))


async def levels(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.LevelsQuery)
    view = request.app[RFQ].service.ladder(query.chain_id)
    # The ladder is cached ~2 s; so is its rendering (same view object, same bytes).
    rendered = request.app[LADDER_BYTES].get(view.chain_id)
    if rendered is None or rendered[0] is not view:
        rendered = (view, schemas.Ladder.model_validate(view).model_dump_json().encode())
        request.app[LADDER_BYTES][view.chain_id] = rendered
    return raw_json_response(b'{"data":' + rendered[1] + b"}")


BODY_ERRORS = (InvalidRequest, PayloadTooLarge, RateLimited, InternalError)
# GET /v2/rfq/{rfq_id} for the router: any segment except the concrete siblings under /v2/rfq/.
# (The look-ahead lives only in this route pattern, never in a schema pattern.)
RFQ_ID_ROUTE = "/v2/rfq/{rfq_id:(?!(?:preview|request|levels)$)[^/]+}"
KEY_ERRORS = (Unauthorized, Forbidden)
PUBLIC = Access(scope=None)


def add_routes(table: RouteTable) -> None:
    add = table.adder("v2", ("rfq",))

    key_or_claim = ("bearerKey", "apiKeyHeader", "rfqClaim")
    add(
        "GET",
        "/v2/rfq/levels",
        levels,
        "rfqLevels",
        "Price ladder: indicative fee-inclusive levels",
        query=schemas.LevelsQuery,
        responses={200: schemas.Ladder},
        errors=(InvalidRequest, Unauthorized, RateLimited, InternalError),
        access=PUBLIC,
        placement="here",
    )
    add(
        "POST",
        "/v2/rfq/preview",
        preview,
        "rfqPreview",
        "Indicative price; locks nothing",
        body=schemas.PreviewBody,
        responses={200: schemas.PreviewResult},
        errors=(*BODY_ERRORS, Unauthorized),
        access=PUBLIC,
        placement="here",
    )
    add(
        "POST",
        "/v2/rfq/request",
        request_quote,
        "rfqRequest",
        "Firm quote or no_quote",
        body=schemas.RfqRequestBody,
        responses={200: schemas.RfqRequestResult},
        errors=(*BODY_ERRORS, *KEY_ERRORS, UpstreamError, VenueUnavailable),
        # A key, or none at all: a keyless caller proves control of the taker wallet with the
        # body's takerProof (or a live grant), which is not an HTTP security scheme.
        security=("bearerKey", "apiKeyHeader", ""),
        access=Access(scope="trades:write"),
        retry_after_always=False,  # the outstanding-RFQ cap's 429 has no Retry-After
        placement="here",
    )
    add(
        "POST",
        "/v2/rfq/{rfq_id}/cancel",
        cancel,
        "rfqCancel",
        "Give back a quoted RFQ",
        responses={200: schemas.CancelResult},
        errors=(*KEY_ERRORS, NotFound, Conflict, RateLimited, InternalError),
        security=key_or_claim,
        access=Access(scope="trades:write"),
        placement="owner",
        record_param="rfq_id",
    )
    add(
        "POST",
        "/v2/rfq/{rfq_id}/submit",
        submit,
        "rfqSubmit",
        "Report the swap transaction hash",
        body=schemas.SubmitBody,
        responses={200: schemas.RfqRecord},
        errors=(*BODY_ERRORS, *KEY_ERRORS, NotFound, Conflict),
        security=key_or_claim,
        access=Access(scope="trades:write"),
        placement="owner",
        record_param="rfq_id",
    )
    add(
        "GET",
        "/v2/rfq/{rfq_id}",
        get_rfq,
        "rfqGet",
        "RFQ status and settled amounts",
        # The router must not read /v2/rfq/preview, /request or /levels as an rfq id: they
        # would answer other methods with 404 or advertise GET in a 405's Allow. OpenAPI
        # matches concrete paths first, so the document keeps the plain template.
        route_path=RFQ_ID_ROUTE,
        responses={200: schemas.RfqRecord},
        errors=(*KEY_ERRORS, NotFound, RateLimited, InternalError),
        security=key_or_claim,
        access=Access(scope="trades:read"),
        placement="owner",
        record_param="rfq_id",
    )
