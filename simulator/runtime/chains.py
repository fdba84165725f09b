"""The chains' lifetime inside the app: start (or attach to) one node per configured chain, deploy
the venue, follow the clock, and stop every node we started when the app shuts down."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

from rfqkit.anvil import AnvilNode, start_anvil
from rfqkit.chain import AnvilChain, ChainUnavailable
from rfqkit.tasks import cancel_and_wait
from simulator.adapters.chain.deployment import DeploymentError, deploy_venue
from simulator.adapters.chain.probes import ChainDependencyProbe
from simulator.api.http.appkeys import ACCESS, CHAINS, CLOCK, HEALTH, SETTINGS, VENUE
from simulator.errors import UpstreamError
from simulator.runtime.lifecycle import CHAIN_SUPERVISOR, SHUTDOWN
from simulator.runtime.rfq import FILL_INDEXERS
from simulator.runtime.state import SAVED_STATE
from simulator.services.shared.faults import Faults
from simulator.services.shared.venue import ChainVenue
from simulator.settings import ChainSettings, Settings

log = logging.getLogger("rfqsim.chains")

PROBE_INTERVAL_S = 1.0  # how often every chain is checked (exit, reachability)


class ChainStartupError(RuntimeError):
    """A chain could not be brought up; the message is one line saying which and what to do."""


def _cause(exc: BaseException) -> str:
    """The innermost reason, short: "Connect call failed ('127.0.0.1', 1)" rather than the
    wrapped repr chain."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]


async def _bring_up(
    settings: Settings,
    chain_settings: ChainSettings,
    nodes: list[AnvilNode],
    faults: Faults,
    clock_offset_s: float,
    saved: str | None = None,
) -> tuple[AnvilChain, ChainVenue]:
    """`saved`: the chain's state from the state directory, loaded before the deployment (which
    then finds the venue there and reuses it). `clock_offset_s`: the service clock's offset, which
    the block time of a node started here is brought up to before anything is mined."""
    managed = chain_settings.rpc_url is None
    if managed:
        # Started on the loop's own thread on purpose: PR_SET_PDEATHSIG ties Anvil's life to the
        # thread that forked it, and an executor thread could end before the simulator does.
        # Anvil is listening within ~20 ms, so blocking the loop that long at start-up is fine.
        # A fixed port by default (8545, 8546, ...: wallets keep their network settings across
        # restarts); `serve` checked it is free before anything started.
        node = start_anvil(
            chain_settings.chain_id,
            port=settings.anvil_port(chain_settings.chain_id),
            cors=settings.rpc_cors,
        )
        nodes.append(node)
        rpc_url = node.rpc_url
    else:
        assert chain_settings.rpc_url is not None
        rpc_url = chain_settings.rpc_url
    chain_id = chain_settings.chain_id
    chain = AnvilChain(
        chain_id, rpc_url, is_unreachable=lambda: chain_id in faults.chain_unreachable
    )
    try:
        try:
            remote_id = await chain.remote_chain_id()
        except ChainUnavailable as exc:
            hint = (
                f"start that node, or drop --rpc-url {chain_id}=... to let rfqsim start Anvil"
                if not managed
                else "Anvil started but does not answer"
            )
            raise ChainStartupError(
                f"chain {chain_id}: no JSON-RPC node answers at {rpc_url} ({_cause(exc)}); {hint}"
            ) from exc
        if remote_id != chain_settings.chain_id:
            raise ChainStartupError(
                f"node at {rpc_url} reports chain id {remote_id}, "
                f"expected {chain_settings.chain_id}"
            )
        if managed:
            # A node whose start-up straddled a second boundary stamps its blocks a second
            # behind the service clock (AnvilChain.keep_up_with), and a swap mined right after
            # a quote's expiresAt would read an earlier filledAt (docs/decisions.md F25).
            await chain.keep_up_with(clock_offset_s)
        if saved is not None:
            await chain.rpc("anvil_loadState", [saved])
        try:
            deployment = await deploy_venue(
                chain, chain_settings, settings.funding, settings.corridor_defaults
            )
        except (ChainUnavailable, DeploymentError) as exc:
            # One line naming the transaction, its sender and nonce, and what the node said.
            raise ChainStartupError(f"deploying the venue failed: {exc}") from exc
    except BaseException:
        await chain.close()
        raise
    venue = ChainVenue(
        chain_id=chain_settings.chain_id,
        environment=chain_settings.environment,
        name=chain_settings.name,
        rpc_url=rpc_url,
        managed=managed,
        min_size=chain_settings.min_size,
        contracts=deployment.contracts,
        tokens=deployment.tokens,
        corridors=deployment.corridors,
    )
    return chain, venue


