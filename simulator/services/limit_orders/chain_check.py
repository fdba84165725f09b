"""The corridor check of the book and swaps: two tokens of a chain that form a corridor. (The
chain itself is checked first by the one v1 chain check, services/access/environments.py.)"""

from __future__ import annotations

from simulator.errors import InvalidRequest
from simulator.services.shared.venue import ChainVenue, VenueCorridor, VenueToken


def require_pair(
    chain: ChainVenue, sell_token: str, buy_token: str
) -> tuple[VenueToken, VenueToken, VenueCorridor]:
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
