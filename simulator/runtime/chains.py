"""The chains' lifetime inside the app: start (or attach to) one node per configured chain, deploy
the venue, follow the clock, and stop every node we started when the app shuts down."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.anvil import AnvilNode, start_anvil
from rfqkit.chain import AnvilChain, ChainUnavailable
from simulator.adapters.chain.deployment import deploy_venue
from simulator.api.http.appkeys import ACCESS, CHAINS, CLOCK, SETTINGS, VENUE
from simulator.errors import UpstreamError
from simulator.services.shared.faults import Faults
from simulator.services.shared.venue import ChainVenue
from simulator.settings import ChainSettings, Settings

log = logging.getLogger("rfqsim.chains")


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
    settings: Settings, chain_settings: ChainSettings, nodes: list[AnvilNode], faults: Faults
) -> tuple[AnvilChain, ChainVenue]:
    managed = chain_settings.rpc_url is None
    if managed:
        # Started on the loop's own thread on purpose: PR_SET_PDEATHSIG ties Anvil's life to the
        # thread that forked it, and an executor thread could end before the simulator does.
        # Anvil is listening within ~20 ms, so blocking the loop that long at start-up is fine.
        # A fixed port by default (8545, 8546, ...: wallets keep their network settings across
        # restarts); `serve` checked it is free before anything started.
        node = start_anvil(
            chain_settings.chain_id, port=settings.anvil_port(chain_settings.chain_id)
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
        deployment = await deploy_venue(
            chain, chain_settings, settings.funding, settings.corridor_defaults
        )
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


async def chains_context(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    nodes: list[AnvilNode] = []  # every Anvil we started, stopped in `finally`
    chains = app[CHAINS]  # created by the app factory, so other parts can hold it before start-up
    faults = app[ACCESS].faults

    async def follow_clock(seconds: float) -> None:
        try:
            await asyncio.gather(*(chain.increase_time(seconds) for chain in chains.values()))
        except ChainUnavailable as exc:
            raise UpstreamError(str(exc), details={"reason": "chain_unreachable"}) from exc

    try:
        results = await asyncio.gather(
            *(_bring_up(settings, cs, nodes, faults) for cs in settings.chains),
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
        yield
        app[CLOCK].remove_listener(follow_clock)
    finally:
        await asyncio.gather(*(chain.close() for chain in chains.values()), return_exceptions=True)
        for node in nodes:
            await asyncio.to_thread(node.stop)
        if nodes:
            log.info("stopped %d anvil node(s)", len(nodes))
