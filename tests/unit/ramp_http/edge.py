"""The ramp's HTTP edge as its unit tests drive it: :class:`Edge` is one app over real loopback
HTTP without chains, with :class:`EdgeProvider` (the fake provider, also refusing a profile
update to the last name ``Refused`` and keeping what each KYC submission forwarded) behind the
``RampProvider`` port and a wallet that signs its proofs; it builds wallet-naming bodies with a
fresh proof (:func:`operation_body` for each of :data:`WALLET_OPERATIONS`). :func:`ok` reads a
200 whose body is the payload itself (docs/ramp.md RA1: no ``data``), :func:`error` the v2 error
envelope with its request id and :func:`invalid` the fields a 400 schema failure names. The
``edge`` and ``production`` fixtures are in this package's conftest.py.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientResponse
from eth_account import Account

from simulator.adapters.ramp.provider_wire import kyc_body
from simulator.api.http.appkeys import CLOCK
from simulator.clock import Clock
from simulator.services.ramp.ports import (
    KycDocument,
    KycReview,
    PersonDetails,
    ProviderCustomer,
    ProviderRefused,
)
from tests.unit.services.fake_provider import FakeProvider
from tests.unit.services.ramp_harness import Client, attach_fake, client_app, proof_json, sign_proof

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

    async def submit_kyc(self, customer_id: str, document: KycDocument) -> KycReview:
        # Kept as the provider client would send it.
        body = kyc_body(document)
        self.submissions.append((body["document"], body["selfieImage"]))
        return await super().submit_kyc(customer_id, document)


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
