"""The ramp catalog with a fake provider behind the port: live listings and filters, switches,
the banks cache on the clock, resolution and the capability checks."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from simulator.clock import Clock
from simulator.errors import (
    Forbidden,
    InvalidRequest,
    NotFound,
    ProviderDeclined,
    UpstreamError,
)
from simulator.services.ramp.catalog import CatalogSettings, ProviderDirectory, RampCatalog
from simulator.services.ramp.ports import Side
from tests.unit.services.fake_provider import FakeProvider


def catalog(
    *, production: bool = False, attach: bool = True
) -> tuple[RampCatalog, FakeProvider, Clock]:
    clock = Clock()
    fake = FakeProvider(clock)
    providers = ProviderDirectory(["ngnramp"])
    if attach:
        providers.attach(fake)
    return RampCatalog(clock, providers, CatalogSettings(production=production)), fake, clock


async def test_listing_reads_live_switches_every_time() -> None:
    cat, fake, _ = catalog()
    [listed] = await cat.listings()
    assert listed.chains == (56, 97)
    assert listed.sandbox_chains == (97,)
    fake.caps = dataclasses.replace(fake.caps, chains=(97,), sides=("sell",))
    [listed] = await cat.listings()
    assert listed.chains == (97,)
    assert listed.sides == ("sell",)
    assert fake.calls["capabilities"] == 2


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ({"fiat": "NGN"}, True),
        ({"fiat": "ngn"}, True),
        ({"fiat": "USD"}, False),
        ({"token": "NGNS"}, True),
        ({"token": "USDT"}, False),
        ({"chain_id": 56}, True),
        ({"chain_id": 1}, False),
        ({"side": "buy"}, True),
        ({"chain_id": 97, "sandbox": True}, True),
        ({"chain_id": 56, "sandbox": True}, False),
    ],
)
async def test_listing_filters(query: dict[str, object], found: bool) -> None:
    cat, _, _ = catalog()
    assert bool(await cat.listings(**query)) is found  # type: ignore[arg-type]


async def test_switched_off_unreachable_or_sideless_provider_is_left_out() -> None:
    cat, fake, _ = catalog()
    fake.caps = dataclasses.replace(fake.caps, enabled=False)
    assert await cat.listings() == []
    fake.caps = dataclasses.replace(fake.caps, enabled=True, sides=())
    assert await cat.listings() == []
    fake.caps = dataclasses.replace(fake.caps, sides=("buy",))
    assert await cat.listings(side="sell") == []
    fake.down = True
    assert await cat.listings() == []
    detached, _, _ = catalog(attach=False)
    assert await detached.listings() == []


async def test_production_lists_no_sandbox_chains_and_refuses_the_flag() -> None:
    cat, _, _ = catalog(production=True)
    [listed] = await cat.listings()
    assert listed.sandbox_chains == ()
    with pytest.raises(InvalidRequest):
        await cat.listings(sandbox=True)
    with pytest.raises(InvalidRequest):
        await cat.banks("ngnramp", sandbox=True)


async def test_banks_cached_fifteen_minutes_on_the_clock() -> None:
    cat, fake, clock = catalog()
    first = await cat.banks("ngnramp")
    await asyncio.gather(*(cat.banks("ngnramp") for _ in range(5)))
    assert fake.calls["banks"] == 1
    await clock.advance(899)
    assert await cat.banks("ngnramp") == first
    assert fake.calls["banks"] == 1
    await clock.advance(2)
    await cat.banks("ngnramp")
    assert fake.calls["banks"] == 2


async def test_concurrent_cold_cache_readers_share_one_fetch() -> None:
    cat, fake, _ = catalog()
    fake.hold.add("banks")
    readers = [asyncio.create_task(cat.banks("ngnramp")) for _ in range(4)]
    await asyncio.sleep(0.01)
    fake.release.set()
    results = await asyncio.gather(*readers)
    assert fake.calls["banks"] == 1
    assert all(r == results[0] for r in results)


async def test_banks_errors() -> None:
    cat, fake, _ = catalog()
    with pytest.raises(NotFound):
        await cat.banks("other")
    fake.caps = dataclasses.replace(fake.caps, enabled=False)
    with pytest.raises(Forbidden):
        await cat.banks("ngnramp")
    fake.caps = dataclasses.replace(fake.caps, enabled=True, sandbox_chains=())
    with pytest.raises(Forbidden):
        await cat.banks("ngnramp", sandbox=True)
    fake.down = True
    with pytest.raises(UpstreamError):
        await cat.banks("ngnramp")
    detached, _, _ = catalog(attach=False)
    with pytest.raises(UpstreamError):
        await detached.banks("ngnramp")


async def test_resolve() -> None:
    cat, _, _ = catalog()
    assert await cat.resolve("ngnramp", "058", "0123456789") == "HOLDER 6789"
    with pytest.raises(ProviderDeclined) as refused:
        await cat.resolve("ngnramp", "058", "0123450000")
    assert refused.value.message == "We could not verify this bank account"
    assert refused.value.status == 422
    assert refused.value.code == "provider_refused"
    with pytest.raises(InvalidRequest) as unknown:
        await cat.resolve("ngnramp", "999", "0123456789")
    assert unknown.value.details is not None
    assert unknown.value.details["issues"][0]["field"] == "bankCode"


async def require(
    cat: RampCatalog,
    provider: str = "ngnramp",
    *,
    side: Side = "buy",
    fiat: str = "NGN",
    token: str = "NGNS",
    chain_id: int = 56,
    sandbox: bool = False,
) -> None:
    await cat.require_capability(
        provider, side=side, fiat=fiat, token=token, chain_id=chain_id, sandbox=sandbox
    )


async def test_capability_checks() -> None:
    cat, fake, _ = catalog()
    await require(cat)
    await require(cat, chain_id=97, sandbox=True)
    for refused in (
        require(cat, fiat="USD"),
        require(cat, token="USDT"),
        require(cat, chain_id=1),
        require(cat, chain_id=56, sandbox=True),
    ):
        with pytest.raises(Forbidden):
            await refused
    fake.caps = dataclasses.replace(fake.caps, sides=("sell",))
    with pytest.raises(Forbidden) as side:
        await require(cat)
    assert side.value.details == {"reason": "side_not_offered", "sides": ["sell"]}
    fake.caps = dataclasses.replace(fake.caps, enabled=False, sides=("buy", "sell"))
    with pytest.raises(Forbidden):
        await require(cat)
    with pytest.raises(NotFound):
        await require(cat, "other")
