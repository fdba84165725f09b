"""The rates feed's transport rules and errors (spec 3 "Rates feed errors", "Limits" item 3):
GET only (any other method 405), CORS open with the preflight answered, every error exactly
`{error: "<string>"}` with its status (400 missing or malformed parameter, 404 unknown ticker_id
or pair, 405, 502 when the feed cannot be built), never a 500 and never the v2 envelope, and an
X-Request-Id on every answer. The 502s are forced through the simulator's fault switches; the
answer cached before the fault is not replaced by the failure, and the failure is not cached.
"""

from __future__ import annotations

import secrets

import pytest

from conformance.calls.control import faults
from conformance.calls.feed import assert_feed_error, assert_feed_ok, get_pairs, get_tickers
from conformance.calls.rfq_calls import keyless_client
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.chain import wait_for
from conformance.wire.client import Client

FEED_PATHS = ("/pairs", "/tickers", "/historical_trades")


@pytest.fixture
def reader(target: Target, http: Client) -> Client:
    return keyless_client(target, http)


BAD_REQUESTS = [
    pytest.param("/tickers", {"ticker_id": "usdt_ngn"}, 400, id="ticker_id-lowercase"),
    pytest.param("/tickers", {"ticker_id": "USDT-NGN"}, 400, id="ticker_id-no-underscore"),
    pytest.param("/tickers", {"ticker_id": "USDT_NGN_X"}, 400, id="ticker_id-three-parts"),
    pytest.param("/tickers", {"ticker_id": "NGN_USDT"}, 404, id="ticker_id-reversed"),
    pytest.param("/tickers", {"ticker_id": "BTC_USDT"}, 404, id="ticker_id-unknown"),
    pytest.param("/tickers", {"base": "NGNS"}, 404, id="base-unpublished-symbol"),
    pytest.param("/tickers", {"base": "NGN", "target": "USDT"}, 404, id="pair-unknown"),
    pytest.param("/tickers", {"base": "usdt"}, 400, id="base-malformed"),
    pytest.param("/historical_trades", {}, 400, id="trades-no-pair"),
    pytest.param("/historical_trades", {"base": "USDT"}, 400, id="trades-base-alone"),
    pytest.param("/historical_trades", {"ticker_id": "NGN_USDT"}, 404, id="trades-unknown"),
    pytest.param(
        "/historical_trades", {"base": "USDT", "target": "BTC"}, 404, id="trades-pair-unknown"
    ),
    pytest.param(
        "/historical_trades", {"ticker_id": "USDT_NGN", "type": "both"}, 400, id="type-other"
    ),
    pytest.param("/historical_trades", {"ticker_id": "USDT_NGN", "limit": "0"}, 400, id="limit-0"),
    pytest.param(
        "/historical_trades", {"ticker_id": "USDT_NGN", "limit": "-1"}, 400, id="limit-negative"
    ),
    pytest.param(
        "/historical_trades", {"ticker_id": "USDT_NGN", "limit": "many"}, 400, id="limit-word"
    ),
    pytest.param(
        "/historical_trades", {"ticker_id": "USDT_NGN", "limit": "2.5"}, 400, id="limit-fraction"
    ),
    pytest.param(
        "/historical_trades",
        {"ticker_id": "USDT_NGN", "start_time": "yesterday"},
        400,
        id="start_time-word",
    ),
    pytest.param(
        "/historical_trades",
        {"ticker_id": "USDT_NGN", "end_time": "1700000000000.5"},
        400,
        id="end_time-fraction",
    ),
    pytest.param(
        "/historical_trades",
        {"ticker_id": "USDT_NGN", "start_time": "1700000001", "end_time": "1700000000"},
        400,
        id="start-after-end",
    ),
]


@pytest.mark.spec(
    "v1/errors/rates-feed-errors/body-error-string-400",
    "v1/feed/get-tickers/query",
    "v1/feed/get-historical_trades/query",
)
@pytest.mark.parametrize(("path", "params", "status"), BAD_REQUESTS)
def test_bad_input_gets_its_status_and_an_error_string(
    reader: Client, path: str, params: dict[str, str], status: int
) -> None:
    assert_feed_error(reader.get(path, params=params), status)


