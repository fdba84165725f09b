"""The ramp's discovery and customer operations over real loopback HTTP, on the app without chains
with the fake provider behind the `RampProvider` port: /v2/ramp/providers, /banks,
/banks/resolve, /customers, /customers/details, /customers/kyc, /customers/kyc/status and
/customers/kyc/link. Bodies unwrapped (docs/ramp.md RA1), the error envelope and its request id,
fields named on schema failures, proofs (RA37), the order of checks (RA5), provider failures
(RA26, RA31, RA38), the sandbox flag in production (RA3) and the OpenAPI listing."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from aiohttp import ClientResponse
from eth_account import Account

from simulator.api.http.appkeys import CLOCK
from simulator.clock import Clock
from simulator.services.ramp.customers import FEWER_FIELDS_REASON
from simulator.services.ramp.ports import (
    KycReview,
    PersonDetails,
    ProviderCustomer,
    ProviderRefused,
)
from tests.unit.services.fake_provider import BANKS, MAX_BUY, REVIEW_DELAY_S, FakeProvider
from tests.unit.services.ramp_harness import (
    Client,
    attach_fake,
    client_app,
    proof_json,
    serve_ramp,
    sign_proof,
)

IMAGE = "aGVsbG8="  # "hello"
IMAGE_MAX_BYTES = 4 * 1024 * 1024  # RA11: decoded size of each image
PERSON = {
    "firstName": "Ada",
    "lastName": "Obi",
    "email": "ada@example.com",
    "phone": "+2348012345678",
}
UPDATE_REFUSAL = "We cannot accept this change of name"


@dataclass
class EdgeProvider(FakeProvider):
    """The fake provider, also refusing any profile update to the last name `Refused` (with its
    own sentence) and keeping what each KYC submission forwarded."""

    submissions: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    async def update_customer(self, customer_id: str, details: PersonDetails) -> ProviderCustomer:
        if details.last_name == "Refused":
            self.calls["update_customer"] += 1
            raise ProviderRefused(UPDATE_REFUSAL)
        return await super().update_customer(customer_id, details)

    async def submit_kyc(
        self, customer_id: str, *, document: dict[str, Any], selfie_image: str
    ) -> KycReview:
        self.submissions.append((document, selfie_image))
        return await super().submit_kyc(customer_id, document=document, selfie_image=selfie_image)


class Edge:
    """One app over HTTP with the fake provider attached, and a wallet that signs its proofs."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.clock: Clock = client_app(client)[CLOCK]
        self.fake = EdgeProvider(self.clock)
        attach_fake(client, self.fake)
        self.account = Account.create()
        self.wallet: str = self.account.address

    def proof(self, **changes: Any) -> dict[str, Any]:
        """A fresh proof by the wallet for chain 97 (`changes`: sign_proof's keywords)."""
        return proof_json(sign_proof(self.clock, self.account, **changes))

    def body(self, **fields: Any) -> dict[str, Any]:
        """A wallet-naming body with a fresh proof; `fields` are added or replace members."""
        return {
            "provider": "ngnramp",
            "wallet": self.wallet,
            "chainId": 97,
            "proof": self.proof(),
            **fields,
        }

    async def post(self, path: str, body: dict[str, Any]) -> ClientResponse:
        # A stream, not bytes: aiohttp warns about (multi-megabyte) raw bodies.
        return await self.client.post(
            f"/v2/ramp/{path}",
            data=io.BytesIO(json.dumps(body).encode()),
            headers={"Content-Type": "application/json"},
        )

    async def register(self, **fields: Any) -> dict[str, Any]:
        """POST /customers with terms accepted and the four fields (or `fields` instead)."""
        person = fields if fields else PERSON
        return await ok(await self.post("customers", self.body(acceptedTerms=True, **person)))

    def kyc_body(self, **fields: Any) -> dict[str, Any]:
        document = {"type": "passport", "number": "A1234567", "imageFront": IMAGE}
        return self.body(**{"document": document, "selfieImage": IMAGE, **fields})


@pytest.fixture
async def edge() -> AsyncIterator[Edge]:
    async with serve_ramp() as client:
        yield Edge(client)


