"""The rates feed's HTTP edge on the app without chains (a venue set in by hand, the fill index
marked current by the test), over real loopback HTTP: `{error: "<string>"}` bodies with their
statuses and never the envelope, X-Request-Id and CORS on every answer, the preflight, 405 for
other methods, the cache (Cache-Control, dropped on a clock advance, never holding a 502) and
the feed's own OpenAPI document. The venue has RFQ corridors only: a BOOK corridor is priced from
its chain's book (tests/unit/services/feed/test_book_prices.py), and this app has no chain."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer
from openapi_spec_validator import validate

from simulator.api.feed.handlers import page_json, render_page
from simulator.api.http.appkeys import CLOCK, FEED, FILL_INDEX, VENUE
from simulator.runtime.app import create_app
from simulator.settings import load_settings
from tests.unit.services.feed.harness import NGNS, USDT, Harness, chain_venue

Client = TestClient[web.Request, web.Application]


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 5}), start_chains=False)
    for chain_id in (56, 97):
        chain = chain_venue(chain_id)
        rfq = tuple(c for c in chain.corridors if c.timing.mode == "RFQ")
        app[VENUE].chains[chain_id] = replace(chain, corridors=rfq)
        app[FILL_INDEX].mark(chain_id, "current", app[CLOCK].monotonic())
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


def keep_index_current(client: Client) -> None:
    app = client.app
    assert app is not None
    for chain_id in (56, 97):
        app[FILL_INDEX].mark(chain_id, "current", app[CLOCK].monotonic())


async def feed_error(resp: ClientResponse, status: int) -> str:
    assert resp.status == status, await resp.text()
    body = await resp.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"], str), body
    assert body["error"], body
    assert resp.headers["X-Request-Id"].startswith("req_")
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Cache-Control"] == "no-store"
    return str(body["error"])


async def ok(resp: ClientResponse) -> Any:
    assert resp.status == 200, await resp.text()
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert resp.headers["Cache-Control"] == "public, max-age=2"
    assert resp.headers["X-Request-Id"].startswith("req_")
    return await resp.json()


async def test_pairs_and_tickers_are_top_level_arrays(client: Client) -> None:
    pairs = await ok(await client.get("/pairs"))
    assert pairs[0] == {"ticker_id": "USDT_NGN", "base": "USDT", "target": "NGN"}
    keep_index_current(client)
    tickers = await ok(await client.get("/tickers"))
    assert [t["ticker_id"] for t in tickers] == [p["ticker_id"] for p in pairs]
    assert set(tickers[0]) == {
        "ticker_id",
        "base_currency",
        "target_currency",
        "last_price",
        "bid",
        "ask",
        "high",
        "low",
        "base_volume",
        "target_volume",
    }
    assert tickers[0]["bid"] == "0", "no maker online: nothing fillable"


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/tickers?ticker_id=usdt_ngn", 400, "ticker_id"),
        ("/tickers?ticker_id=USDT-NGN", 400, "ticker_id"),
        ("/tickers?ticker_id=NGN_USDT", 404, "NGN_USDT"),
        ("/tickers?base=XYZ", 404, "XYZ"),
        ("/tickers?ticker_id=USDT_NGN&base=USDC", 400, "match"),
        ("/historical_trades", 400, "required"),
        ("/historical_trades?base=USDT", 400, "required"),
        ("/historical_trades?ticker_id=USDT_NGN&type=both", 400, "type"),
        ("/historical_trades?ticker_id=USDT_NGN&limit=0", 400, "limit"),
        ("/historical_trades?ticker_id=USDT_NGN&limit=-5", 400, "limit"),
        ("/historical_trades?ticker_id=USDT_NGN&limit=ten", 400, "limit"),
        ("/historical_trades?ticker_id=USDT_NGN&limit=1.5", 400, "limit"),
        ("/historical_trades?ticker_id=USDT_NGN&limit=1&limit=2", 400, "limit"),
        ("/historical_trades?ticker_id=USDT_NGN&start_time=x", 400, "start_time"),
        ("/historical_trades?ticker_id=USDT_NGN&start_time=-1", 400, "start_time"),
        ("/historical_trades?ticker_id=USDT_NGN&start_time=9&end_time=8", 400, "start_time"),
        ("/historical_trades?base=USDT&target=USDC", 404, "USDT_USDC"),
    ],
)
async def test_bad_input_gets_its_status_and_an_error_string(
    client: Client, path: str, status: int, words: str
) -> None:
    keep_index_current(client)
    assert words in await feed_error(await client.get(path), status)


async def test_limit_above_1000_is_clamped_not_refused(client: Client) -> None:
    keep_index_current(client)
    body = await ok(await client.get("/historical_trades?ticker_id=USDT_NGN&limit=100000"))
    assert body == {"buy": [], "sell": []}


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "HEAD"])
@pytest.mark.parametrize("path", ["/pairs", "/tickers", "/historical_trades"])
async def test_other_methods_are_405_with_an_error_string(
    client: Client, method: str, path: str
) -> None:
    resp = await client.request(method, path)
    assert resp.status == 405
    assert resp.headers["Allow"] == "GET, OPTIONS"
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    if method != "HEAD":  # a HEAD answer has no body
        await feed_error(resp, 405)


async def test_the_preflight_is_answered(client: Client) -> None:
    resp = await client.options(
        "/tickers",
        headers={"Origin": "https://tracker.example", "Access-Control-Request-Method": "GET"},
    )
    assert resp.status == 204
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert "GET" in resp.headers["Access-Control-Allow-Methods"]
    assert resp.headers["X-Request-Id"].startswith("req_")


async def test_an_unknown_path_next_to_the_feed_keeps_the_envelope(client: Client) -> None:
    resp = await client.get("/tickers/USDT_NGN")
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"


async def test_a_502_is_never_cached_and_a_cached_answer_survives_it(client: Client) -> None:
    app = client.app
    assert app is not None
    keep_index_current(client)
    before = await ok(await client.get("/tickers?ticker_id=USDT_NGN"))
    app[FILL_INDEX].mark(97, "unreachable", app[CLOCK].monotonic(), "chain unreachable: x")
    message = await feed_error(await client.get("/tickers?ticker_id=WBNB_USDT"), 502)
    assert "chain 97" in message
    await feed_error(await client.get("/historical_trades?ticker_id=USDT_NGN"), 502)
    assert await ok(await client.get("/tickers?ticker_id=USDT_NGN")) == before, "still cached"
    keep_index_current(client)
    await ok(await client.get("/tickers?ticker_id=WBNB_USDT"))  # not a cached 502
    await ok(await client.get("/historical_trades?ticker_id=USDT_NGN"))


async def test_the_cache_holds_for_its_period_and_a_clock_advance_drops_it(client: Client) -> None:
    app = client.app
    assert app is not None
    keep_index_current(client)
    path = "/historical_trades?ticker_id=USDT_NGN"
    assert await ok(await client.get(path)) == {"buy": [], "sell": []}
    fills = Harness()  # builds fills the way the indexer decodes them
    fill = fills.fill(
        gave=NGNS, gave_amount=1600 * 10**6, got=USDT, got_amount=10**18, at=app[CLOCK].time()
    )
    await app[FEED].service.on_fill(fill)
    assert await ok(await client.get(path)) == {"buy": [], "sell": []}, "cached for 2 s"
    assert len((await ok(await client.get(path + "&limit=5")))["sell"]) == 1, "another query"
    await app[CLOCK].advance(1)
    keep_index_current(client)
    (trade,) = (await ok(await client.get(path)))["sell"]
    assert trade["trade_id"] == fill.trade_id


async def test_the_feed_has_its_own_openapi_document(client: Client) -> None:
    resp = await client.get("/feed/openapi.json")
    assert resp.status == 200
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    document = await resp.json()
    validate(document)
    assert set(document["paths"]) == {
        "/pairs",
        "/tickers",
        "/historical_trades",
        "/feed/openapi.json",
    }
    schemas = document["components"]["schemas"]
    assert "FeedError" in schemas
    assert "ErrorEnvelope" not in schemas
    trades = document["paths"]["/historical_trades"]["get"]
    assert {p["name"] for p in trades["parameters"]} == {
        "ticker_id",
        "base",
        "target",
        "type",
        "limit",
        "start_time",
        "end_time",
    }
    for status in ("400", "404", "502"):
        error = trades["responses"][status]["content"]["application/json"]["schema"]
        assert error == {"$ref": "#/components/schemas/FeedError"}
    v2 = await (await client.get("/v2/openapi.json")).json()
    assert not {"/pairs", "/tickers", "/historical_trades"} & set(v2["paths"])


async def test_a_page_from_pre_rendered_trades_is_the_models_json_byte_for_byte() -> None:
    h = Harness()
    for n in range(30):
        if n % 3:
            fill = h.fill(gave=USDT, gave_amount=10**18 + n, got=NGNS, got_amount=1_600 * 10**6)
        else:
            fill = h.fill(gave=NGNS, gave_amount=1_599 * 10**6, got=USDT, got_amount=10**18 + n)
        await h.add(fill)
    rendered: dict[tuple[str, tuple[int, ...]], bytes] = {}
    for side in (None, "buy", "sell"):
        page = h.trades(side=side)
        expected = render_page(page).model_dump_json().encode()
        assert page_json(page, rendered) == expected
        assert page_json(page, rendered) == expected, "again, from the rendered trades"
    assert len(rendered) == 30
    empty = h.trades(start_time=0, end_time=0)
    assert page_json(empty, rendered) == b'{"buy":[],"sell":[]}'
