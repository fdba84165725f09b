"""HTTP handlers of the v2 RFQ API: parse, call the service, render. Nothing else."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from rfqkit.timestamps import from_unix, isoformat, isoformat_unix
from simulator.api.http.appkeys import CALLER, CLOCK, LADDER_BYTES, RFQ
from simulator.api.http.parsing import parse_body, parse_query, taker_proof
from simulator.api.http.responses import data_response, raw_json_response
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
from simulator.services.rfq.pricing import PreviewOutcome
from simulator.services.rfq.service import FirmRequest, RequestOutcome
from simulator.services.rfq.trades import TradeSpec
from simulator.services.rfq.transactions import approval, swap
from simulator.services.shared.amounts import rate_ray


def _reserved(now: float, until: float | None) -> dict[str, Any]:
    if until is None or until <= now:
        return {}
    return {"reserved_until": isoformat_unix(until), "retry_after_ms": int((until - now) * 1000)}


def render_outcome(request: web.Request, outcome: RequestOutcome) -> schemas.RfqRequestResult:
    record = outcome.record
    chain = request.app[RFQ].service.chain(record.chain_id)
    if record.quote is None:
        now = request.app[CLOCK].time()
        no_quote = schemas.NoQuote(
            rfq_id=record.rfq_id,
            claim_token=outcome.claim_token,
            status="no_quote",
            reason=record.no_quote_reason or "no_valid_quote",
            available_sell_amount=str(record.available_sell) if record.available_sell else None,
            available_buy_amount=str(record.available_buy) if record.available_buy else None,
            routing=schemas.Routing.model_validate(record.routing),
            **_reserved(now, record.reserved_until),
        )
        return schemas.RfqRequestResult(no_quote)
    quote = record.quote
    first = quote.orders[0]
    sell_token = chain.token(record.sell_token)
    buy_token = chain.token(record.buy_token)
    assert sell_token is not None
    assert buy_token is not None
    reactor = chain.contracts.reactor
    sell_amount = record.requested_sell if record.requested_sell is not None else quote.taker_pays
    firm = schemas.FirmQuote(
        rfq_id=record.rfq_id,
        claim_token=outcome.claim_token,
        status="quoted",
        quote=schemas.Quote(
            sell_amount=str(sell_amount),
            buy_amount=str(quote.buy_amount),
            fee_amount=str(quote.fee_amount),
            taker_pays=str(quote.taker_pays),
            rate_ray=str(
                rate_ray(
                    quote.taker_pays, sell_token.decimals, quote.buy_amount, buy_token.decimals
                )
            ),
            expires_at=isoformat(from_unix(quote.expires_at)),
            order_deadline=isoformat(from_unix(quote.order_deadline)),
            latest_order_deadline=isoformat(from_unix(quote.latest_order_deadline)),
            reactor=reactor,
            spender=reactor,
            taker=record.taker,
            encoded_order="0x" + first.encoded_order.hex(),
            signature="0x" + first.signature.hex(),
            orders=[
                schemas.QuoteOrder(
                    encoded_order="0x" + o.encoded_order.hex(),
                    signature="0x" + o.signature.hex(),
                    sell_amount=str(o.taker_pays),
                    buy_amount=str(o.maker_gives),
                    fee_amount=str(o.fee_amount),
                    maker=o.maker,
                )
                for o in quote.orders
            ],
        ),
        transactions=schemas.Transactions(
            approval=schemas.UnsignedTransaction.model_validate(
                approval(record.chain_id, record.sell_token, reactor, quote.taker_pays)
            ),
            swap=schemas.UnsignedTransaction.model_validate(swap(record.chain_id, reactor, quote)),
        ),
        routing=schemas.Routing.model_validate(record.routing),
    )
    return schemas.RfqRequestResult(firm)


def render_preview(
    spec: TradeSpec, outcome: PreviewOutcome, reserved: dict[str, Any]
) -> schemas.PreviewResult:
    available_sell = str(outcome.depth.sell) if outcome.depth.sell else None
    if outcome.price is None:
        return schemas.PreviewResult(
            schemas.PreviewNoQuote(
                status="no_quote",
                reason=outcome.reason or "no_valid_quote",
                available_sell_amount=available_sell,
                available_buy_amount=str(outcome.depth.buy) if outcome.depth.buy else None,
                routing=schemas.Routing.model_validate(outcome.routing),
                **reserved,
            )
        )
    price = outcome.price
    sell_amount = spec.sell_amount if spec.sell_amount is not None else price.taker_pays
    return schemas.PreviewResult(
        schemas.Preview(
            status="preview",
            sell_amount=str(sell_amount),
            buy_amount=str(price.buy_amount),
            fee_amount=str(price.fee),
            taker_pays=str(price.taker_pays),
            rate_ray=str(
                rate_ray(price.taker_pays, spec.sell.decimals, price.buy_amount, spec.buy.decimals)
            ),
            available_sell_amount=available_sell,
            routing=schemas.Routing.model_validate(outcome.routing),
        )
    )


async def preview(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.PreviewBody)
    service = request.app[RFQ].service
    spec, outcome, reserved_until = service.preview(
        chain_id=body.chain_id,
        sell_token=body.sell_token,
        buy_token=body.buy_token,
        sell_amount=body.sell_amount,
        buy_amount=body.buy_amount,
        preferred=body.preferred_liquidity_wallets,  # type: ignore[arg-type]
        restricted=body.restricted_liquidity_wallets,  # type: ignore[arg-type]
    )
    reserved = _reserved(request.app[CLOCK].time(), reserved_until)
    return data_response(render_preview(spec, outcome, reserved), exclude_none=True)


async def request_quote(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.RfqRequestBody)
    outcome = await request.app[RFQ].service.request(
        request[CALLER],
        FirmRequest(
            chain_id=body.chain_id,
            sell_token=body.sell_token,
            buy_token=body.buy_token,
            sell_amount=body.sell_amount,
            buy_amount=body.buy_amount,
            taker=body.taker,
            proof=taker_proof(body.taker_proof),
            preferred=body.preferred_liquidity_wallets,  # type: ignore[arg-type]
            restricted=body.restricted_liquidity_wallets,  # type: ignore[arg-type]
        ),
    )
    record_maker_wait(request, outcome.maker_wait_s)
    return data_response(render_outcome(request, outcome), exclude_none=True)


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
    )