@pytest.fixture
async def production() -> AsyncIterator[Edge]:
    async with serve_ramp({"environment": "production"}) as client:
        yield Edge(client)


async def ok(resp: ClientResponse) -> dict[str, Any]:
    """A 200 with its request id, whose body is the payload itself (RA1: no `data`)."""
    body = await resp.json()
    assert resp.status == 200, body
    assert resp.headers["X-Request-Id"].startswith("req_")
    assert "data" not in body
    return dict(body)


async def error(resp: ClientResponse, status: int, code: str) -> dict[str, Any]:
    """The v2 error envelope with `request_id` equal to the X-Request-Id header."""
    body = await resp.json()
    assert resp.status == status, body
    assert set(body) == {"error"}
    envelope = body["error"]
    assert envelope["code"] == code
    assert isinstance(envelope["message"], str)
    assert envelope["message"]
    assert envelope["request_id"] == resp.headers["X-Request-Id"]
    assert envelope["request_id"].startswith("req_")
    assert set(envelope) <= {"code", "message", "request_id", "details"}
    return dict(envelope)


async def invalid(resp: ClientResponse) -> list[str]:
    """A 400 invalid_request for a schema failure; the fields its issues name."""
    envelope = await error(resp, 400, "invalid_request")
    return [issue["field"] for issue in envelope["details"]["issues"]]


def image_of(size: int) -> str:
    return base64.b64encode(bytes(size)).decode()


# -- GET /v2/ramp/providers ----------------------------------------------------------------


async def test_providers_list_the_live_capabilities_unwrapped(edge: Edge) -> None:
    body = await ok(await edge.client.get("/v2/ramp/providers"))
    assert body == {
        "providers": [
            {
                "provider": "ngnramp",
                "displayName": "NGN Ramp (fake)",
                "fiat": "NGN",
                "token": "NGNS",
                "chainIds": [56, 97],
                "sandboxChainIds": [97],
                "sides": ["buy", "sell"],
                "requires": {
                    "customerDetails": True,
                    "payoutBankAccount": True,
                    "destinationWallet": True,
                },
            }
        ]
    }
    await ok(await edge.client.get("/v2/ramp/providers"))
    assert edge.fake.calls["capabilities"] == 2  # RA30: read live on every call


@pytest.mark.parametrize(
    ("query", "listed"),
    [
        ({"fiat": "ngn", "token": "ngns"}, True),
        ({"fiat": "USD"}, False),
        ({"token": "USDT"}, False),
        ({"chainId": "56"}, True),
        ({"chainId": "1"}, False),
        ({"side": "sell"}, True),
        ({"sandbox": "true"}, True),
        ({"sandbox": "true", "chainId": "97"}, True),
        ({"sandbox": "true", "chainId": "56"}, False),
    ],
)
async def test_providers_filters(edge: Edge, query: dict[str, str], listed: bool) -> None:
    body = await ok(await edge.client.get("/v2/ramp/providers", params=query))
    assert [p["provider"] for p in body["providers"]] == (["ngnramp"] if listed else [])


async def test_providers_follow_the_switches(edge: Edge) -> None:
    edge.fake.caps = replace(edge.fake.caps, sides=("sell",), chains=(97,))
    body = await ok(await edge.client.get("/v2/ramp/providers"))
    assert (body["providers"][0]["sides"], body["providers"][0]["chainIds"]) == (["sell"], [97])
    assert await ok(await edge.client.get("/v2/ramp/providers", params={"side": "buy"})) == {
        "providers": []
    }
    edge.fake.caps = replace(edge.fake.caps, enabled=False)
    assert await ok(await edge.client.get("/v2/ramp/providers")) == {"providers": []}


@pytest.mark.parametrize(
    ("query", "field_name"),
    [
        ({"colour": "blue"}, "colour"),
        ({"chainId": "abc"}, "chainId"),
        ({"chainId": "1.5"}, "chainId"),
        ({"side": "swap"}, "side"),
        ({"fiat": "N"}, "fiat"),
    ],
)
async def test_providers_query_failures_name_the_member(
    edge: Edge, query: dict[str, str], field_name: str
) -> None:
    resp = await edge.client.get("/v2/ramp/providers", params=query)
    assert await invalid(resp) == [field_name]