class ChainSupervisor:
    """Watches every chain once a second: a node rfqsim started that exited is reported at once
    (ERROR, naming the chain, pid, URL and exit status) and handled by `on_chain_exit`; every
    chain, started or attached, is probed (`eth_blockNumber`) and its state reported to the
    health endpoints."""

    def __init__(self, app: web.Application, nodes: dict[int, AnvilNode]) -> None:
        self._app = app
        self.nodes = nodes  # the nodes rfqsim started, by chain id (a restart replaces one)
        self.health = app[HEALTH]
        # Called with the chain id once a restarted chain is deployed again (indexers rewind,
        # makers approve again).
        self.restart_listeners: list[Callable[[int], Awaitable[None]]] = []
        self._dead: set[int] = set()  # exited and not (yet) restarted
        # Heads and the fill indexers' state, judged as /v1/status judges them.
        self._probe = ChainDependencyProbe(app[CHAINS], app[FILL_INDEXERS], app[ACCESS].faults)

    async def watch(self) -> None:
        while True:
            chains: dict[int, AnvilChain] = self._app[CHAINS]
            for chain_id in list(chains):
                try:
                    await self._check(chain_id)
                except Exception:
                    log.exception("chain %d: health check failed", chain_id)
            await asyncio.sleep(PROBE_INTERVAL_S)

    async def _check(self, chain_id: int) -> None:
        if chain_id in self._app[FILL_INDEXERS]:
            index = self._probe.fill_index(chain_id)
            self.health.report(f"fillIndex:{chain_id}", index.up, index.reason)
        node = self.nodes.get(chain_id)
        if node is not None and not node.is_running():
            if chain_id not in self._dead:
                self._dead.add(chain_id)
                await self._node_exited(chain_id, node)
            return
        head = await self._probe.chain(chain_id)
        if not head.up:
            if self.health.report(f"chain:{chain_id}", False, head.detail):
                log.warning("chain %d unreachable: %s", chain_id, head.detail)
            return
        if self.health.report(f"chain:{chain_id}", True):
            log.info("chain %d reachable again", chain_id)

    async def _node_exited(self, chain_id: int, node: AnvilNode) -> None:
        policy = self._app[SETTINGS].on_chain_exit
        what = (
            f"chain {chain_id}: the Anvil node rfqsim started (pid {node.pid}, {node.rpc_url}) "
            f"exited with status {node.process.returncode}"
        )
        self.health.report(f"chain:{chain_id}", False, f"node exited ({policy})")
        if policy == "stop":
            self._app[SHUTDOWN].request(1, f"{what} (on_chain_exit: stop)")
            return
        if policy == "keep_serving":
            log.error(
                "%s; serving without it: its calls answer 502 (on_chain_exit: keep_serving)", what
            )
            return
        log.error("%s; starting a new node and redeploying (on_chain_exit: restart)", what)
        try:
            await self._restart(chain_id, node)
        except Exception as exc:
            self._app[SHUTDOWN].request(1, f"chain {chain_id}: restart failed: {exc}")
            return
        self._dead.discard(chain_id)

    async def _restart(self, chain_id: int, old: AnvilNode) -> None:
        app = self._app
        await asyncio.to_thread(old.stop)  # reaps it and ends its output pump
        # On the loop's thread, as at start-up (PR_SET_PDEATHSIG follows the forking thread);
        # the same port, so every URL handed out stays valid; the service clock's time, so
        # block time agrees with it after advances.
        node = start_anvil(
            chain_id,
            port=old.port,
            timestamp=int(app[CLOCK].time()),
            cors=app[SETTINGS].rpc_cors,
        )
        self.nodes[chain_id] = node
        chain = app[CHAINS][chain_id]
        await chain.reset()
        await chain.keep_up_with(app[CLOCK].offset_seconds)  # its start-up can lag a second
        settings = app[SETTINGS]
        deployment = await deploy_venue(
            chain, settings.chain(chain_id), settings.funding, settings.corridor_defaults
        )
        if deployment.contracts != app[VENUE].chains[chain_id].contracts:
            raise ChainStartupError("the redeployed contracts are at other addresses")
        for listener in self.restart_listeners:
            await listener(chain_id)
        self.health.report(f"chain:{chain_id}", True, "restarted: earlier state is gone")
        log.warning(
            "chain %d: new node on %s (pid %d), venue redeployed; balances, approvals and "
            "transactions of the old chain are gone",
            chain_id,
            node.rpc_url,
            node.pid,
        )


