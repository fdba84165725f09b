"""Validation of a requested trade (preview and firm request share it): chain, corridor, mode,
exactly one size, minimum sizes, steering lists (spec 1-rfq-v2 "Request body")."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.errors import InvalidRequest
from simulator.services.shared.amounts import min_sell_amount, whole_tokens
from simulator.services.shared.venue import ChainVenue, VenueCorridor, VenueDirectory, VenueToken


@dataclass(frozen=True)
class TradeRequest:
    """What a caller asked to trade, as a preview and a firm request both send it: the API
    layer's one value for the rules below (amounts in atomic units, steering lists checksummed
    by the schema)."""

    chain_id: int
    sell_token: str
    buy_token: str
    sell_amount: int | None  # exact input
    buy_amount: int | None  # exact output
    preferred: list[str] | None = None
    restricted: list[str] | None = None


@dataclass(frozen=True)
class TradeSpec:
    chain: ChainVenue
    corridor: VenueCorridor
    sell: VenueToken  # what the taker sells
    buy: VenueToken  # what the taker buys
    sell_amount: int | None  # exact input: gross, fee-inclusive cap
    buy_amount: int | None  # exact output
    preferred: tuple[str, ...]  # deduped, checksummed
    restricted: tuple[str, ...]  # deduped, checksummed

    @property
    def fee_bps(self) -> int:
        return self.corridor.timing.fee_bps

    @property
    def pair_key(self) -> tuple[int, str, str]:
        return (self.chain.chain_id, self.sell.address.lower(), self.buy.address.lower())

    @property
    def exact_input(self) -> bool:
        return self.sell_amount is not None


def _dedupe(wallets: list[str] | None) -> tuple[str, ...]:
    seen: dict[str, str] = {}
    for wallet in wallets or []:
        seen.setdefault(wallet.lower(), wallet)
    return tuple(seen.values())


def validate_trade(venue: VenueDirectory, trade: TradeRequest) -> TradeSpec:
    chain_id, sell_token, buy_token = trade.chain_id, trade.sell_token, trade.buy_token
    sell_amount, buy_amount = trade.sell_amount, trade.buy_amount
    preferred, restricted = trade.preferred, trade.restricted
    chain = venue.chain(chain_id)
    if chain is None:
        raise InvalidRequest(
            f"No RFQ corridor on chain {chain_id}",
            details={"reason": "corridor_unavailable", "chainId": chain_id},
        )
    sell = chain.token(sell_token)
    buy = chain.token(buy_token)
    corridor = (
        chain.corridor_for(sell_token, buy_token)
        if sell_token.lower() != buy_token.lower()
        else None
    )
    if sell is None or buy is None or corridor is None:
        raise InvalidRequest(
            "sellToken and buyToken must differ and form an enabled RFQ corridor",
            details={"reason": "corridor_unavailable"},
        )
    if corridor.timing.mode != "RFQ":
        raise InvalidRequest(
            f"Corridor {corridor.pair_id} runs in {corridor.timing.mode} mode: no RFQ quotes",
            details={"reason": "corridor_book_mode"},
        )
    if (sell_amount is None) == (buy_amount is None):
        raise InvalidRequest(
            "Send exactly one of sellAmount (exact input) or buyAmount (exact output)",
            details={"reason": "exactly_one_amount"},
        )
    if preferred and restricted:
        raise InvalidRequest(
            "preferredLiquidityWallets and restrictedLiquidityWallets cannot be combined",
            details={"reason": "steering_conflict"},
        )
    fee_bps = corridor.timing.fee_bps
    if sell_amount is not None:
        minimum = min_sell_amount(chain.min_size, sell.decimals, fee_bps)
        if sell_amount < minimum:
            raise InvalidRequest(
                f"sellAmount is below the minimum of {minimum}",
                details={"reason": "below_minimum", "field": "sellAmount", "minimum": str(minimum)},
            )
    if buy_amount is not None:
        minimum = whole_tokens(chain.min_size, buy.decimals)
        if buy_amount < minimum:
            raise InvalidRequest(
                f"buyAmount is below the minimum of {minimum}",
                details={"reason": "below_minimum", "field": "buyAmount", "minimum": str(minimum)},
            )
    return TradeSpec(
        chain=chain,
        corridor=corridor,
        sell=sell,
        buy=buy,
        sell_amount=sell_amount,
        buy_amount=buy_amount,
        preferred=_dedupe(preferred),
        restricted=_dedupe(restricted),
    )