async def test_an_unreachable_provider_is_left_out_of_the_list(edge: Edge) -> None:
    edge.fake.down = True
    assert await ok(await edge.client.get("/v2/ramp/providers")) == {"providers": []}  # RA26


# -- GET /v2/ramp/banks and POST /v2/ramp/banks/resolve -----------------------------------


async def test_banks_are_listed_and_cached(edge: Edge) -> None:
    expected = {"banks": [{"code": b.code, "name": b.name} for b in BANKS]}
    for _ in range(2):
        resp = await edge.client.get("/v2/ramp/banks", params={"provider": "ngnramp"})
        assert await ok(resp) == expected
    assert edge.fake.calls["banks"] == 1  # cached (15 minutes)
    assert edge.fake.calls["capabilities"] == 2  # the switches are read on every call (RA31)


@pytest.mark.parametrize(
    ("query", "field_name"),
    [
        ({}, "provider"),
        ({"provider": "NGN RAMP"}, "provider"),
        ({"provider": "ngnramp", "x": "1"}, "x"),
    ],
)
async def test_banks_query_failures_name_the_member(
    edge: Edge, query: dict[str, str], field_name: str
) -> None:
    assert await invalid(await edge.client.get("/v2/ramp/banks", params=query)) == [field_name]


async def test_banks_refusals(edge: Edge) -> None:
    resp = await edge.client.get("/v2/ramp/banks", params={"provider": "otherramp"})
    await error(resp, 404, "not_found")
    edge.fake.caps = replace(edge.fake.caps, sandbox_chains=())
    resp = await edge.client.get("/v2/ramp/banks", params={"provider": "ngnramp", "sandbox": "1"})
    envelope = await error(resp, 403, "forbidden")
    assert envelope["details"]["reason"] == "sandbox_not_available"
    edge.fake.caps = replace(edge.fake.caps, enabled=False)
    resp = await edge.client.get("/v2/ramp/banks", params={"provider": "ngnramp"})
    envelope = await error(resp, 403, "forbidden")
    assert envelope["details"]["reason"] == "provider_disabled"
    edge.fake.caps = replace(edge.fake.caps, enabled=True)
    edge.fake.down = True
    resp = await edge.client.get("/v2/ramp/banks", params={"provider": "ngnramp"})
    envelope = await error(resp, 502, "upstream_error")
    assert envelope["details"]["reason"] == "provider_unreachable"


async def test_resolve_names_the_account_holder(edge: Edge) -> None:
    body = {"provider": "ngnramp", "bankCode": "058", "accountNumber": "0123456789"}
    assert await ok(await edge.post("banks/resolve", body)) == {"accountName": "HOLDER 6789"}


@pytest.mark.parametrize(
    ("changes", "field_name"),
    [
        ({"accountNumber": "12345"}, "accountNumber"),  # 5 digits
        ({"accountNumber": "1234567890123"}, "accountNumber"),  # 13 digits
        ({"accountNumber": "01234x6789"}, "accountNumber"),
        ({"accountNumber": 123456789}, "accountNumber"),  # a number, not a string
        ({"bankCode": "0"}, "bankCode"),
        ({"wallet": "0x" + "ab" * 20}, "wallet"),  # no wallet (nor proof) on resolve
    ],
)
async def test_resolve_schema_failures_name_the_field(
    edge: Edge, changes: dict[str, Any], field_name: str
) -> None:
    body = {"provider": "ngnramp", "bankCode": "058", "accountNumber": "0123456789", **changes}
    assert await invalid(await edge.post("banks/resolve", body)) == [field_name]
    assert edge.fake.calls["resolve_account"] == 0


async def test_resolve_boundaries_of_the_account_number(edge: Edge) -> None:
    for number in ("123456", "123456789012"):
        body = {"provider": "ngnramp", "bankCode": "044", "accountNumber": number}
        assert await ok(await edge.post("banks/resolve", body)) == {
            "accountName": f"HOLDER {number[-4:]}"
        }


