"""The ramp provider's lifetime inside the app: after the chains are up, start the provider sandbox
in this process on its own port (`--provider-port`, default a free one) sharing the simulator's
clock, or use one started elsewhere (`--provider-url`); attach the HTTP client of its API to the
ramp; stop both on shutdown.

The sandbox's webhooks go to the simulator's own `/_provider/{provider}/webhooks`, signed with the
ramp's webhook secret. The simulator's address is known only once its socket is bound, so
`rfqsim serve` calls `connect_provider_webhooks` after binding."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from provider_sandbox.config import SandboxChain, SandboxConfig
from provider_sandbox.core import Sandbox
from provider_sandbox.rates import WalkState
from provider_sandbox.runtime import RunningSandbox, start_sandbox
from provider_sandbox.state import SandboxState
from rfqkit.tasks import cancel_and_wait
from simulator.adapters.ramp.provider_client import HttpRampProvider
from simulator.api.http.appkeys import CLOCK, HEALTH, RAMP, SETTINGS, STATE, VENUE
from simulator.services.ramp.controls import SandboxLink, webhook_url
from simulator.services.ramp.ports import ProviderError
from simulator.services.shared.health import DependencyHealth
from simulator.services.shared.state import StateParticipant, StateSchema, read_schema
from simulator.services.shared.venue import VenueDirectory

log = logging.getLogger("rfqsim.provider")

SANDBOX_HOST = "127.0.0.1"  # the sandbox's controls have no authentication: loopback only


@dataclass
class ProviderHandle:
    url: str  # the provider's base URL (API under /api/v1, controls under /sandbox)
    client: HttpRampProvider  # the ramp's port to it
    running: RunningSandbox | None  # the in-process sandbox, None with --provider-url


@dataclass
class ProviderHolder:
    handle: ProviderHandle | None = None  # set while the app runs (after the chains are up)


PROVIDER: web.AppKey[ProviderHolder] = web.AppKey("provider")  # made by the app factory


def sandbox_chains(venue: VenueDirectory, token_symbol: str) -> tuple[SandboxChain, ...]:
    """Every chain of the venue that has the corridor's token, for the sandbox to settle on."""
    chains = []
    for chain in sorted(venue.chains.values(), key=lambda c: c.chain_id):
        token = next((t for t in chain.tokens if t.symbol == token_symbol), None)
        if token is None:
            continue
        chains.append(
            SandboxChain(
                chain_id=chain.chain_id,
                rpc_url=chain.rpc_url,
                network=chain.name,
                token_address=token.address,
                token_decimals=token.decimals,
            )
        )
    return tuple(chains)


def connect_provider_webhooks(app: web.Application, api_url: str) -> str | None:
    """Point the in-process sandbox's webhooks at this simulator; returns the URL used (None
    with an external sandbox, which is configured on its own command line)."""
    holder = app.get(PROVIDER)
    handle = holder.handle if holder is not None else None
    if handle is None or handle.running is None:
        return None
    ramp = app[RAMP]
    url = webhook_url(api_url, ramp.settings.provider_id)
    handle.running.set_webhook_target(url, ramp.webhook_secret)
    return url


PROBE_INTERVAL_S = 5.0  # how often the provider's reachability is read for /v2/health


async def _probe(client: HttpRampProvider, health: DependencyHealth, name: str) -> None:
    """Reads the provider's capabilities every few seconds; its answer (or none) is the
    provider's state on the health endpoints."""
    while True:
        await asyncio.sleep(PROBE_INTERVAL_S)
        try:
            async with asyncio.timeout(PROBE_INTERVAL_S):
                await client.capabilities()
        except (ProviderError, TimeoutError) as exc:
            detail = str(exc) or type(exc).__name__
            if health.report(name, False, detail):
                log.warning("ramp %s: %s", name, detail)
        else:
            if health.report(name, True):
                log.info("ramp %s reachable again", name)


SANDBOX_STATE = "provider.sandbox"


class SandboxSaved(StateSchema):
    """What reset and snapshots put back of the in-process sandbox: its whole state
    (customers, transfers, switches, its id stream) and where its rate walk stands."""

    state: SandboxState
    walk: WalkState


class SandboxParticipant:
    """The in-process sandbox's state; what it was about to send for the old state is dropped
    after a load."""

    name = SANDBOX_STATE

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox

    def dump(self) -> dict[str, Any]:
        saved = SandboxSaved(state=self._sandbox.state, walk=self._sandbox.walk.saved())
        return saved.model_dump(mode="json")

    def check(self, state: object) -> SandboxSaved:
        return read_schema(self.name, SandboxSaved, state)

    def load(self, state: dict[str, Any]) -> None:
        saved = self.check(state)
        sandbox = self._sandbox
        sandbox.state = saved.state
        sandbox.walk.restore(saved.walk)
        sandbox.webhooks.forget()
        sandbox.engine.forget()


def sandbox_state(running: RunningSandbox) -> StateParticipant:
    return SandboxParticipant(running.sandbox)


async def provider_context(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    ramp = app[RAMP]
    ramp_settings = settings.ramp
    running: RunningSandbox | None = None
    if ramp_settings.provider_url is None:
        config = SandboxConfig(
            chains=sandbox_chains(app[VENUE], "NGNS"),
            host=SANDBOX_HOST,
            port=ramp_settings.provider_port,
            allowed_hosts=tuple(settings.api.allowed_hosts),  # its pages are reached alike
            api_key=ramp_settings.provider_api_key,
            webhook_url=None,  # set by connect_provider_webhooks once the simulator is bound
            webhook_secret=ramp.webhook_secret,
            seed=settings.seed,
            provider_id=ramp_settings.provider_id,
        )
        running = await start_sandbox(config, app[CLOCK].time)
        app[STATE].registry.register(sandbox_state(running))
        url = running.url
        log.info("provider sandbox %s listening on %s", ramp_settings.provider_id, url)
    else:
        url = ramp_settings.provider_url.rstrip("/")
    client = HttpRampProvider(
        ramp_settings.provider_id,
        url,
        ramp_settings.provider_api_key,
        timeout_s=ramp_settings.provider_timeout_s,
    )
    ramp.providers.attach(client)
    ramp.controls.link = SandboxLink(url=url, controls=client, in_process=running is not None)
    holder = app[PROVIDER]
    holder.handle = handle = ProviderHandle(url=url, client=client, running=running)
    health = app[HEALTH]
    name = f"provider:{ramp_settings.provider_id}"
    health.report(name, True)
    probe = asyncio.create_task(_probe(client, health, name), name="provider-probe")
    try:
        yield
    finally:
        await cancel_and_wait([probe])
        holder.handle = None
        ramp.controls.link = None
        ramp.providers.detach(ramp_settings.provider_id)
        await handle.client.close()
        if running is not None:
            app[STATE].registry.unregister(SANDBOX_STATE)
            await running.stop()
