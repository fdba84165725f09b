"""The maker stream (spec 1-rfq-v2: "The message protocol of WSS /v2/maker/stream (used by maker
credentials): not shown"; decisions R16, designed in docs/maker-protocol.md).

Who may open the stream is the spec's (maker credentials; a taker key is 403, no credential or a
bad key 401, each refusal an error envelope with its request id): checked on any deployment, the
maker credential's side with a given one (``--maker-key``). The ``welcome`` a
maker gets and the ``rfq`` message a firm request sends it are rfqsim's own protocol, checked
from a maker bot's side (conformance/deployment/maker_probe.py) on the simulator only
(``sim_only(because="decision")``): another deployment may speak another protocol.
"""

from __future__ import annotations

import secrets
from typing import Any

import pytest
from eth_account import Account
from eth_utils.address import to_checksum_address

from conformance.calls.rfq_calls import expect_no_quote, get_record, request_quote, rfq_body
from conformance.deployment.key_source import KeySource
from conformance.deployment.maker_probe import (
    MakerProbe,
    new_maker_key,
    opens_the_stream,
    stream_url,
)
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client
from conformance.wire.response_checks import (
    assert_error,
    assert_no_rate_limit_headers,
    parse_iso_utc,
)

STREAM = "/v2/maker/stream"
WELCOME_FIELDS = {
    "type",
    "makerId",
    "wallet",
    "environment",
    "serverTimeMs",
    "levelsMinIntervalMs",
    "levelsMaxAgeMs",
    "pingIntervalMs",
    "chains",
}
PAIR_FIELDS = {
    "sellToken",
    "buyToken",
    "sellDecimals",
    "buyDecimals",
    "feeBps",
    "replyBudgetMs",
    "quoteTtlMs",
}
RFQ_FIELDS = {
    "type",
    "quoteId",
    "rfqId",
    "chainId",
    "sellToken",
    "buyToken",
    "kind",
    "makerReceives",
    "feeAmount",
    "makerGives",
    "feeBps",
    "taker",
    "reactor",
    "signatureTransfer",
    "replyByMs",
    "minExpiresAtMs",
    "maxExpiresAtMs",
}


def _client(target: Target, http: Client) -> Client:
    """A given taker key is shared by the tests: its window is paced, not spent."""
    return http if target.controllable else http.paced()


# Handshake failures are plain HTTP answers in the error envelope, before any upgrade, each with
# its X-Request-Id (assert_error).


@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/errors/401-unauthorized",
    "rfq/errors/envelope",
    "rfq/overview/conventions/every-response-carries-x-request-id",
)
def test_the_stream_without_a_credential_is_401(target: Target, http: Client) -> None:
    assert_error(_client(target, http).get(STREAM), 401, "unauthorized")


@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/revoked-suspended-unknown-malformed",
    "rfq/errors/401-unauthorized",
    "rfq/limits/absent-responses-rejected-earlier",
)
def test_an_unknown_or_malformed_key_on_the_stream_is_401_without_rate_limit_headers(
    target: Target, http: Client
) -> None:
    client = _client(target, http)
    for headers in (
        {"Authorization": "Bearer tx_test_0123456789ab." + "A" * 43},  # well formed, unknown
        {"X-API-Key": "nonsense"},  # malformed
    ):
        refused = client.get(STREAM, headers=headers)
        assert_error(refused, 401, "unauthorized")
        # Rejected before the per-key limiter: its headers are absent (spec 1 "Limits").
        assert_no_rate_limit_headers(refused)


@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/maker-credentials-look-like",
    "rfq/auth/api-keys/scopes",
    "rfq/errors/403-forbidden",
)
def test_a_taker_key_on_the_stream_is_403(target: Target, http: Client) -> None:
    keys = KeySource(target, "stream")
    try:
        taker = keys.make("test", ("trades:write", "trades:read"))
        headers = {"Authorization": f"Bearer {taker['key']}"}
        assert_error(_client(target, http).get(STREAM, headers=headers), 403, "forbidden")
    finally:
        keys.close()