async def test_resolve_refusals(edge: Edge) -> None:
    base = {"provider": "ngnramp", "bankCode": "058", "accountNumber": "0123456789"}
    envelope = await error(
        await edge.post("banks/resolve", {**base, "bankCode": "999"}), 400, "invalid_request"
    )
    assert envelope["details"]["issues"][0]["field"] == "bankCode"
    assert edge.fake.calls["resolve_account"] == 0  # not in the (cached) banks list
    resp = await edge.post("banks/resolve", {**base, "accountNumber": "0123450000"})
    envelope = await error(resp, 422, "provider_refused")
    assert envelope["message"] == "We could not verify this bank account"  # the provider's
    await error(
        await edge.post("banks/resolve", {**base, "provider": "otherramp"}), 404, "not_found"
    )
    edge.fake.down = True
    envelope = await error(await edge.post("banks/resolve", base), 502, "upstream_error")
    assert envelope["details"]["reason"] == "provider_unreachable"


# -- POST /v2/ramp/customers and /customers/details ----------------------------------------


async def test_registration_with_the_four_fields_makes_a_provider_profile(edge: Edge) -> None:
    address = {"line1": "1 Marina", "city": "Lagos", "state": "Lagos", "postalCode": "100001"}
    body = await edge.register(**PERSON, birthDate="31-01-1990", address=address)
    customer = body["customer"]
    assert set(body) == {"customer"}
    assert customer["id"].startswith("rcu_")
    assert customer == {"id": customer["id"], "kycStatus": None, "hasProviderCustomer": True}
    [profile] = edge.fake.customers.values()
    assert profile.reference == edge.wallet.lower()
    assert profile.details.birth_date == "31-01-1990"  # forwarded, not stored
    assert profile.details.address is not None
    assert profile.details.address.postal_code == "100001"
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details == {"details": {**PERSON, "registered": True}}


async def test_registration_with_fewer_fields_stores_them_without_a_profile(edge: Edge) -> None:
    body = await edge.register(firstName="Ada", email="ada@example.com")
    assert body["customer"]["hasProviderCustomer"] is False
    assert body["customer"]["rejectionReason"] == FEWER_FIELDS_REASON
    assert edge.fake.calls["create_customer"] == 0
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details == {
        "details": {
            "firstName": "Ada",
            "lastName": None,
            "email": "ada@example.com",
            "phone": None,
            "registered": False,
        }
    }
    # Calling again completes the four fields (RA35): the profile is made on that call.
    body = await edge.register(lastName="Obi", phone="+2348012345678")
    assert body["customer"] == {
        "id": body["customer"]["id"],
        "kycStatus": None,
        "hasProviderCustomer": True,
    }
    assert edge.fake.calls["create_customer"] == 1


async def test_a_refused_person_is_200_with_the_providers_sentence(edge: Edge) -> None:
    body = await edge.register(**{**PERSON, "lastName": "Refused"})
    assert body["customer"]["hasProviderCustomer"] is False
    assert body["customer"]["rejectionReason"] == "We cannot onboard this person"


async def test_a_refused_update_is_422_and_changes_nothing(edge: Edge) -> None:
    await edge.register()
    resp = await edge.post("customers", edge.body(acceptedTerms=True, lastName="Refused"))
    envelope = await error(resp, 422, "provider_refused")
    assert envelope["message"] == UPDATE_REFUSAL
    details = await ok(await edge.post("customers/details", edge.body()))
    assert details["details"]["lastName"] == "Obi"


@pytest.mark.parametrize("terms", [False, None, 1, "true", "missing"])
async def test_terms_not_accepted_is_400_and_asks_nobody(edge: Edge, terms: Any) -> None:
    body = edge.body(**PERSON)
    if terms != "missing":
        body["acceptedTerms"] = terms
    assert await invalid(await edge.post("customers", body)) == ["acceptedTerms"]
    assert edge.fake.calls["create_customer"] == 0
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


