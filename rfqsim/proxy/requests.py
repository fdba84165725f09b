"""The client's side of an exchange: what the request itself breaks, whatever the service
answered (``side: "client"``, the integrator's own bug even where a deployment accepted it).
Amounts as JSON numbers, a takerProof's ``issuedAt`` in seconds, a missing proof field, both
sizes or both steering lists, a malformed transaction hash, key or intent key, a webhook URL that
is not https, an RFQ read with neither key nor claim token.

The spec forbids no unknown field in any body, so none is reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from conformance.calls.feed import number
from conformance.checks.assertions import atomic
from conformance.checks.resource_checks import RFQ_EVENTS, V1_EVENTS
from conformance.wire.wording import shown
from rfqsim.proxy import spec
from rfqsim.proxy.expect import expect_true
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.spec import SpecOperation

ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
BYTES32 = re.compile(r"^0x[0-9a-fA-F]{64}$")
HEX = re.compile(r"^0x(?:[0-9a-fA-F]{2})+$")
API_KEY = re.compile(r"^tx_(?:live|test)_[^.\s]+\.\S+$")
INTENT_KEY = re.compile(r"^[A-Za-z0-9_-]{12,64}$")
ACCOUNT_NUMBER = re.compile(r"^[0-9]{6,12}$")
FORMS = {  # each format in the words of a finding's "expected"
    ADDRESS: "a 0x-prefixed address of 40 hex digits",
    BYTES32: "0x and 64 hex digits",
    HEX: "0x-prefixed hex of whole bytes",
    API_KEY: "an API key, tx_live_ or tx_test_ then its id, a dot and its secret",
    INTENT_KEY: "12-64 letters, digits, _ or -",
    ACCOUNT_NUMBER: "6-12 digits",
}
MAX_STEERING = 10
# issuedAt is Unix milliseconds: any time after September 2001 is above 10^12, and a value in
# seconds stays below it until the year 33658.
MS_FLOOR = 10**12
WEBHOOK_EVENTS = frozenset({*RFQ_EVENTS, *V1_EVENTS})

BODY_JSON = "rfq/endpoints/all-bodies-json"
AMOUNTS = "rfq/overview/conventions/amounts-base-10-strings-atomic"
CHAIN_ID = "rfq/endpoints/request-body/chainid"
TOKENS = "rfq/endpoints/request-body/selltoken-buytoken"
ONE_SIZE = "rfq/endpoints/request-body/sending-both-neither-sellamount"
TAKER = "rfq/endpoints/request-body/taker"
PROOF = {
    "nonce": "rfq/resources/takerproof/nonce",
    "issuedAt": "rfq/resources/takerproof/issuedat",
    "signature": "rfq/resources/takerproof/signature",
}
PROOF_FIELDS = "rfq/auth/proof-of-control/sent-takerproof-nonce-issuedat"
STEERING_BOTH = "rfq/endpoints/request-body/rules"
STEERING_MAX = "rfq/limits/steering-lists"
SUBMIT_BODY = "rfq/endpoints/cancel-submit-status/submit-body"
NO_CREDENTIAL = "rfq/auth/claim-token/rfqid-never-sufficient"
KEY_FORMAT = "rfq/auth/api-keys/format-env-_live_-public_prefix"
KEY_HEADER = "rfq/auth/api-keys/sent-authorization-bearer-api_key"
WEBHOOK_HTTPS = "rfq/events/endpoint-urls-must-https"
WEBHOOK_TYPES = "rfq/endpoints/post-v1-webhooks"
RAMP_WALLET_POST = "ramp/endpoints/every-wallet-naming-post-carries"
RAMP_PROOF = "ramp/resources/proof-object/nonce-issuedat-signature-takercontrol"
RAMP_INTENT_KEY = "ramp/limits/intentkey"
RAMP_AMOUNT = "ramp/endpoints/post-v2-ramp-transfers/amount"
RAMP_SIDE = "ramp/endpoints/post-v2-ramp-transfers/side"
RAMP_ACCOUNT = "ramp/limits/accountnumber"
V1_SWAP = {
    "chainId": "v1/resources/create-swap-request/chainid",
    "sellToken": "v1/resources/create-swap-request/selltoken",
    "buyToken": "v1/resources/create-swap-request/buytoken",
    "sellAmount": "v1/resources/create-swap-request/sellamount",
    "minRate": "v1/resources/create-swap-request/minrate",
    "taker": "v1/resources/create-swap-request/taker",
}
V1_SUBMIT = "v1/endpoints/post-v1-swaps-id-submit"
V1_PREPARE = "v1/endpoints/post-v1-limit-orders-prepare/body"
V1_PLACE = "v1/endpoints/post-v1-limit-orders/body"
V1_LIST_LIMIT = "v1/limits/list-limits"
V1_QUOTE = "v1/endpoints/get-v1-quote"
# A client finding under one of these is a schema failure of the body (a field missing, of the
# wrong type or format): the service's 400 names it in details.issues, and never accepts it.
SCHEMA_RULES = frozenset({AMOUNTS, CHAIN_ID, TAKER, SUBMIT_BODY, *PROOF.values(), PROOF_FIELDS})
# Ramp POSTs that name a wallet (spec 2 "Endpoints": provider, wallet, chainId, proof).
RAMP_WALLET_POSTS = frozenset(
    {
        spec.RAMP_CUSTOMER,
        spec.RAMP_CUSTOMER_DETAILS,
        spec.RAMP_KYC,
        spec.RAMP_KYC_STATUS,
        spec.RAMP_KYC_LINK,
        spec.RAMP_TRANSFER_CREATE,
    }
)
RFQ_OWNED = frozenset({spec.RFQ_GET, spec.RFQ_CANCEL, spec.RFQ_SUBMIT})


def _matches(pattern: re.Pattern[str], value: Any, what: str) -> None:
    assert isinstance(value, str), f"{what}: expected a string, got {shown(value)}"
    assert pattern.match(value), f"{what}: expected {FORMS[pattern]}, got {shown(value)}"


def _integer(value: Any, what: str) -> None:
    assert isinstance(value, int), f"{what}: expected an integer, got {shown(value)}"
    assert not isinstance(value, bool), f"{what}: expected an integer, got {shown(value)}"


def _address(value: Any, what: str) -> None:
    _matches(ADDRESS, value, what)


def _proof(inspection: Inspection, proof: Any, rules: Mapping[str, str], present: str) -> None:
    """A proof object {nonce, issuedAt, signature}: all three, each in its format, issuedAt in
    Unix milliseconds."""
    check = inspection.check
    if not check(present, lambda: _members(proof, ("nonce", "issuedAt", "signature")), "client"):
        return
    check(rules["nonce"], lambda: _matches(BYTES32, proof["nonce"], "nonce"), "client")
    check(rules["signature"], lambda: _matches(HEX, proof["signature"], "signature"), "client")
    check(rules["issuedAt"], lambda: _milliseconds(proof["issuedAt"]), "client")


def _members(value: Any, names: tuple[str, ...]) -> None:
    assert isinstance(value, Mapping), f"expected a JSON object, got {shown(value)}"
    missing = [name for name in names if name not in value]
    assert not missing, f"missing: {', '.join(missing)}"


def _milliseconds(value: Any) -> None:
    _integer(value, "issuedAt")
    assert value >= MS_FLOOR, f"issuedAt: expected Unix milliseconds, got {value} (seconds)"


def _steering(value: Any, what: str) -> None:
    wallets = value.split(",") if isinstance(value, str) else value
    assert isinstance(wallets, list), f"{what}: expected an array of addresses, got {shown(value)}"
    assert len(wallets) <= MAX_STEERING, f"{what}: {len(wallets)} wallets, at most {MAX_STEERING}"


def _rfq_body(inspection: Inspection, body: Mapping[str, Any], firm: bool) -> None:
    check = inspection.check
    check(CHAIN_ID, lambda: _integer(body.get("chainId"), "chainId"), "client")
    check(TOKENS, lambda: _tokens(body.get("sellToken"), body.get("buyToken")), "client")
    sizes = [name for name in ("sellAmount", "buyAmount") if name in body]
    check(ONE_SIZE, lambda: _one(sizes), "client")
    for name in sizes:
        check(AMOUNTS, partial(atomic, body[name], name), "client")
    if firm:
        check(TAKER, lambda: _address(body.get("taker"), "taker"), "client")
        if "takerProof" in body:
            _proof(inspection, body["takerProof"], PROOF, PROOF_FIELDS)
    steering = [n for n in ("preferredLiquidityWallets", "restrictedLiquidityWallets") if n in body]
    check(
        STEERING_BOTH, lambda: expect_true(len(steering) < 2, "not both steering lists"), "client"
    )
    for name in steering:
        check(STEERING_MAX, partial(_steering, body[name], name), "client")


def _tokens(sell: Any, buy: Any) -> None:
    _address(sell, "sellToken")
    _address(buy, "buyToken")
    assert str(sell).lower() != str(buy).lower(), "sellToken and buyToken are the same"


def _one(sizes: list[str]) -> None:
    assert len(sizes) == 1, f"exactly one of sellAmount / buyAmount, got {sizes or 'neither'}"


def _key(inspection: Inspection) -> None:
    ex = inspection.exchange
    bearer = ex.request_headers.get("Authorization")
    if bearer is not None:
        inspection.check(
            KEY_HEADER,
            lambda: expect_true(
                bearer.lower().startswith("bearer "), "Authorization: Bearer <API_KEY>"
            ),
            "client",
        )
    key = ex.api_key
    if key is not None and ex.surface in ("rfq", "v1"):
        inspection.check(KEY_FORMAT, lambda: _matches(API_KEY, key, "API key"), "client")


def _ramp(inspection: Inspection, operation: SpecOperation, body: Mapping[str, Any]) -> None:
    check = inspection.check
    if operation in RAMP_WALLET_POSTS:
        wallet_post = ("provider", "wallet", "chainId", "proof")
        if check(RAMP_WALLET_POST, lambda: _members(body, wallet_post), "client"):
            check(RAMP_WALLET_POST, lambda: _address(body["wallet"], "wallet"), "client")
            rules = dict.fromkeys(("nonce", "issuedAt", "signature"), RAMP_PROOF)
            _proof(inspection, body["proof"], rules, RAMP_PROOF)
    if operation == spec.RAMP_TRANSFER_CREATE:
        check(
            RAMP_INTENT_KEY,
            lambda: _matches(INTENT_KEY, body.get("intentKey"), "intentKey"),
            "client",
        )
        check(RAMP_AMOUNT, lambda: _positive_decimal(body.get("amount")), "client")
        check(
            RAMP_SIDE,
            lambda: expect_true(body.get("side") in ("buy", "sell"), "side buy/sell"),
            "client",
        )
    if operation == spec.RAMP_BANK_RESOLVE:
        check(
            RAMP_ACCOUNT,
            lambda: _matches(ACCOUNT_NUMBER, body.get("accountNumber"), "accountNumber"),
            "client",
        )


def _positive_decimal(value: Any) -> None:
    assert number(value, "amount") > 0, (
        f"amount: expected a positive atomic amount, got {shown(value)}"
    )


def _v1_swap(inspection: Inspection, body: Mapping[str, Any]) -> None:
    check = inspection.check
    check(V1_SWAP["chainId"], lambda: _integer(body.get("chainId"), "chainId"), "client")
    for name in ("sellToken", "buyToken", "taker"):
        check(V1_SWAP[name], partial(_address, body.get(name), name), "client")
    check(V1_SWAP["sellAmount"], lambda: atomic(body.get("sellAmount"), "sellAmount"), "client")
    if body.get("minRate") is not None:
        check(V1_SWAP["minRate"], lambda: atomic(body["minRate"], "minRate"), "client")


def _v1_submit(inspection: Inspection, body: Mapping[str, Any]) -> None:
    inspection.check(V1_SUBMIT, lambda: _matches(BYTES32, body.get("txHash"), "txHash"), "client")


def _v1_prepare(inspection: Inspection, body: Mapping[str, Any]) -> None:
    check = inspection.check
    check(V1_PREPARE, lambda: atomic(body.get("sellAmount"), "sellAmount"), "client")
    if body.get("buyAmount") is not None:
        check(V1_PREPARE, lambda: atomic(body["buyAmount"], "buyAmount"), "client")
    check(V1_PREPARE, lambda: _unix_seconds(body.get("deadline")), "client")


def _v1_place(inspection: Inspection, body: Mapping[str, Any]) -> None:
    for name in ("inputAmount", "outputAmount"):
        inspection.check(V1_PLACE, partial(atomic, body.get(name), name), "client")
    inspection.check(V1_PLACE, lambda: _matches(HEX, body.get("signature"), "signature"), "client")


# The v1 request bodies checked, by operation.
V1_BODIES: dict[SpecOperation, Callable[[Inspection, Mapping[str, Any]], None]] = {
    spec.V1_SWAP_CREATE: _v1_swap,
    spec.V1_SWAP_SUBMIT: _v1_submit,
    spec.V1_LIMIT_PREPARE: _v1_prepare,
    spec.V1_LIMIT_PLACE: _v1_place,
}
V1_LISTS = frozenset({spec.V1_SWAP_LIST, spec.V1_LIMIT_LIST})  # a `limit` query


def _v1(inspection: Inspection, operation: SpecOperation, body: Any) -> None:
    ex = inspection.exchange
    checked = V1_BODIES.get(operation)
    if checked is not None and isinstance(body, Mapping):
        checked(inspection, body)
    if operation == spec.V1_QUOTE and "sellAmount" in ex.query:
        inspection.check(V1_QUOTE, lambda: atomic(ex.query["sellAmount"], "sellAmount"), "client")
    if operation in V1_LISTS and "limit" in ex.query:
        inspection.check(V1_LIST_LIMIT, lambda: _list_limit(ex.query["limit"]), "client")


def _unix_seconds(value: Any) -> None:
    """A deadline in Unix seconds: an integer, or its decimal string (as prepare answers it)."""
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    assert isinstance(text, str), f"deadline: expected Unix seconds, got {shown(value)}"
    assert text.isdigit(), f"deadline: expected Unix seconds, got {shown(value)}"
    assert int(text) < MS_FLOOR, (
        f"deadline: expected Unix seconds, got {shown(value)} (milliseconds)"
    )


def _list_limit(value: str) -> None:
    assert value.isdigit(), f"limit: expected a whole number, got {shown(value)}"
    assert 1 <= int(value) <= 200, f"limit {value}: 1 to 200"


def check(inspection: Inspection, operation: SpecOperation | None) -> None:
    """The client's side of one exchange on a spec surface."""
    ex = inspection.exchange
    _key(inspection)
    if operation is None or not ex.request_complete:
        return
    body, parsed = ex.request_json
    if operation in RFQ_OWNED and not ex.keyed and "X-Rfq-Claim" not in ex.request_headers:
        inspection.fail(
            NO_CREDENTIAL,
            "neither an API key nor an X-Rfq-Claim token: the rfqId alone never authorizes",
            "client",
        )
    if operation.surface == "v1":
        _v1(inspection, operation, body)
        return
    if ex.method != "POST" or operation == spec.RFQ_CANCEL:
        return
    media = (ex.request_headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    inspection.check(BODY_JSON, lambda: _json_media(media), "client")
    if not inspection.check(BODY_JSON, lambda: _object(body, parsed), "client"):
        return
    checked = POST_BODIES.get(operation)
    if checked is not None:
        checked(inspection, body)
    elif operation.surface == "ramp":
        _ramp(inspection, operation, body)


def _submit(inspection: Inspection, body: Mapping[str, Any]) -> None:
    inspection.check(SUBMIT_BODY, lambda: _matches(BYTES32, body.get("txHash"), "txHash"), "client")


def _webhook(inspection: Inspection, body: Mapping[str, Any]) -> None:
    inspection.check(WEBHOOK_HTTPS, lambda: _https(body.get("url")), "client")
    inspection.check(WEBHOOK_TYPES, lambda: _event_types(body.get("eventTypes")), "client")


# The RFQ API's and the webhook registry's POST bodies checked, by operation.
POST_BODIES: dict[SpecOperation, Callable[[Inspection, Mapping[str, Any]], None]] = {
    spec.RFQ_REQUEST: lambda inspection, body: _rfq_body(inspection, body, firm=True),
    spec.RFQ_PREVIEW: lambda inspection, body: _rfq_body(inspection, body, firm=False),
    spec.RFQ_SUBMIT: _submit,
    spec.WEBHOOK_CREATE: _webhook,
}


def _json_media(media: str) -> None:
    assert media == "application/json", (
        f"Content-Type: expected application/json, got {media or 'none'}"
    )


def _object(body: Any, parsed: bool) -> None:
    assert parsed, "the body is not JSON"
    assert isinstance(body, Mapping), f"body: expected a JSON object, got {shown(body)}"


def _https(url: Any) -> None:
    assert isinstance(url, str), f"url: expected an https URL, got {shown(url)}"
    assert url.startswith("https://"), f"url: expected an https URL, got {shown(url)}"


def _event_types(types: Any) -> None:
    assert isinstance(types, list), (
        f"eventTypes: expected an array of event types, got {shown(types)}"
    )
    assert types, "eventTypes is empty"
    unknown = [t for t in types if t not in WEBHOOK_EVENTS]
    assert not unknown, f"unknown event types {unknown}"