@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/sent-authorization-bearer-api_key",
    "rfq/auth/api-keys/scopes",
    "rfq/errors/403-forbidden",
)
def test_a_read_only_taker_key_in_the_x_api_key_header_is_403_on_the_stream(
    target: Target, http: Client
) -> None:
    # Whichever header carries it, a key without maker scopes never opens the stream.
    keys = KeySource(target, "stream-read")
    try:
        reader = keys.make("test", ("trades:read",))
        headers = {"X-API-Key": str(reader["key"])}
        assert_error(_client(target, http).get(STREAM, headers=headers), 403, "forbidden")
    finally:
        keys.close()


@pytest.mark.needs("key:maker")
@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/maker-credentials-look-like",
)
def test_a_maker_credential_opens_the_stream(target: Target, maker_credential: str) -> None:
    # The upgrade succeeds and the service does not close the connection before it says
    # anything (whatever it says: the protocol is not shown).
    opens_the_stream(stream_url(target.base_url), maker_credential)


@pytest.mark.needs("key:maker")
@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/sent-authorization-bearer-api_key",
)
def test_a_maker_credential_in_the_x_api_key_header_opens_the_stream(
    target: Target, maker_credential: str
) -> None:
    # A key is sent either way (spec 1 "API keys"), the maker's credential on the stream too.
    opens_the_stream(stream_url(target.base_url), maker_credential, header="X-API-Key")


@pytest.mark.needs("key:maker")
@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/auth/api-keys/revoked-suspended-unknown-malformed",
    "rfq/errors/401-unauthorized",
    "rfq/limits/absent-responses-rejected-earlier",
)
def test_a_maker_credential_with_a_wrong_secret_is_401_without_rate_limit_headers(
    target: Target, http: Client, maker_credential: str
) -> None:
    # The key's public part names a real credential; its secret does not match. Still a bad
    # key, refused before any per-key limiter could count it.
    wrong = maker_credential[:-1] + ("B" if maker_credential.endswith("A") else "A")
    client = _client(target, http)
    for headers in ({"Authorization": f"Bearer {wrong}"}, {"X-API-Key": wrong}):
        refused = client.get(STREAM, headers=headers)
        assert_error(refused, 401, "unauthorized")
        assert_no_rate_limit_headers(refused)


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec("rfq/endpoints/message-protocol-wss-v2")
def test_welcome_describes_the_makers_chains_and_pairs(
    target: Target, sim: SimControl, chain: VenueChain
) -> None:
    key, wallet = new_maker_key(sim, "test")
    with MakerProbe(stream_url(target.base_url), key) as maker:
        welcome = maker.welcome
    assert welcome is not None
    assert set(welcome) == WELCOME_FIELDS, sorted(welcome)
    assert welcome["type"] == "welcome"
    assert key.startswith(welcome["makerId"] + "."), "makerId is the key's public prefix"
    assert welcome["wallet"] == to_checksum_address(wallet), welcome
    assert welcome["environment"] == "test", welcome
    assert abs(welcome["serverTimeMs"] - sim.now_ms()) < 10_000, welcome
    assert welcome["levelsMinIntervalMs"] == 400, welcome
    assert welcome["levelsMaxAgeMs"] == 10_000, welcome
    assert welcome["pingIntervalMs"] == 15_000, welcome
    # A test credential reaches the test chains only; every RFQ pair in both directions.
    assert [c["chainId"] for c in welcome["chains"]] == [chain.chain_id], welcome["chains"]
    served = welcome["chains"][0]
    assert served["reactor"] == chain.reactor, served
    assert served["feeRecipient"] == chain.fee_recipient, served
    pairs = {(p["sellToken"], p["buyToken"]): p for p in served["pairs"]}
    assert set(pairs) == chain.rfq_directions(), sorted(pairs)
    for (sell, buy), pair in pairs.items():
        assert set(pair) == PAIR_FIELDS, sorted(pair)
        assert pair["sellDecimals"] == chain.token_at(sell).decimals, pair
        assert pair["buyDecimals"] == chain.token_at(buy).decimals, pair
        assert (pair["feeBps"], pair["replyBudgetMs"], pair["quoteTtlMs"]) == (5, 750, 60_000)


