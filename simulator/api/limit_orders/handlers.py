"""HTTP handlers of the v1 limit orders (spec 3): parse, call the book service, render."""

from __future__ import annotations

from types import SimpleNamespace

from aiohttp import web

from simulator.api.http.appkeys import BOOK, CALLER
from simulator.api.http.parsing import parse_body, parse_query
from simulator.api.http.responses import Joined, data_response
from simulator.api.http.routes import Access, RouteTable
from simulator.api.limit_orders import schemas
from simulator.api.v1.access import KEY_SECURITY, V1_KEY_ERRORS
from simulator.errors import (
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
)
from simulator.services.limit_orders.placement import PrepareRequest, SignedPlacement


async def quote(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.LimitOrderQuoteQuery)
    result = await request.app[BOOK].service.quote(
        request[CALLER],
        chain_id=query.chain_id,
        sell_token=query.sell_token,
        buy_token=query.buy_token,
        sell_amount=int(query.sell_amount),
        margin_bps=query.margin_bps,
        preferred=query.preferred_liquidity_wallets,
        restricted=query.restricted_liquidity_wallets,
    )
    return data_response(schemas.LimitOrderQuote.model_validate(result))


async def prepare(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.PrepareBody)
    prepared = await request.app[BOOK].service.prepare(
        request[CALLER],
        PrepareRequest(
            chain_id=body.chain_id,
            maker=body.maker,
            sell_token=body.sell_token,
            sell_amount=int(body.sell_amount),
            buy_token=body.buy_token,
            buy_amount=int(body.buy_amount) if body.buy_amount is not None else None,
            pricing_mode=body.pricing.mode if body.pricing is not None else None,
            margin_bps=body.pricing.margin_bps if body.pricing is not None else 10,
            deadline=schemas.unix_seconds(body.deadline),
            preferred=None,
            restricted=None,
        ),
    )
    # The wire's `order` is the signed struct with the chain it is for.
    order = SimpleNamespace(order=Joined(prepared.order, prepared))
    shown = schemas.Prepared.model_validate(Joined(order, prepared))
    return data_response(shown, exclude_none=True)


async def place(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.SignedOrderBody)
    order, status = await request.app[BOOK].service.place(
        request[CALLER],
        SignedPlacement(
            chain_id=body.chain_id,
            reactor=body.reactor,
            maker=body.maker,
            input_token=body.input_token,
            input_amount=int(body.input_amount),
            output_token=body.output_token,
            output_amount=int(body.output_amount),
            nonce=int(body.nonce),
            deadline=schemas.unix_seconds(body.deadline),
            signature=bytes.fromhex(body.signature[2:]),
        ),
    )
    return data_response(schemas.Placed.model_validate(Joined(order, status)), status=201)


async def list_orders(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.LimitOrderListQuery)
    service = request.app[BOOK].service
    orders = service.of_wallet(request[CALLER], query.chain_id, query.wallet, query.limit)
    statuses = await service.statuses(query.chain_id, orders)
    return data_response(
        schemas.LimitOrderList(
            [
                schemas.LimitOrderRecord.model_validate(Joined(o, s))
                for o, s in zip(orders, statuses, strict=True)
            ]
        )
    )


async def get_order(request: web.Request) -> web.Response:
    service = request.app[BOOK].service
    order = service.owned(request[CALLER], request.match_info["order_id"])
    status = await service.status_of(order)
    return data_response(schemas.LimitOrderRecord.model_validate(Joined(order, status)))


KEY_ERRORS = V1_KEY_ERRORS
BODY_ERRORS = (InvalidRequest, PayloadTooLarge, *KEY_ERRORS)
# GET /v1/limit-orders/{order_id} for the router: never the concrete siblings.
ORDER_ID_ROUTE = "/v1/limit-orders/{order_id:(?!(?:quote|prepare)$)[^/]+}"


def add_routes(table: RouteTable) -> None:
    add = table.adder("v1", ("limit-orders",), security=KEY_SECURITY)
    add(
        "GET",
        "/v1/limit-orders/quote",
        quote,
        "v1LimitOrdersQuote",
        "fastFill and queue pricing for a limit order",
        query=schemas.LimitOrderQuoteQuery,
        responses={200: schemas.LimitOrderQuote},
        errors=(InvalidRequest, UpstreamError, *KEY_ERRORS),
        access=Access(scope="quotes:read", keyless=False),
    )
    add(
        "POST",
        "/v1/limit-orders/prepare",
        prepare,
        "v1LimitOrdersPrepare",
        "Typed data (Permit2 PermitWitnessTransferFrom) for the maker to sign",
        body=schemas.PrepareBody,
        responses={200: schemas.Prepared},
        errors=(*BODY_ERRORS, UpstreamError),
        access=Access(scope="trades:write", keyless=False),
    )
    add(
        "POST",
        "/v1/limit-orders",
        place,
        "v1LimitOrdersCreate",
        "Rest a signed limit order in the book",
        body=schemas.SignedOrderBody,
        responses={201: schemas.Placed},
        errors=(*BODY_ERRORS, UpstreamError),
        access=Access(scope="trades:write", keyless=False),
        idempotent=True,
    )
    add(
        "GET",
        "/v1/limit-orders",
        list_orders,
        "v1LimitOrdersList",
        "A wallet's limit orders through this partner, newest first",
        query=schemas.LimitOrderListQuery,
        responses={200: schemas.LimitOrderList},
        errors=(InvalidRequest, *KEY_ERRORS),
        access=Access(scope="trades:read", keyless=False),
    )
    add(
        "GET",
        "/v1/limit-orders/{order_id}",
        get_order,
        "v1LimitOrdersGet",
        "A limit order with its live status (this partner's only)",
        route_path=ORDER_ID_ROUTE,
        responses={200: schemas.LimitOrderRecord},
        errors=(NotFound, *KEY_ERRORS),
        access=Access(scope="trades:read", keyless=False),
    )
