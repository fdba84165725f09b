"""The v2 request schemas and their OpenAPI document agree with what the service accepts:
integral JSON numbers are integers, mixed-case addresses must carry a valid EIP-55 checksum, the
request body's cross-field rules and the webhook URL shape are declared in the document, the
templated GET /v2/rfq/{rfq_id} route does not swallow its concrete siblings, and a keyless firm
request is allowed by the document's security."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from eth_utils.address import to_checksum_address
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from pydantic import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from simulator.api.http.appkeys import ROUTES
from simulator.api.http.openapi import build_openapi
from simulator.api.rfq.schemas import PreviewBody, RfqRequestBody
from simulator.api.webhooks.schemas import MAX_URL_LENGTH, WEBHOOK_URL_PATTERN, WebhookCreate
from simulator.errors import InvalidRequest
from simulator.runtime.app import create_app
from simulator.services.rfq.trades import validate_trade
from simulator.services.shared.venue import (
    ChainVenue,
    VenueContracts,
    VenueCorridor,
    VenueDirectory,
    VenueToken,
)
from simulator.services.webhooks.registry import check_endpoint_url
from simulator.settings import CorridorTiming, load_settings

Client = TestClient[web.Request, web.Application]

CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"  # EIP-55's own test vector
BAD_CHECKSUM = "0x52908400098527886E0F7030069857D2E4169Ee7"  # one letter's case flipped
SELL = "0x" + "a1" * 20
BUY = "0x" + "b2" * 20
TAKER = "0x" + "c3" * 20


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "chainId": 97,
        "sellToken": SELL,
        "buyToken": BUY,
        "sellAmount": "1000000",
        "taker": TAKER,
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not ...}


def _parse(model: type[PreviewBody], body: dict[str, Any]) -> PreviewBody:
    # As the handlers parse: from the raw JSON bytes.
    return model.model_validate_json(json.dumps(body))


def _issue_messages(exc: ValidationError) -> list[str]:
    return [str(e["msg"]) for e in exc.errors()]


# -- integral numbers ----------------------------------------------------------------------


def test_integral_json_numbers_are_accepted_for_integer_fields() -> None:
    proof = {"nonce": "0x" + "00" * 32, "issuedAt": 1_795_500_000_000.0, "signature": "0x"}
    body = _parse(RfqRequestBody, _body(chainId=97.0, takerProof=proof))
    assert isinstance(body, RfqRequestBody)
    assert body.chain_id == 97
    assert type(body.chain_id) is int
    assert body.taker_proof is not None
    assert body.taker_proof.issued_at == 1_795_500_000_000
    assert type(body.taker_proof.issued_at) is int


@pytest.mark.parametrize("value", [97.5, True, "97", 2.0**60, -1.0])
def test_non_integers_and_out_of_range_numbers_are_refused(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        _parse(PreviewBody, _body(chainId=value, taker=...))
    assert [e["loc"] for e in caught.value.errors()] == [("chainId",)]


# -- EIP-55 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given_address",
    [CHECKSUMMED.lower(), "0x" + CHECKSUMMED[2:].upper(), CHECKSUMMED],
    ids=["lowercase", "uppercase", "checksummed"],
)
def test_addresses_without_checksum_or_with_a_valid_one_are_normalized(given_address: str) -> None:
    body = _parse(
        RfqRequestBody,
        _body(sellToken=given_address, preferredLiquidityWallets=[given_address]),
    )
    assert body.sell_token == CHECKSUMMED
    assert body.preferred_liquidity_wallets == [CHECKSUMMED]


@pytest.mark.parametrize("field", ["sellToken", "buyToken", "taker"])
def test_mixed_case_address_with_a_bad_checksum_is_refused(field: str) -> None:
    assert to_checksum_address(BAD_CHECKSUM) != BAD_CHECKSUM
    with pytest.raises(ValidationError) as caught:
        _parse(RfqRequestBody, _body(**{field: BAD_CHECKSUM}))
    assert [e["loc"] for e in caught.value.errors()] == [(field,)]
    assert any("EIP-55" in m for m in _issue_messages(caught.value))


@pytest.mark.parametrize("form", ["list", "string"])
def test_steering_wallet_with_a_bad_checksum_is_refused(form: str) -> None:
    wallets: Any = [CHECKSUMMED, BAD_CHECKSUM]
    if form == "string":
        wallets = ",".join(wallets)
    with pytest.raises(ValidationError) as caught:
        _parse(RfqRequestBody, _body(restrictedLiquidityWallets=wallets))
    assert any("EIP-55" in m for m in _issue_messages(caught.value))


# -- the document's request body rules -----------------------------------------------------


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    return build_openapi(app[ROUTES].for_document("v2"), "v2", "test")


def _validator(document: dict[str, Any], component: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resource(
        "urn:doc", Resource.from_contents(document, default_specification=DRAFT202012)
    )
    return Draft202012Validator(
        {"$ref": f"urn:doc#/components/schemas/{component}"}, registry=registry
    )


W1 = "0x" + "d4" * 20
W2 = "0x" + "e5" * 20

# (body changes, valid for the service's cross-field rules)
BODY_CASES = [
    ({}, True),
    ({"sellAmount": ..., "buyAmount": "5000000"}, True),
    ({"sellAmount": None, "buyAmount": "5000000"}, True),
    ({"buyAmount": None}, True),
    ({"sellAmount": ...}, False),  # neither
    ({"sellAmount": None}, False),  # neither (null is absent)
    ({"buyAmount": "5000000"}, False),  # both
    ({"preferredLiquidityWallets": [W1]}, True),
    ({"restrictedLiquidityWallets": W1}, True),
    ({"preferredLiquidityWallets": [W1], "restrictedLiquidityWallets": []}, True),
    ({"preferredLiquidityWallets": None, "restrictedLiquidityWallets": [W2]}, True),
    ({"preferredLiquidityWallets": [W1], "restrictedLiquidityWallets": [W2]}, False),
    ({"preferredLiquidityWallets": W1, "restrictedLiquidityWallets": f"{W2}, {W1}"}, False),
    ({"preferredLiquidityWallets": [W1], "restrictedLiquidityWallets": W2}, False),
]


def _venue() -> VenueDirectory:
    def token(symbol: str, address: str) -> VenueToken:
        return VenueToken(symbol, symbol, to_checksum_address(address), 18, False)

    sell, buy = token("SELL", SELL), token("BUY", BUY)
    contracts = VenueContracts(*(to_checksum_address("0x" + f"{i:040x}") for i in range(1, 6)))
    chain = ChainVenue(
        chain_id=97,
        environment="test",
        name="test",
        rpc_url="http://127.0.0.1:1",
        managed=False,
        min_size=Decimal("0"),
        contracts=contracts,
        tokens=(sell, buy),
        corridors=(VenueCorridor(sell, buy, CorridorTiming()),),
    )
    return VenueDirectory(chains={97: chain})


def _service_refusal(body: PreviewBody) -> str | None:
    """The service's own verdict (`validate_trade` in services/rfq/trades.py, as preview and
    request call it) on a body that parsed: the refusal's details.reason, None when accepted."""
    try:
        validate_trade(_venue(), body.trade())
    except InvalidRequest as exc:
        return str((exc.details or {}).get("reason"))
    return None