@pytest.mark.sim_only(because="decision")
@pytest.mark.spec(
    "rfq/endpoints/message-protocol-wss-v2",
    "rfq/overview/timing-defaults/reply-budget",
    "rfq/overview/timing-defaults/quote-ttl",
)
@pytest.mark.parametrize("exact", ["input", "output"])
def test_a_firm_request_reaches_the_maker_as_an_rfq_message(
    target: Target, sim: SimControl, trader: Client, chain: VenueChain, exact: str
) -> None:
    key, wallet = new_maker_key(sim, "test")
    usdt, ngns = chain.token("USDT"), chain.token("NGNS")
    taker = Account.create().address
    amounts: dict[str, Any] = (
        {"sell_amount": usdt.units(1)} if exact == "input" else {"buy_amount": ngns.units(2)}
    )
    # Restricted to the probe, which declines: nothing is held, the answer is a no-quote.
    body = rfq_body(
        chain, "USDT", "NGNS", taker=taker, restrictedLiquidityWallets=[wallet], **amounts
    )
    with MakerProbe(stream_url(target.base_url), key, reply="decline") as maker:
        if exact == "input":
            # Exact input checks the taker's funds before makers are asked: a key with
            # rfq:aggregator skips that check, so no funding is needed.
            aggregator = sim.create_key(
                f"conformance-stream-{secrets.token_hex(6)}",
                "test",
                ["trades:write", "trades:read", "rfq:aggregator"],
            )
            caller = trader.with_headers({"Authorization": f"Bearer {aggregator['key']}"})
        else:
            caller = trader
        data = expect_no_quote(request_quote(caller, body), "no_restricted_liquidity")
        seen = maker.rfqs_for(data["rfqId"])
    assert len(seen) == 1, f"the maker got {len(seen)} requests for {data['rfqId']}"
    message = dict(seen[0].message)
    assert set(message) == RFQ_FIELDS, sorted(message)
    assert message["quoteId"].startswith("mq_"), message
    assert message["chainId"] == chain.chain_id, message
    assert (message["sellToken"], message["buyToken"]) == (usdt.address, ngns.address), message
    assert message["taker"] == to_checksum_address(taker), message
    assert message["reactor"] == chain.reactor, message
    assert message["feeBps"] == 5, message
    if exact == "input":
        # The maker receives the size net of the fee (an atomic unit or so under the cap)
        # and is told the fee on it exactly.
        assert message["kind"] == "exact_input", message
        receives, fee = int(message["makerReceives"]), int(message["feeAmount"])
        assert usdt.units(1) - 2 <= receives + fee <= usdt.units(1), message
        assert fee == receives * 5 // 10_000, message
        assert message["makerGives"] is None, message
    else:
        assert message["kind"] == "exact_output", message
        assert message["makerGives"] == str(ngns.units(2)), message
        assert message["makerReceives"] is None, message
    record = get_record(caller, data["rfqId"])
    created_ms = parse_iso_utc(record["createdAt"]).timestamp() * 1000
    reply_by_ms = parse_iso_utc(record["replyBy"]).timestamp() * 1000
    # Makers must answer within the taker's reply budget: at its end at the latest (the
    # service keeps a few milliseconds back to choose and answer).
    assert reply_by_ms - 50 <= message["replyByMs"] <= reply_by_ms, (message, record)
    # A cutoff leaves the taker at least 5 s after replyBy and stays within the quote TTL.
    assert abs(message["minExpiresAtMs"] - (reply_by_ms + 5_000)) <= 1, (message, record)
    assert message["maxExpiresAtMs"] <= created_ms + 60_000 + 1, (message, record)
