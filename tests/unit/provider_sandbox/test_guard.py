"""The provider sandbox's local guard over real loopback HTTP (a sandbox without chains): a
foreign Host is refused on the API and the controls in the provider's own error shape, a listed
name is answered, and a control write another site's page sent changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from provider_sandbox import SandboxConfig, start_sandbox
from provider_sandbox.runtime import RunningSandbox


@pytest.fixture
async def sandbox() -> AsyncIterator[RunningSandbox]:
    running = await start_sandbox(SandboxConfig(chains=(), allowed_hosts=("ramp.lan",)))
    try:
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _port(sandbox: RunningSandbox) -> str:
    return sandbox.url.rsplit(":", 1)[1]


async def _refused(answer: aiohttp.ClientResponse, reason: str) -> dict[str, Any]:
    assert answer.status == 403
    error = (await answer.json())["error"]
    assert error["type"] == "forbidden"
    assert error["reason"] == reason
    return dict(error)


@pytest.mark.parametrize("path", ["/sandbox/state", "/api/v1/capabilities"])
async def test_a_foreign_host_is_refused(
    sandbox: RunningSandbox, http: aiohttp.ClientSession, path: str
) -> None:
    headers = {
        "Host": f"attacker.example:{_port(sandbox)}",
        "Authorization": f"Bearer {sandbox.api_key}",
    }
    async with http.get(sandbox.url + path, headers=headers) as answer:
        error = await _refused(answer, "host_not_allowed")
    assert error["host"] == "attacker.example"
    assert "--allowed-host attacker.example" in error["message"]


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "ramp.lan"])
async def test_loopback_and_listed_names_are_answered(
    sandbox: RunningSandbox, http: aiohttp.ClientSession, name: str
) -> None:
    headers = {"Host": f"{name}:{_port(sandbox)}"}
    async with http.get(sandbox.url + "/sandbox/state", headers=headers) as answer:
        assert answer.status == 200


async def _enabled(sandbox: RunningSandbox, http: aiohttp.ClientSession) -> bool:
    async with http.get(sandbox.url + "/sandbox/state") as answer:
        assert answer.status == 200
    return sandbox.state.settings.enabled


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Origin": "http://attacker.example"}, "foreign_origin"),
        ({"Sec-Fetch-Site": "cross-site"}, "sec_fetch_site_cross_site"),
    ],
)
async def test_a_control_write_from_another_site_is_refused_and_changes_nothing(
    sandbox: RunningSandbox, http: aiohttp.ClientSession, headers: dict[str, str], reason: str
) -> None:
    assert await _enabled(sandbox, http)
    url = sandbox.url + "/sandbox/switches"
    async with http.put(url, json={"enabled": False}, headers=headers) as answer:
        await _refused(answer, reason)
    assert await _enabled(sandbox, http)


async def test_a_control_write_from_its_own_page_or_no_page_is_done(
    sandbox: RunningSandbox, http: aiohttp.ClientSession
) -> None:
    url = sandbox.url + "/sandbox/switches"
    async with http.put(url, json={"enabled": False}, headers={"Origin": sandbox.url}) as answer:
        assert answer.status == 200
    assert not await _enabled(sandbox, http)
    async with http.put(url, json={"enabled": True}) as answer:
        assert answer.status == 200
    assert await _enabled(sandbox, http)