@pytest.mark.parametrize(("changes", "valid"), BODY_CASES)
@pytest.mark.parametrize("model", [PreviewBody, RfqRequestBody])
def test_document_declares_the_request_body_cross_field_rules(
    document: dict[str, Any], changes: dict[str, Any], valid: bool, model: type[PreviewBody]
) -> None:
    body = _body(**changes)
    if model is PreviewBody:
        body.pop("taker")
    parsed = _parse(model, body)  # the field types themselves are fine in every case
    refusal = _service_refusal(parsed)
    assert refusal in (None, "exactly_one_amount", "steering_conflict"), refusal
    assert (refusal is None) is valid, refusal
    errors = list(_validator(document, model.__name__).iter_errors(body))
    assert (not errors) is valid, [e.message for e in errors]


# -- webhook URLs --------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.from_regex(WEBHOOK_URL_PATTERN, fullmatch=True),
        st.from_regex(
            WEBHOOK_URL_PATTERN.replace("[A-Za-z][A-Za-z0-9+.-]*", "https", 1), fullmatch=True
        ),
    ).filter(lambda u: len(u) <= MAX_URL_LENGTH)
)
def test_every_url_the_document_allows_is_accepted_by_the_registry(url: str) -> None:
    WebhookCreate(url=url, event_types=["rfq.filled"])
    scheme = url.split(":")[0].lower()
    if scheme == "https":
        check_endpoint_url(url, allow_http=False)
        return
    # The only refusal left for a well-formed URL is the scheme (decisions W7).
    with pytest.raises(InvalidRequest) as refused:
        check_endpoint_url(url, allow_http=False)
    assert refused.value.details == {"reason": "https_required", "scheme": scheme}


