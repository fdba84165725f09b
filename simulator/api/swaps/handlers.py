"""HTTP handlers of the v1 taker side (spec 3): the quote, the order book and instant swaps.
Parse, call the service, render."""

from __future__ import annotations

from aiohttp import web
from pydantic import TypeAdapter

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import BOOK, CALLER, SWAPS, V1_BOOK_BYTES
from simulator.api.http.parsing import parse_body, parse_query
from simulator.api.http.responses import body_response, data_response, raw_json_response
from simulator.api.http.routes import Access, RouteTable
from simulator.api.swaps import schemas
from simulator.api.v1.access import KEY_SECURITY, V1_KEY_ERRORS
from simulator.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    UpstreamError,
)
from simulator.services.limit_orders.book import capacity
from simulator.services.swaps.model import SwapRecord
from simulator.services.swaps.service import SwapRequest

OFFERS = TypeAdapter(list[schemas.Offer])


async def order_book(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.OrderBookQuery)
    found = await request.app[BOOK].service.order_book(
        request[CALLER],
        chain_id=query.chain_id,
        sell_token=query.sell_token,
        buy_token=query.buy_token,
        preferred=query.preferred_liquidity_wallets,
        restricted=query.restricted_liquidity_wallets,
    )
    # The offers (up to hundreds) are rendered once per ranking the book service hands out
    # (it caches them per block); the few fields around them are rendered per request.
    cache = request.app[V1_BOOK_BYTES]
    key = (found.chain_id, found.sell.address, found.buy.address, repr(query))
    rendered = cache.get(key)
    if rendered is None or rendered[0] is not found.offers:
        sell_capacity, buy_capacity = capacity(found.offers)
        offers = OFFERS.dump_json([schemas.Offer.model_validate(o) for o in found.offers])
        rendered = (found.offers, offers, str(sell_capacity), str(buy_capacity))
        if len(cache) > 256:
            cache.clear()
        cache[key] = rendered
    _, offers, sell_capacity_text, buy_capacity_text = rendered
    head = schemas.OrderBookHead(
        chain_id=found.chain_id,
        sell_token=found.sell.address,
        buy_token=found.buy.address,
        block_number=found.block,
        as_of=isoformat_unix(found.as_of) or "",
        sell_capacity=sell_capacity_text,
        buy_capacity=buy_capacity_text,
    ).model_dump_json()
    return raw_json_response(b'{"data":' + head[:-1].encode() + b',"offers":' + offers + b"}}")


def _request(
    query: schemas.QuoteQuery | schemas.SwapCreateBody,
    taker: str | None,
    require_full_fill: bool,
) -> SwapRequest:
    return SwapRequest(
        chain_id=query.chain_id,
        sell_token=query.sell_token,
        buy_token=query.buy_token,
        sell_amount=int(query.sell_amount),
        taker=taker,
        min_rate=int(query.min_rate) if query.min_rate is not None else None,
        require_full_fill=require_full_fill,
        preferred=query.preferred_liquidity_wallets,
        restricted=query.restricted_liquidity_wallets,
    )


async def quote(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.QuoteQuery)
    result = await request.app[SWAPS].service.quote(
        request[CALLER], _request(query, None, require_full_fill=False)
    )
    return data_response(schemas.SwapQuote.model_validate(result))


async def create_swap(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.SwapCreateBody)
    outcome = await request.app[SWAPS].service.create(
        request[CALLER], _request(body, body.taker, require_full_fill=body.require_full_fill)
    )
    if isinstance(outcome, SwapRecord):
        return data_response(schemas.Swap.model_validate(outcome), status=201)
    return data_response(schemas.SwapNotFillable.model_validate(outcome))


async def list_swaps(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.SwapListQuery)
    page = await request.app[SWAPS].service.page(
        request[CALLER], status=query.status, cursor=query.cursor, limit=query.limit
    )
    return body_response(
        schemas.SwapPage(
            data=[schemas.Swap.model_validate(r) for r in page.swaps], next_cursor=page.next_cursor
        )
    )


async def get_swap(request: web.Request) -> web.Response:
    record = await request.app[SWAPS].service.get(request[CALLER], request.match_info["swap_id"])
    return data_response(schemas.Swap.model_validate(record))


async def submit(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.SwapSubmitBody)
    record = await request.app[SWAPS].service.submit(
        request[CALLER], request.match_info["swap_id"], body.tx_hash
    )
    return data_response(schemas.Swap.model_validate(record))


KEY_ERRORS = V1_KEY_ERRORS
BODY_ERRORS = (InvalidRequest, PayloadTooLarge, *KEY_ERRORS)


def add_routes(table: RouteTable) -> None:
    add = table.adder("v1", ("swaps",), security=KEY_SECURITY)
    add(
        "GET",
        "/v1/quote",
        quote,
        "v1Quote",
        "What an instant swap would compose now from whole resting orders",
        query=schemas.QuoteQuery,
        responses={200: schemas.SwapQuote},
        errors=(InvalidRequest, UpstreamError, *KEY_ERRORS),
        access=Access(scope="quotes:read", keyless=False),
    )
    add(
        "GET",
        "/v1/order-book",
        order_book,
        "v1OrderBook",
        "Live, funded, executable resting offers for one direction, best rate first",
        query=schemas.OrderBookQuery,
        responses={200: schemas.OrderBook},
        errors=(InvalidRequest, UpstreamError, *KEY_ERRORS),
        access=Access(scope="quotes:read", keyless=False),
    )
    add(
        "POST",
        "/v1/swaps",
        create_swap,
        "v1SwapsCreate",
        "Build an instant swap: approval plus one executeBatch of whole resting orders",
        body=schemas.SwapCreateBody,
        responses={201: schemas.Swap, 200: schemas.SwapNotFillable},
        errors=(*BODY_ERRORS, UpstreamError),
        access=Access(scope="trades:write", keyless=False),
        idempotent=True,
    )
    add(
        "GET",
        "/v1/swaps",
        list_swaps,
        "v1SwapsList",
        "This partner's swaps, newest first, one page",
        query=schemas.SwapListQuery,
        responses={200: schemas.SwapPage},
        errors=(InvalidRequest, *KEY_ERRORS),
        envelope=False,
        access=Access(scope="trades:read", keyless=False),
    )
    add(
        "GET",
        "/v1/swaps/{swap_id}",
        get_swap,
        "v1SwapsGet",
        "A swap with its live status",
        responses={200: schemas.Swap},
        errors=(NotFound, *KEY_ERRORS),
        access=Access(scope="trades:read", keyless=False),
    )
    add(
        "POST",
        "/v1/swaps/{swap_id}/submit",
        submit,
        "v1SwapsSubmit",
        "Report the swap's transaction hash",
        body=schemas.SwapSubmitBody,
        responses={200: schemas.Swap},
        errors=(*BODY_ERRORS, NotFound, Conflict),
        access=Access(scope="trades:write", keyless=False),
    )