@pytest.mark.parametrize(
    ("changes", "field_name"),
    [
        ({"birthDate": "1990-01-31"}, "birthDate"),  # yyyy-mm-dd: the spec's is dd-mm-yyyy
        ({"birthDate": "31/01/1990"}, "birthDate"),
        ({"birthDate": "31-02-1990"}, "birthDate"),  # not a calendar date
        ({"birthDate": "31-01-1899"}, "birthDate"),
        ({"email": "ada.example.com"}, "email"),
        ({"phone": "12345"}, "phone"),
        ({"firstName": "   "}, "firstName"),
        ({"lastName": "x" * 101}, "lastName"),
        (
            {"address": {"line1": "1 Marina", "state": "Lagos", "postalCode": "100001"}},
            "address.city",
        ),
        (
            {
                "address": {
                    "line1": "1 Marina",
                    "city": "Lagos",
                    "state": "Lagos",
                    "postalCode": "100001",
                    "country": "NG",
                }
            },
            "address.country",
        ),
        ({"chainId": "97"}, "chainId"),
        ({"wallet": "0x1234"}, "wallet"),
        ({"nickname": "ada"}, "nickname"),
    ],
)
async def test_customer_schema_failures_name_the_field(
    edge: Edge, changes: dict[str, Any], field_name: str
) -> None:
    body = edge.body(acceptedTerms=True, **{**PERSON, **changes})
    assert await invalid(await edge.post("customers", body)) == [field_name]
    assert edge.fake.calls["create_customer"] == 0


async def test_details_of_an_unregistered_wallet_are_null(edge: Edge) -> None:
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


async def test_an_unreachable_provider_stores_no_first_registration(edge: Edge) -> None:
    edge.fake.down = True
    envelope = await error(
        await edge.post("customers", edge.body(acceptedTerms=True, **PERSON)),
        502,
        "upstream_error",
    )
    assert envelope["details"]["reason"] == "provider_unreachable"
    edge.fake.down = False
    assert await ok(await edge.post("customers/details", edge.body())) == {"details": None}


async def test_customer_calls_ignore_the_switches(edge: Edge) -> None:
    edge.fake.caps = replace(edge.fake.caps, enabled=False, sides=())  # RA32
    assert (await edge.register())["customer"]["hasProviderCustomer"] is True
    await ok(await edge.post("customers/kyc/link", edge.body()))


# -- proofs, unknown providers and the order of checks (every wallet-naming operation) ------

WALLET_OPERATIONS = [
    "customers",
    "customers/details",
    "customers/kyc",
    "customers/kyc/status",
    "customers/kyc/link",
]


def operation_body(edge: Edge, path: str, **fields: Any) -> dict[str, Any]:
    """A valid body for the operation, with a fresh proof; `fields` replace members."""
    if path == "customers":
        return edge.body(acceptedTerms=True, **{**PERSON, **fields})
    if path == "customers/kyc":
        return edge.kyc_body(**fields)
    return edge.body(**fields)


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_proofs_missing_stale_or_by_another_key_are_401(edge: Edge, path: str) -> None:
    await edge.register()
    registrations = edge.fake.calls["create_customer"]
    body = operation_body(edge, path)
    del body["proof"]
    envelope = await error(await edge.post(path, body), 401, "unauthorized")
    assert envelope["details"]["reason"] == "proof_of_control_required"
    for offset_s in (-61, 61):
        issued = edge.clock.millis() + offset_s * 1000
        stale = operation_body(edge, path, proof=edge.proof(issued_at_ms=issued))
        envelope = await error(await edge.post(path, stale), 401, "unauthorized")
        assert envelope["details"]["reason"] == "proof_of_control_stale"
    other = Account.create()
    for proof in (
        sign_proof(edge.clock, other, taker=edge.wallet),  # another key signed for the wallet
        sign_proof(edge.clock, other),  # another wallet's own proof
        sign_proof(edge.clock, edge.account, chain_id=56),  # signed for another chain
    ):
        forged = operation_body(edge, path, proof=proof_json(proof))
        envelope = await error(await edge.post(path, forged), 401, "unauthorized")
        assert envelope["details"]["reason"] == "proof_of_control_invalid"
    assert edge.fake.calls["create_customer"] == registrations
    assert edge.fake.calls["submit_kyc"] + edge.fake.calls["kyc_link"] == 0