@pytest.mark.parametrize(
    "url",
    [
        "example.com/hook",
        "https:///hook",
        "https://host name/",
        "https://host/a b",
        "https://host:65536/",
        "https://host:99999/",
        "https://user@host/",
        "https://host/\u00e9",
        "https://host/\x7f",
        "https://" + "a" * MAX_URL_LENGTH,
    ],
)
def test_malformed_urls_are_refused_by_the_schema(url: str) -> None:
    with pytest.raises(ValidationError) as caught:
        WebhookCreate(url=url, event_types=["rfq.filled"])
    assert [e["loc"] for e in caught.value.errors()] == [("url",)]


def test_webhook_url_pattern_is_declared_and_enforced(document: dict[str, Any]) -> None:
    url_schema = document["components"]["schemas"]["WebhookCreate"]["properties"]["url"]
    assert url_schema["pattern"] == WEBHOOK_URL_PATTERN
    assert re.fullmatch(WEBHOOK_URL_PATTERN, "https://127.0.0.1:8443/hooks/rfq?x=1")
    for port in (0, 1, 443, 8080, 65535):
        WebhookCreate(url=f"https://h:{port}/", event_types=["rfq.filled"])


# -- routes and security -------------------------------------------------------------------


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    app = create_app(load_settings(overrides={"seed": 3}), start_chains=False)
    async with TestClient(TestServer(app, host="127.0.0.1")) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("OPTIONS", "/v2/rfq/preview", "POST"),
        ("GET", "/v2/rfq/preview", "POST"),
        ("GET", "/v2/rfq/request", "POST"),
        ("DELETE", "/v2/rfq/request", "POST"),
        ("POST", "/v2/rfq/levels", "GET"),
        ("DELETE", "/v2/rfq/rfq_abc", "GET"),
    ],
)
async def test_concrete_rfq_paths_allow_only_their_own_methods(
    client: Client, method: str, path: str, allowed: str
) -> None:
    resp = await client.request(method, path)
    assert resp.status == 405
    assert resp.headers["Allow"] == allowed
    body = await resp.json()
    assert body["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("rfq_id", ["rfq_abc", "previewx", "xrequest", "levels2"])
async def test_any_other_segment_is_an_rfq_id(client: Client, rfq_id: str) -> None:
    resp = await client.get(f"/v2/rfq/{rfq_id}")
    assert resp.status == 404
    assert (await resp.json())["error"]["code"] == "not_found"


def test_document_keeps_the_plain_template_and_has_no_look_arounds(
    document: dict[str, Any],
) -> None:
    assert "/v2/rfq/{rfq_id}" in document["paths"]
    assert not any("(?" in path for path in document["paths"])
    patterns = re.findall(r'"pattern": "([^"]*)"', json.dumps(document))
    assert patterns
    assert not [p for p in patterns if "(?" in p], "no look-arounds in schema patterns"


def test_firm_request_may_be_called_without_a_key(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v2/rfq/request"]["post"]
    assert operation["security"] == [{"bearerKey": []}, {"apiKeyHeader": []}, {}]
    assert "" not in document["components"]["securitySchemes"]
    get = document["paths"]["/v2/rfq/{rfq_id}"]["get"]
    assert {} not in get["security"], "status needs a key or the claim token"
