"""The simulator's own maker fleet: simulated makers (makers/fleet.py) connected over a real
WebSocket to this very simulator, with maker credentials created in-process. Started once the
API listens (it connects to the API URL) and stopped before the chains go away; /_sim/makers
reaches it through `simulated_fleet` (the RFQ area's SimulatedFleet port). A start returns once
every online maker's levels have been read by the server and the book roles' first resting
orders are placed; what the venue still lacks then is logged.

`makers_process` says where it runs: `in` this process (a MakerFleet on our event loop), or
`own`: a child process (adapters/rfq/fleet_process.py) started with the first start and
stopped with `serve`; reset and restore stop and start the fleet inside it over its control
channel, the process itself stays."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from makers.config import FleetConfig
from makers.control import ControlError, start_request
from makers.fleet import MakerFleet
from simulator.adapters.rfq.fleet import MakerFleetControl
from simulator.adapters.rfq.fleet_process import (
    START_TIMEOUT_S,
    STOP_TIMEOUT_S,
    FleetProcess,
    ProcessFleetControl,
)
from simulator.adapters.rfq.forked_child import ForkedChild
from simulator.api.http.appkeys import ACCESS, RANDOM, SETTINGS, VENUE
from simulator.errors import FleetProcessUnreachable
from simulator.runtime.lifecycle import CHAIN_SUPERVISOR
from simulator.runtime.readiness import venue_gaps
from simulator.services.rfq.ports import SimulatedFleet
from simulator.services.shared.maker_names import MakerNames

log = logging.getLogger("rfqsim.fleet")


@dataclass
class FleetHolder:
    fleet: MakerFleet | None = None  # the running fleet in this process (makers_process: in)
    process: FleetProcess | None = None  # the fleet's own process (makers_process: own)
    forked: ForkedChild | None = None  # that process, forked by `serve` before its event loop
    running: bool = False  # a fleet runs (here or in `process`)
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
    # The running fleet's chain restart listener (in CHAIN_SUPERVISOR.restart_listeners).
    listener: Callable[[int], Awaitable[None]] | None = field(default=None, repr=False)

    def names(self) -> list[str]:
        """The running fleet's makers, in fleet order; none while no fleet runs."""
        if not self.running or self.config is None:
            return []
        return [m.name for m in self.config.makers]


FLEET: web.AppKey[FleetHolder] = web.AppKey("fleet")


def simulated_fleet(holder: FleetHolder, makers_process: str) -> SimulatedFleet:
    """The fleet the holder has at each call: built with the app, before the fleet starts."""
    if makers_process == "own":
        return ProcessFleetControl(lambda: holder.process if holder.running else None)
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


async def spawn_fleet_process(app: web.Application) -> None:
    """With `makers_process: own`, the fleet's process before anything else starts: the one
    `serve` forked before its event loop (its imports are ours), else a new one, whose imports
    then overlap the chains' start-up and the deployment. Its fleet starts with start_fleet,
    once the API listens."""
    settings = app[SETTINGS]
    holder = app[FLEET]
    if settings.makers is not None and settings.makers_process == "own":
        forked, holder.forked = holder.forked, None
        holder.process = await (FleetProcess.adopt(forked) if forked else FleetProcess.spawn())


async def start_fleet(app: web.Application, api_url: str) -> None:
    holder = app[FLEET]
    config = app[SETTINGS].makers
    if config is None:
        return
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
    await _run_fleet(app)


async def _run_fleet(app: web.Application) -> None:
    """Start the fleet with the holder's configuration, then say in the log what it did (the
    resting orders each maker placed in its first round) and what the venue still lacks."""
    holder = app[FLEET]
    assert holder.config is not None
    assert holder.api_url is not None
    assert holder.credentials is not None
    rpc_urls = {c.chain_id: c.rpc_url for c in app[VENUE].chains.values()}
    rng = app[RANDOM].fork(holder.rng_label)
    listener: Callable[[int], Awaitable[None]]
    placed: dict[str, int]
    if app[SETTINGS].makers_process == "own":
        if holder.process is None or not holder.process.alive:
            holder.process = await FleetProcess.spawn()
        request = start_request(
            holder.config,
            url=holder.api_url,
            credentials=holder.credentials,
            rpc_urls=rpc_urls,
            rng_seed=rng.seed,  # the same draws as the in-process fleet's: same nonces
            v1_keys=holder.v1_keys,
        )
        answer = await holder.process.call("start", request, timeout_s=START_TIMEOUT_S)
        placed = {str(name): int(count) for name, count in dict(answer).items()}
        listener = holder.process.chain_restarted
    else:
        fleet = MakerFleet(
            holder.config,
            url=holder.api_url,
            credentials=holder.credentials,
            rpc_urls=rpc_urls,
            rng=rng,
            v1_keys=holder.v1_keys,
        )
        placed = await fleet.start()
        holder.fleet = fleet
        listener = fleet.chain_restarted
    holder.running = True
    if CHAIN_SUPERVISOR in app:
        app[CHAIN_SUPERVISOR].restart_listeners.append(listener)
        holder.listener = listener
    where = f"own process, pid {holder.process.pid}" if holder.process else "in-process"
    orders = ", ".join(f"{name} {count}" for name, count in placed.items() if count)
    log.info(
        "maker fleet online (%s): %s; resting orders placed: %s",
        where,
        ", ".join(holder.names()),
        orders or "none",
    )
    for gap in await venue_gaps(app, holder.config):
        log.warning("the maker fleet started, but the venue is not complete: %s", gap)


async def _halt_fleet(app: web.Application) -> None:
    """Stop the running fleet (its process, if any, stays for the next start)."""
    holder = app[FLEET]
    if holder.listener is not None and CHAIN_SUPERVISOR in app:
        listeners = app[CHAIN_SUPERVISOR].restart_listeners
        if holder.listener in listeners:
            listeners.remove(holder.listener)
    holder.listener = None
    holder.running = False
    if holder.fleet is not None:
        fleet, holder.fleet = holder.fleet, None
        await fleet.close()
    process = holder.process
    if process is not None and process.alive:
        try:
            await process.call("stop", timeout_s=STOP_TIMEOUT_S)
        except (FleetProcessUnreachable, ControlError) as exc:
            # The next start spawns a new process: a wedged one must not stop a reset.
            log.error("the maker fleet process did not stop its fleet (%s); ending it", exc)
            holder.process = None
            await process.close()


class FleetRestarter:
    """The state control's view of the fleet (services/sim/ports.py FleetRestart): stopped
    before the state changes, started again with its start-up configuration and the same
    credentials (the reset keys store still holds them) once it has."""

    def __init__(self, app: web.Application) -> None:
        self._app = app

    async def stop(self) -> None:
        await _halt_fleet(self._app)

    async def start(self, *, fresh_nonces: bool) -> None:
        holder = self._app[FLEET]
        if holder.credentials is None or holder.running:
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
    """The last stop (serve ends): the fleet, then its process if it has one."""
    holder = app[FLEET]
    try:
        await _halt_fleet(app)
    finally:
        process, holder.process = holder.process, None
        if process is not None:
            await process.close()


def fleet_names(config: FleetConfig | None) -> MakerNames:
    """The configured fleet's wallet -> name (every maker, whether it runs or not)."""
    makers = config.makers if config is not None else ()
    return MakerNames({maker.wallet().address: maker.name for maker in makers})
