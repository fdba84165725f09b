"""The simulator's own maker fleet: simulated makers (makers/fleet.py) connected over a real
WebSocket to this very simulator, with maker credentials created in-process. Started once the
API listens (it connects to the API URL) and stopped before the chains go away; /_sim/makers
reaches it through `simulated_fleet` (the RFQ area's SimulatedFleet port)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from aiohttp import web

from makers.config import FleetConfig
from makers.fleet import MakerFleet
from simulator.adapters.rfq.fleet import MakerFleetControl
from simulator.api.http.appkeys import ACCESS, RANDOM, SETTINGS, VENUE
from simulator.runtime.lifecycle import CHAIN_SUPERVISOR

log = logging.getLogger("rfqsim.fleet")


@dataclass
class FleetHolder:
    fleet: MakerFleet | None = None  # None until started (or when disabled)
    config: FleetConfig | None = None  # what the fleet runs
    api_url: str | None = None  # where it connects (set by start_fleet)
    credentials: dict[str, list[str]] | None = None  # its maker keys, reused by a restart
    v1_keys: dict[str, dict[str, str]] | None = None  # the book roles' v1 keys, likewise
    # The random stream the makers draw from (their Permit2 nonces among it). A reset starts
    # them on the start-up stream again (the chain forgot those nonces too); after a restore
    # or a start from a state directory the chain remembers nonces already used, so the
    # makers take a stream of their own (makers#1, makers#2, ...).
    rng_label: str = "makers"
    restarts: int = 0  # fresh streams handed out so far


FLEET: web.AppKey[FleetHolder] = web.AppKey("fleet")


def simulated_fleet(holder: FleetHolder) -> MakerFleetControl:
    """The fleet the holder has at each call: built with the app, before the fleet starts."""
    return MakerFleetControl(lambda: holder.fleet)


def credentials_for(app: web.Application, config: FleetConfig) -> dict[str, list[str]]:
    """One maker credential per maker and per environment of the chains it serves (with
    maker:fill for a filling operator of the v1 book)."""
    keys = app[ACCESS].keys
    partner = keys.partner_by_name("makers")
    environments = {c.chain_id: c.environment for c in app[VENUE].chains.values()}
    credentials: dict[str, list[str]] = {}
    for maker in config.makers:
        wanted = sorted({environments[c] for c in maker.chains if c in environments})
        credentials[maker.name] = [
            keys.create_key(
                partner_id=partner.partner_id,
                environment=environment,
                scopes=frozenset(
                    {"maker:stream", "maker:fill"} if maker.fills_book else {"maker:stream"}
                ),
                name=maker.name,
                maker_wallet=maker.wallet().address,
            )[1]
            for environment in wanted
        ]
    return credentials


V1_BOOK_SCOPES = frozenset({"quotes:read", "trades:read", "trades:write"})


def v1_keys_for(app: web.Application, config: FleetConfig) -> dict[str, dict[str, str]]:
    """The v1 API keys of the makers with a book role (filling operator, resting orders): one
    per environment they serve, partner "makers", unlimited tier, as a maker bot would hold."""
    keys = app[ACCESS].keys
    partner = keys.partner_by_name("makers")
    environments = {c.chain_id: c.environment for c in app[VENUE].chains.values()}
    out: dict[str, dict[str, str]] = {}
    for maker in config.makers:
        if not (maker.fills_book or maker.book_orders is not None):
            continue
        wanted = sorted({environments[c] for c in maker.chains if c in environments})
        out[maker.name] = {
            environment: keys.create_key(
                partner_id=partner.partner_id,
                environment=environment,
                scopes=V1_BOOK_SCOPES,
                name=f"{maker.name}-v1",
                tier="unlimited",
            )[1]
            for environment in wanted
        }
        # The fleet's calls are the simulator's own: /_sim/faults' next-N 500s are for clients.
        app[ACCESS].faults.own_keys.update(out[maker.name].values())
    return out


async def start_fleet(app: web.Application, api_url: str) -> MakerFleet | None:
    holder = app[FLEET]
    config = app[SETTINGS].makers
    if config is None:
        return None
    served = {c.chain_id for c in app[VENUE].chains.values()}
    config = config.model_copy(
        update={
            "makers": tuple(
                m.model_copy(update={"chains": tuple(c for c in m.chains if c in served)})
                for m in config.makers
                if any(c in served for c in m.chains)
            )
        }
    )
    holder.config = config
    holder.api_url = api_url
    holder.credentials = credentials_for(app, config)
    holder.v1_keys = v1_keys_for(app, config)
    fleet = await _run_fleet(app)
    log.info("maker fleet online: %s", ", ".join(fleet.makers))
    return fleet


async def _run_fleet(app: web.Application) -> MakerFleet:
    holder = app[FLEET]
    assert holder.config is not None
    assert holder.api_url is not None
    assert holder.credentials is not None
    fleet = MakerFleet(
        holder.config,
        url=holder.api_url,
        credentials=holder.credentials,
        rpc_urls={c.chain_id: c.rpc_url for c in app[VENUE].chains.values()},
        rng=app[RANDOM].fork(holder.rng_label),
        v1_keys=holder.v1_keys,
    )
    await fleet.start()
    if CHAIN_SUPERVISOR in app:
        app[CHAIN_SUPERVISOR].restart_listeners.append(fleet.chain_restarted)
    holder.fleet = fleet
    return fleet


class FleetRestarter:
    """The state control's view of the fleet (services/sim/ports.py FleetRestart): stopped
    before the state changes, started again with its start-up configuration and the same
    credentials (the reset keys store still holds them) once it has."""

    def __init__(self, app: web.Application) -> None:
        self._app = app

    async def stop(self) -> None:
        holder = self._app[FLEET]
        fleet = holder.fleet
        if fleet is None:
            return
        if CHAIN_SUPERVISOR in self._app:
            listeners = self._app[CHAIN_SUPERVISOR].restart_listeners
            if fleet.chain_restarted in listeners:
                listeners.remove(fleet.chain_restarted)
        await stop_fleet(self._app)

    async def start(self, *, fresh_nonces: bool) -> None:
        holder = self._app[FLEET]
        if holder.credentials is None or holder.fleet is not None:
            return
        if fresh_nonces:
            fresh_stream(holder)
        else:
            holder.rng_label = "makers"
        await _run_fleet(self._app)


def fresh_stream(holder: FleetHolder) -> None:
    holder.restarts += 1
    holder.rng_label = f"makers#{holder.restarts}"


async def stop_fleet(app: web.Application) -> None:
    holder = app[FLEET]
    if holder.fleet is not None:
        await holder.fleet.close()
        holder.fleet = None
