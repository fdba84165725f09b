"""The ramp's discovery operations over real loopback HTTP with the fake provider:
``GET /v2/ramp/providers`` (the live capabilities unwrapped, the filters, the switches, a failing
query naming its member, an unreachable provider left out of the list), ``GET /v2/ramp/banks``
(listed and cached, query failures, refusals) and ``POST /v2/ramp/banks/resolve`` (the account
holder's name, schema failures naming the field, the account number's boundaries, refusals and
provider failures)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.unit.ramp_http.edge import Edge, error, invalid, ok
from tests.unit.services.fake_provider import BANKS

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
