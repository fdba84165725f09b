"""The v1 chain check every v1 service runs first: the chainId must be a chain this venue serves
and one the caller's key environment may use. (The v1 edge has one shared check for every v1
endpoint; this small function is the book's and swaps' use of it, kept in one place.)"""

from __future__ import annotations

from simulator.errors import InvalidRequest
from simulator.services.access.callers import Caller
from simulator.services.shared.venue import ChainVenue, Corridor, Token, VenueDirectory


def require_v1_chain(venue: VenueDirectory, caller: Caller, chain_id: int) -> ChainVenue:
    """The served chain `chain_id`, else 400 (unknown chain; or a chain the key's environment
    cannot use: a test key on a live chain or the reverse)."""
    chain = venue.chain(chain_id)
    if chain is None:
        raise InvalidRequest(
            f"No corridor on chain {chain_id}",
            details={"reason": "corridor_unavailable", "chainId": chain_id},
        )
    caller.require_chain_environment(chain.chain_id, chain.environment)
    return chain


def require_pair(
    chain: ChainVenue, sell_token: str, buy_token: str
) -> tuple[Token, Token, Corridor]:
    """(sell, buy, corridor) for two different tokens forming a corridor of the chain in either
    direction and in any mode (BOOK corridors are served only by the book; RFQ corridors may hold
    resting orders too), else 400 corridor_unavailable."""
    sell = chain.token(sell_token)
    buy = chain.token(buy_token)
    corridor = (
        chain.corridor_for(sell_token, buy_token)
        if sell_token.lower() != buy_token.lower()
        else None
    )
    if sell is None or buy is None or corridor is None:
        raise InvalidRequest(
            "sellToken and buyToken must differ and form a corridor of this chain",
            details={"reason": "corridor_unavailable", "chainId": chain.chain_id},
        )
    return sell, buy, corridor
