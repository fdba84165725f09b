"""The sandbox flag in production (docs/ramp.md RA3) over real loopback HTTP: every
wallet-naming operation refuses it with 400 ``sandbox_not_allowed`` before looking at the proof
and asks the provider nothing, the discovery operations refuse it too, and the providers list
shows no sandbox chains."""

from __future__ import annotations

import pytest

from tests.unit.ramp_http.edge import WALLET_OPERATIONS, Edge, error, ok, operation_body


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