async def test_a_proof_is_reused_by_its_wallet_and_replayed_by_no_other(edge: Edge) -> None:
    await edge.register()
    proof = edge.proof()
    for path in ("customers/details", "customers/kyc/status", "customers/kyc/link"):
        await ok(await edge.post(path, edge.body(proof=proof)))  # RA37: same IP, within 60 s
    other = Account.create()
    resp = await edge.post("customers/details", edge.body(wallet=other.address, proof=proof))
    envelope = await error(resp, 401, "unauthorized")
    assert envelope["details"]["reason"] == "proof_of_control_replayed"


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_an_unknown_provider_is_404(edge: Edge, path: str) -> None:
    await edge.register()
    resp = await edge.post(path, operation_body(edge, path, provider="otherramp"))
    await error(resp, 404, "not_found")


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_schema_comes_before_the_proof(edge: Edge, path: str) -> None:
    body = operation_body(edge, path, chainId=0)
    del body["proof"]
    assert await invalid(await edge.post(path, body)) == ["chainId"]  # RA5: 400 before 401


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_sandbox_calls_need_a_sandbox_chain(edge: Edge, path: str) -> None:
    await edge.register()
    resp = await edge.post(path, operation_body(edge, path, sandbox=True, chainId=56))
    envelope = await error(resp, 401, "unauthorized")  # the proof is bound to chain 97
    assert envelope["details"]["reason"] == "proof_of_control_invalid"
    body = operation_body(edge, path, sandbox=True, chainId=56, proof=edge.proof(chain_id=56))
    envelope = await error(await edge.post(path, body), 403, "forbidden")
    assert envelope["details"]["reason"] == "sandbox_not_available"
    await ok(await edge.post(path, operation_body(edge, path, sandbox=True)))  # chain 97


# -- POST /v2/ramp/customers/kyc, /kyc/status, /kyc/link ------------------------------------


async def test_kyc_submission_status_and_link(edge: Edge) -> None:
    assert await ok(await edge.post("customers/kyc/status", edge.body())) == {"kyc": None}
    await edge.register()
    submitted = await ok(
        await edge.post(
            "customers/kyc",
            edge.body(
                document={
                    "type": "national-id",
                    "number": "A1234567",
                    "expiryDate": "2031-12-31",
                    "imageFront": "data:image/png;base64," + IMAGE,
                    "imageBack": IMAGE,
                },
                selfieImage="data:image/jpeg;base64,c2VsZmll",
            ),
        )
    )
    pending: dict[str, Any] = {
        "state": "pending",
        "providerStatus": "awaiting_review",
        "rejectionReasons": [],
        "requirementsDue": [],
        "level": None,
        "canDeposit": False,
        "maxBuy": {"amount": MAX_BUY, "currency": "NGN"},
    }
    assert submitted == {"kyc": pending}
    [(document, selfie)] = edge.fake.submissions
    assert document == {
        "type": "national-id",
        "number": "A1234567",
        "expiryDate": "2031-12-31",
        "imageFront": IMAGE,  # the data: prefix stripped
        "imageBack": IMAGE,
    }
    assert selfie == "c2VsZmll"
    assert await ok(await edge.post("customers/kyc/status", edge.body())) == {"kyc": pending}
    customer = (await edge.register(email="ada@example.org"))["customer"]
    assert customer["kycStatus"] == "pending"
    await edge.clock.advance(REVIEW_DELAY_S + 1)
    verified = await ok(await edge.post("customers/kyc/status", edge.body(fiat="NGN")))
    assert verified == {
        "kyc": {
            **pending,
            "state": "verified",
            "providerStatus": "approved",
            "level": "tier_1",
            "canDeposit": True,
        }
    }
    link = await ok(await edge.post("customers/kyc/link", edge.body()))
    [profile_id] = edge.fake.customers
    assert link == {"url": f"http://provider.invalid/verify/{profile_id}"}