async def chains_context(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    nodes: list[AnvilNode] = []  # every Anvil we started, stopped in `finally`
    chains = app[CHAINS]  # created by the app factory, so other parts can hold it before start-up
    faults = app[ACCESS].faults
    supervisor: ChainSupervisor | None = None
    watcher: asyncio.Task[None] | None = None
    saved_chains = app[SAVED_STATE].chains if SAVED_STATE in app else {}

    async def follow_clock(seconds: float) -> None:
        results = await asyncio.gather(
            *(chain.increase_time(seconds) for chain in chains.values()), return_exceptions=True
        )
        failed = [
            (chain_id, result)
            for chain_id, result in zip(chains, results, strict=True)
            if isinstance(result, BaseException)
        ]
        for _, result in failed:
            if not isinstance(result, ChainUnavailable):
                raise result
        if failed:
            names = ", ".join(str(chain_id) for chain_id, _ in failed)
            raise UpstreamError(
                f"The service clock moved, but chain {names} could not follow: "
                + "; ".join(str(result) for _, result in failed),
                details={"reason": "chain_unreachable", "chainIds": [c for c, _ in failed]},
            )

    try:
        results = await asyncio.gather(
            *(
                _bring_up(
                    settings,
                    cs,
                    nodes,
                    faults,
                    app[CLOCK].offset_seconds,
                    saved_chains.get(cs.chain_id),
                )
                for cs in settings.chains
            ),
            return_exceptions=True,
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        for result in results:
            if not isinstance(result, BaseException):
                chain, venue = result
                chains[venue.chain_id] = chain
                app[VENUE].chains[venue.chain_id] = venue
        if errors:
            raise errors[0]
        app[CLOCK].add_listener(follow_clock)
        supervisor = ChainSupervisor(app, {node.chain_id: node for node in nodes})
        app[CHAIN_SUPERVISOR] = supervisor
        for chain_id in chains:
            app[HEALTH].report(f"chain:{chain_id}", True)
        watcher = asyncio.create_task(supervisor.watch(), name="chain-supervisor")
        yield
        app[CLOCK].remove_listener(follow_clock)
    finally:
        if watcher is not None:
            await cancel_and_wait([watcher])
        if supervisor is not None:
            nodes = list(supervisor.nodes.values())  # restarted ones replaced the dead
        await asyncio.gather(*(chain.close() for chain in chains.values()), return_exceptions=True)
        for node in nodes:
            await asyncio.to_thread(node.stop)
        if nodes:
            log.info("stopped %d anvil node(s)", len(nodes))
