"""What "ready" promises once the simulated fleet has started, read back
from the venue itself: every maker configured online has a session on each environment it
serves, every RFQ direction of a chain it serves has fresh levels, and every BOOK direction of a
chain where a maker keeps resting orders has an executable offer.

The fleet's start makes this true by construction (its levels read by the server, its first
resting orders placed through the v1 API, before it returns), so this is one read, never a wait:
it names what is missing, so that a fleet configured not to cover a corridor, or a posting round
that failed, is said in the log instead of being found by a client."""

from __future__ import annotations

from aiohttp import web

from makers.config import FleetConfig
from simulator.api.http.appkeys import BOOK, RFQ, VENUE
from simulator.services.limit_orders.ports import ChainUnreadable


async def venue_gaps(app: web.Application, fleet: FleetConfig) -> list[str]:
    """One line per promise the venue does not keep right now (empty: all kept)."""
    registry = app[RFQ].deps.makers
    book = app[BOOK].service
    online = [m for m in fleet.makers if m.online]
    gaps: list[str] = []
    for chain in app[VENUE].chains.values():
        serving = [m for m in online if chain.chain_id in m.chains]
        if not serving:
            continue
        where = f"on chain {chain.chain_id}"
        sessions = registry.makers_for(chain.environment)
        connected = {s.wallet.lower() for s in sessions}
        gaps += [
            f"maker {m.name} is not online {where}"
            for m in serving
            if m.wallet().address.lower() not in connected
        ]
        resting = any(m.book_orders is not None for m in serving)
        for corridor in chain.corridors:
            # Both directions, named as a taker trades them: sell -> buy.
            for sell, buy in ((corridor.base, corridor.quote), (corridor.quote, corridor.base)):
                direction = f"{sell.symbol} -> {buy.symbol} {where}"
                if corridor.timing.mode == "RFQ":
                    key = (chain.chain_id, sell.address.lower(), buy.address.lower())
                    if not any(registry.fresh_curve(s, key) for s in sessions):
                        gaps.append(f"no maker's levels for {direction}")
                elif resting:
                    try:
                        view = await book.live.view(chain.chain_id)
                    except ChainUnreadable as exc:
                        gaps.append(f"the v1 book {where} could not be read: {exc}")
                        break
                    # The offers a taker selling `sell` meets: orders selling `buy` for it.
                    if not book.ranked(view, buy.address, sell.address):
                        gaps.append(f"no resting offer for {direction}")
    return gaps