async def test_a_record_without_a_profile(edge: Edge) -> None:
    for path in ("customers/kyc", "customers/kyc/link"):
        body = operation_body(edge, path)
        envelope = await error(await edge.post(path, body), 400, "invalid_request")
        assert envelope["details"]["reason"] == "no_provider_profile"  # no record at all
    await edge.register(firstName="Ada")
    for path in ("customers/kyc", "customers/kyc/link"):
        body = operation_body(edge, path)
        envelope = await error(await edge.post(path, body), 400, "invalid_request")
        assert envelope["details"]["reason"] == "no_provider_profile"
    assert edge.fake.calls["submit_kyc"] + edge.fake.calls["kyc_link"] == 0
    status = await ok(await edge.post("customers/kyc/status", edge.body()))
    assert status == {
        "kyc": {
            "state": "unverified",
            "providerStatus": "no_profile",
            "rejectionReasons": [],
            "requirementsDue": ["customerDetails"],
            "level": None,
            "canDeposit": False,
            "maxBuy": {"amount": MAX_BUY, "currency": "NGN"},
        }
    }


@pytest.mark.parametrize(
    ("document", "selfie", "field_name"),
    [
        ({"type": "visa"}, IMAGE, "document.type"),
        ({"type": "Passport"}, IMAGE, "document.type"),
        ({"number": "-A123"}, IMAGE, "document.number"),
        ({"expiryDate": "31-12-2031"}, IMAGE, "document.expiryDate"),
        ({"expiryDate": "2031-02-30"}, IMAGE, "document.expiryDate"),
        ({"imageFront": "not base64!"}, IMAGE, "document.imageFront"),
        ({"imageBack": "aGVsbG8"}, IMAGE, "document.imageBack"),  # unpadded
        ({}, "data:image/png,aGVsbG8=", "selfieImage"),  # a data: URL that is not base64
        ({}, "aGVs bG8=", "selfieImage"),
    ],
)
async def test_kyc_schema_failures_name_the_field(
    edge: Edge, document: dict[str, Any], selfie: str, field_name: str
) -> None:
    await edge.register()
    body = edge.kyc_body(selfieImage=selfie)
    body["document"] = {**body["document"], **document}
    assert await invalid(await edge.post("customers/kyc", body)) == [field_name]
    assert edge.fake.calls["submit_kyc"] == 0


@pytest.mark.parametrize("field_name", ["document.imageFront", "document.imageBack", "selfieImage"])
async def test_an_oversize_image_is_400_naming_it(edge: Edge, field_name: str) -> None:
    await edge.register()
    body = edge.kyc_body()
    place, _, name = field_name.rpartition(".")
    target = body["document"] if place else body
    target[name] = image_of(IMAGE_MAX_BYTES + 1)
    envelope = await error(await edge.post("customers/kyc", body), 400, "invalid_request")
    assert envelope["details"]["issues"][0]["field"] == field_name  # RA11: 400, not 413
    assert edge.fake.calls["submit_kyc"] == 0
    target[name] = "data:image/png;base64," + image_of(IMAGE_MAX_BYTES)  # the most allowed
    body["proof"] = edge.proof()
    await ok(await edge.post("customers/kyc", body))
    assert edge.fake.calls["submit_kyc"] == 1


@pytest.mark.parametrize(
    ("field_name", "mib"),
    [
        ("document.imageFront", 20),
        ("document.imageBack", 20),
        ("selfieImage", 20),
        ("selfieImage", 44),
    ],
)
async def test_an_image_far_over_the_limit_is_still_400_naming_it(
    edge: Edge, field_name: str, mib: int
) -> None:
    """Not 413: the whole body (a 20 MiB image was 413 under a 24 MiB route cap) is read up to
    the route's 64 MiB transport cap, so the answer can name the field (RA11)."""
    await edge.register()
    body = edge.kyc_body()
    place, _, name = field_name.rpartition(".")
    (body["document"] if place else body)[name] = image_of(mib * 1024 * 1024)
    envelope = await error(await edge.post("customers/kyc", body), 400, "invalid_request")
    issues = envelope["details"]["issues"]
    assert [issue["field"] for issue in issues] == [field_name]
    assert issues[0]["type"] == "value_error"
    assert f"at most {IMAGE_MAX_BYTES}" in issues[0]["message"]
    assert edge.fake.calls["submit_kyc"] == 0