@pytest.mark.spec(
    "v1/errors/rates-feed-errors/body-error-string-400",
    "v1/feed/get-only-no-key",
    "v1/limits/rates-feed",
)
@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", FEED_PATHS)
def test_every_other_method_is_405(reader: Client, path: str, method: str) -> None:
    resp = reader.request(method, path, json={"ticker_id": "USDT_NGN"})
    assert_feed_error(resp, 405)
    allowed = {m.strip() for m in (resp.headers.get("Allow") or "").split(",")}
    assert "GET" in allowed, resp.headers
    assert not allowed & {"POST", "PUT", "PATCH", "DELETE"}, resp.headers


@pytest.mark.spec("v1/limits/rates-feed", "v1/feed/get-only-no-key")
@pytest.mark.parametrize("path", FEED_PATHS)
def test_cors_is_open_and_the_preflight_is_answered(reader: Client, path: str) -> None:
    resp = reader.request(
        "OPTIONS",
        path,
        headers={"Origin": "https://tracker.example", "Access-Control-Request-Method": "GET"},
    )
    assert resp.status in (200, 204), resp.describe()
    assert resp.headers.get("Access-Control-Allow-Origin") == "*", resp.headers
    assert "GET" in (resp.headers.get("Access-Control-Allow-Methods") or ""), resp.headers
    assert resp.request_id, "X-Request-Id on every response"
    # The answers themselves: readable from any origin, cached publicly for a few seconds.
    origin = reader.with_headers({"Origin": "https://tracker.example"})
    params = {"ticker_id": "USDT_NGN"} if path == "/historical_trades" else None
    assert_feed_ok(origin.get(path, params=params))


@pytest.mark.spec("v1/errors/rates-feed-errors/body-error-string-400")
def test_odd_input_is_never_a_server_error(reader: Client) -> None:
    odd = [
        {"ticker_id": "USDT_NGN", "limit": "9" * 400},
        {"ticker_id": "USDT_NGN", "start_time": "9" * 40, "end_time": "9" * 41},
        {"ticker_id": "ÜSDT_NGN"},
        {"ticker_id": "USDT_NGN", "type": ""},
        {"ticker_id": ""},
        {"ticker_id": "USDT_NGN", "limit": "1", "extra": "ignored"},
    ]
    for params in odd:
        resp = reader.get("/historical_trades", params=params)
        assert resp.status < 500, resp.describe()
        if resp.status != 200:
            assert_feed_error(resp, resp.status)
    resp = reader.get("/tickers", params={"ticker_id": ["USDT_NGN", "WBNB_USDT"]})
    assert_feed_error(resp, 400)  # one pair per request


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec("v1/errors/rates-feed-errors/body-error-string-400", "v1/limits/rates-feed")
@pytest.mark.parametrize("switch", ["chain_unreachable", "indexer_paused"])
def test_an_unreachable_chain_or_index_is_502_and_poisons_no_cache(
    target: Target, sim: SimControl, reader: Client, switch: str
) -> None:
    pairs = get_pairs(reader)
    chain_id = int(target.chains()[-1]["chain_id"])
    queries = [("/tickers", {}), ("/historical_trades", {"ticker_id": pairs[0]["ticker_id"]})]
    for path, params in queries:
        assert_feed_ok(reader.get(path, params=params or None))
    with faults(sim, **{switch: [chain_id]}):
        for path, params in queries:

            def failing(path: str = path, params: dict[str, str] = params) -> str | None:
                resp = reader.get(path, params=params or None)
                if resp.status == 200:
                    return None  # the answer cached before the fault, for its few seconds
                return assert_feed_error(resp, 502)

            message = wait_for(failing, timeout=10, interval=0.2, what=f"{path} to answer 502")
            assert str(chain_id) in message, message
        assert get_pairs(reader) == pairs, "the pairs need no chain"
        # The last thing asked during the fault: a query that just answered 502.
        assert_feed_error(reader.get("/tickers", params=queries[0][1] or None), 502)
    # Once the index is current again (a query never asked during the fault answers), the
    # queries that failed a moment ago answer at once: no cache kept their 502.
    probe = {"ticker_id": pairs[-1]["ticker_id"], "start_time": secrets.randbelow(10**9)}
    wait_for(
        lambda: (
            assert_feed_ok(resp)
            if (resp := reader.get("/historical_trades", params=probe)).status == 200
            else None
        ),
        timeout=10,
        interval=0.05,
        what="the feed after the fault",
    )
    for path, params in queries:
        assert_feed_ok(reader.get(path, params=params or None))
    assert get_tickers(reader)
