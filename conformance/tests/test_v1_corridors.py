"""GET /v1/corridors (spec 3 "Endpoints": optional chainId, omitted = every chain of the key's
environment; 401). The item shape is ours (docs/decisions.md V7): ``{chainId, pair, mode, base
{symbol, address, decimals}, quote {...}, feeBps, reactor, signatureTransfer}``, checked against
the venue the simulator describes in ``/_sim/info``. Without control (the given keys, paced) only
what the spec says is checked: a list of the key's environment's chains (56 live, 97 test), one
chain when chainId names it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conformance.calls.v1_calls import V1Keys, bearer, own_address_client, v1_keys
from conformance.deployment.target import Target
from conformance.wire.client import (
    Client,
)
from conformance.wire.response_checks import (
    assert_data,
    assert_error,
    assert_rate_limit_headers,
)

RULES = ("v1/endpoints/get-v1-corridors", "v1/auth/quotes-read")
ITEM_FIELDS = {
    "chainId",
    "pair",
    "mode",
    "base",
    "quote",
    "feeBps",
    "reactor",
    "signatureTransfer",
}


@pytest.fixture
def keys(target: Target) -> Iterator[V1Keys]:
    with v1_keys(target) as issued:
        yield issued


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    client = own_address_client(target, http)
    return client if target.controllable else client.paced()


def _expected(target: Target, environment: str) -> list[dict[str, Any]]:
    """What /_sim/info says the environment's corridors are, in the listing's order."""
    items = []
    for chain in sorted(target.chains(), key=lambda c: int(c["chain_id"])):
        if chain["environment"] != environment:
            continue
        tokens = {t["address"]: t for t in chain["tokens"]}
        for corridor in chain["corridors"]:
            base, quote = tokens[corridor["base"]], tokens[corridor["quote"]]
            items.append(
                {
                    "chainId": chain["chain_id"],
                    "pair": corridor["pair"],
                    "mode": corridor["mode"],
                    "base": {k: base[k] for k in ("symbol", "address", "decimals")},
                    "quote": {k: quote[k] for k in ("symbol", "address", "decimals")},
                    "feeBps": corridor["fee_bps"],
                    "reactor": chain["contracts"]["reactor"],
                    "signatureTransfer": chain["contracts"]["signature_transfer"],
                }
            )
    return items


@pytest.mark.spec(*RULES)
@pytest.mark.parametrize("environment", ["test", "live"])
def test_omitted_chain_id_lists_every_chain_of_the_keys_environment(
    target: Target, caller: Client, keys: V1Keys, environment: str
) -> None:
    key = keys.key("quotes:read", environment=environment)
    resp = caller.get("/v1/corridors", headers=bearer(key))
    listed = assert_data(resp)
    assert_rate_limit_headers(resp)
    assert isinstance(listed, list), listed
    assert listed, f"no corridor for {environment} keys"
    if not target.controllable:  # the item shape is rfqsim's (V7): the chains only
        ours, other = (97, 56) if environment == "test" else (56, 97)
        chains = {item["chainId"] for item in listed}
        assert ours in chains, chains
        assert other not in chains, chains
        return
    for item in listed:
        assert set(item) == ITEM_FIELDS, item
        assert item["mode"] in ("RFQ", "BOOK"), item
    assert listed == _expected(target, environment)
    assert any(item["mode"] == "BOOK" for item in listed), "the BOOK corridor is listed"


@pytest.mark.spec(*RULES)
def test_chain_id_selects_one_chain(target: Target, caller: Client, keys: V1Keys) -> None:
    key = keys.key("quotes:read")
    one = assert_data(caller.get("/v1/corridors", headers=bearer(key), params={"chainId": 97}))
    assert one, "chain 97 lists its corridors"
    assert {item["chainId"] for item in one} == {97}, one
    if target.controllable:
        assert one == [c for c in _expected(target, "test") if c["chainId"] == 97]


@pytest.mark.spec(*RULES, "v1/errors/401-unauthorized")
def test_without_a_key_it_is_401(caller: Client) -> None:
    assert_error(caller.get("/v1/corridors"), 401, "unauthorized")
    assert_error(caller.get("/v1/corridors", params={"chainId": 97}), 401, "unauthorized")