async def test_kyc_status_fiat_is_an_uppercase_code(edge: Edge) -> None:
    await edge.register()
    assert await invalid(await edge.post("customers/kyc/status", edge.body(fiat="ngn"))) == ["fiat"]


async def test_an_unreachable_provider_is_502_on_the_kyc_calls(edge: Edge) -> None:
    await edge.register()
    edge.fake.down = True
    for path in ("customers/kyc", "customers/kyc/status", "customers/kyc/link"):
        resp = await edge.post(path, operation_body(edge, path))
        envelope = await error(resp, 502, "upstream_error")  # kyc/status: no review read yet
        assert envelope["details"]["reason"] == "provider_unreachable"


# -- the sandbox flag in production (RA3) -------------------------------------------------


@pytest.mark.parametrize("path", WALLET_OPERATIONS)
async def test_production_refuses_the_sandbox_flag_before_the_proof(
    production: Edge, path: str
) -> None:
    body = operation_body(production, path, sandbox=True)
    del body["proof"]
    envelope = await error(await production.post(path, body), 400, "invalid_request")
    assert envelope["details"]["reason"] == "sandbox_not_allowed"
    assert production.fake.calls.total() == 0


async def test_production_refuses_the_sandbox_flag_on_discovery(production: Edge) -> None:
    client = production.client
    for resp in (
        await client.get("/v2/ramp/providers", params={"sandbox": "true"}),
        await client.get("/v2/ramp/banks", params={"provider": "ngnramp", "sandbox": "true"}),
        await production.post(
            "banks/resolve",
            {
                "provider": "ngnramp",
                "bankCode": "058",
                "accountNumber": "0123456789",
                "sandbox": True,
            },
        ),
    ):
        envelope = await error(resp, 400, "invalid_request")
        assert envelope["details"]["reason"] == "sandbox_not_allowed"
    [listed] = (await ok(await client.get("/v2/ramp/providers")))["providers"]
    assert listed["sandboxChainIds"] == []  # empty in production
    assert (await production.register())["customer"]["hasProviderCustomer"] is True


# -- the OpenAPI document ------------------------------------------------------------------

WALLET_STATUSES = {"400", "401", "403", "404", "413", "429", "500", "502"}


@pytest.mark.parametrize(
    ("path", "method", "operation_id", "model", "errors"),
    [
        ("/v2/ramp/providers", "get", "rampProviders", "ProvidersList", {"400", "429", "500"}),
        (
            "/v2/ramp/banks",
            "get",
            "rampBanks",
            "BankList",
            {"400", "403", "404", "422", "429", "500", "502"},
        ),
        (
            "/v2/ramp/banks/resolve",
            "post",
            "rampResolveAccount",
            "ResolvedAccount",
            {"400", "403", "404", "413", "422", "429", "500", "502"},
        ),
        (
            "/v2/ramp/customers",
            "post",
            "rampRegisterCustomer",
            "CustomerResult",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/details",
            "post",
            "rampCustomerDetails",
            "DetailsResult",
            WALLET_STATUSES,
        ),
        (
            "/v2/ramp/customers/kyc",
            "post",
            "rampSubmitKyc",
            "KycSubmitted",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/kyc/status",
            "post",
            "rampKycStatus",
            "KycResult",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/kyc/link",
            "post",
            "rampKycLink",
            "KycLink",
            WALLET_STATUSES | {"422"},
        ),
    ],
)
async def test_openapi_lists_the_operation_with_its_errors(
    edge: Edge, path: str, method: str, operation_id: str, model: str, errors: set[str]
) -> None:
    document = await ok(await edge.client.get("/v2/openapi.json"))
    operation = document["paths"][path][method]
    assert operation["operationId"] == operation_id
    assert set(operation["responses"]) == {"200"} | errors
    success = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert success == {"$ref": f"#/components/schemas/{model}"}  # RA1: not wrapped in data
    for status in errors:
        content = operation["responses"][status]["content"]["application/json"]
        assert content["schema"] == {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert "security" not in operation  # no API key on the ramp (RA4)
    if method == "post":
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert document["components"]["schemas"][body.rpartition("/")[2]]["properties"]
