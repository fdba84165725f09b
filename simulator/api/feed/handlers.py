"""HTTP handlers of the public rates feed, served at the root (spec 3 "Rates feed"): GET
/pairs, /tickers and /historical_trades. Parse the query, ask the feed service (through the
response cache), render. No key, no per-key limiter (only the shared per-IP backstop), CORS
open on every answer, `Cache-Control: public, max-age=<cache_s>` on successes; errors are
`{error: "<string>"}` (the error middleware renders them for these paths)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import BaseModel

from simulator.api.feed import schemas
from simulator.api.feed.cache import FEED_CACHE
from simulator.api.http.appkeys import ERROR_STYLES, FEED
from simulator.api.http.parsing import parse_query
from simulator.api.http.responses import raw_json_response
from simulator.api.http.routes import RouteTable
from simulator.errors import InternalError, InvalidRequest, NotFound, RateLimited, UpstreamError
from simulator.services.feed.model import TradePage, TradeRecord

CORS_HEADERS = (
    ("Access-Control-Allow-Origin", "`*`: any web page may read the feed"),
    ("Cache-Control", "`public, max-age=<seconds>` on successes (2 by default); errors `no-store`"),
)


def render_page(page: TradePage) -> schemas.HistoricalTrades:
    return schemas.HistoricalTrades.model_validate(page)


def page_json(page: TradePage, rendered: dict[tuple[str, tuple[int, ...]], bytes]) -> bytes:
    """The page's JSON, byte for byte `render_page(page).model_dump_json()`, from each trade's
    JSON rendered once: trades never change, and a page of limit 1000 holds up to 2000 of
    them, which would otherwise be validated and formatted again on every build."""

    def one(trade: TradeRecord) -> bytes:
        key = (trade.trade_id, trade.order)
        body = rendered.get(key)
        if body is None:
            body = rendered[key] = schemas.Trade.model_validate(trade).model_dump_json().encode()
        return body

    return (
        b'{"buy":['
        + b",".join(one(t) for t in page.buy)
        + b'],"sell":['
        + b",".join(one(t) for t in page.sell)
        + b"]}"
    )


async def _cached(
    request: web.Request,
    operation: str,
    query: BaseModel,
    build: Callable[[], Awaitable[bytes]],
) -> web.Response:
    cache = request.app[FEED_CACHE]
    key = (operation, tuple(sorted(query.model_dump().items())))
    body = await cache.get_or_build(key, build)
    response = raw_json_response(body)
    response.headers["Cache-Control"] = f"public, max-age={int(cache.ttl_s)}"
    return response


async def pairs(request: web.Request) -> web.Response:
    service = request.app[FEED].service

    async def build() -> bytes:
        return schemas.Pairs.model_validate(service.pairs()).model_dump_json().encode()

    return await _cached(request, "pairs", schemas.FeedQuery(), build)


async def tickers(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.TickersQuery)
    service = request.app[FEED].service

    async def build() -> bytes:
        found = await service.tickers(
            ticker_id=query.ticker_id, base=query.base, target=query.target
        )
        return schemas.Tickers.model_validate(found).model_dump_json().encode()

    return await _cached(request, "tickers", query, build)


async def historical_trades(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.HistoricalTradesQuery)
    service = request.app[FEED].service
    rendered = request.app[FEED_CACHE].trade_json

    async def build() -> bytes:
        page = service.historical_trades(
            ticker_id=query.ticker_id,
            base=query.base,
            target=query.target,
            side=query.trade_type,
            limit=query.limit,
            start_time=query.start_time,
            end_time=query.end_time,
        )
        return page_json(page, rendered)

    return await _cached(request, "historical_trades", query, build)


async def preflight(request: web.Request) -> web.Response:
    """A CORS preflight (or any OPTIONS): the feed is GET only and open to every origin."""
    return web.Response(
        status=204,
        headers={
            "Allow": "GET, OPTIONS",
            "Access-Control-Allow-Methods": "GET, OPTIONS",
            "Access-Control-Allow-Headers": "*",
            "Access-Control-Max-Age": "86400",
        },
    )


async def add_cors_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer on a feed path, errors included, may be read by any web page."""
    styles = request.app.get(ERROR_STYLES) or {}
    if styles.get(request.path) == "feed":
        response.headers["Access-Control-Allow-Origin"] = "*"
        response.headers["Access-Control-Expose-Headers"] = "X-Request-Id"


FEED_ERRORS = (RateLimited, InternalError, UpstreamError)


def add_routes(table: RouteTable) -> None:
    add = table.adder("feed", ("feed",), error_style="feed", headers=CORS_HEADERS, envelope=False)
    add(
        "GET",
        "/pairs",
        pairs,
        "feedPairs",
        "Every published pair: ticker_id, base, target",
        responses={200: schemas.Pairs},
        errors=(RateLimited, InternalError),
    )
    add(
        "GET",
        "/tickers",
        tickers,
        "feedTickers",
        "24 h tickers with live bid and ask, one per pair",
        query=schemas.TickersQuery,
        responses={200: schemas.Tickers},
        errors=(InvalidRequest, NotFound, *FEED_ERRORS),
    )
    add(
        "GET",
        "/historical_trades",
        historical_trades,
        "feedHistoricalTrades",
        "Trades of one pair, newest first; page back with end_time",
        query=schemas.HistoricalTradesQuery,
        responses={200: schemas.HistoricalTrades},
        errors=(InvalidRequest, NotFound, *FEED_ERRORS),
    )
    for path in ("/pairs", "/tickers", "/historical_trades", "/feed/openapi.json"):
        add(
            "OPTIONS",
            path,
            preflight,
            f"feedPreflight{path.replace('/', '_').replace('.', '_')}",
            "CORS preflight",
            responses={204: None},
            documented=False,
        )
