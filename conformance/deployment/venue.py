"""What the target offers, as its info describes it (``/_sim/info`` or the simulator's ready
file, else what :mod:`conformance.deployment.discovery` found out from public surfaces, read through
:class:`conformance.deployment.target.Target`): :class:`Venue` holds every chain as a
:class:`VenueChain` (environment, RPC URL, contract addresses, :class:`Token` list, minimum
size, :class:`DeployedCorridor` list) and the demo wallets that fund fresh takers. These are plain
facts read once; :meth:`VenueChain.rpc` is the way from them to a JSON-RPC
:class:`conformance.wire.chain.Chain`, and :func:`whole` turns whole-token amounts into atomic
units.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.deployment.discovery import Undiscovered
from conformance.deployment.target import Target
from conformance.wire.chain import Chain
from conformance.wire.needs import HOW, InputProblem
from rfqkit.wallets import Wallet


def whole(amount: str | int | Decimal, decimals: int) -> int:
    """``amount`` whole tokens in atomic units (``whole("1.5", 6) == 1_500_000``)."""
    return int(Decimal(str(amount)) * (Decimal(10) ** decimals))


@dataclass(frozen=True)
class Token:
    symbol: str
    address: str
    decimals: int
    usdt_like: bool

    def units(self, amount: str | int | Decimal) -> int:
        return whole(amount, self.decimals)


@dataclass(frozen=True)
class DeployedCorridor:
    base: str  # checksummed token address
    quote: str
    mode: str  # RFQ | BOOK


class Contracts(dict[str, str]):
    """A chain's contract addresses by name. A name discovery could not find raises what it
    lacked instead of ``KeyError``: :class:`conformance.wire.needs.InputProblem` naming the missing
    input (the test is skipped), or :class:`conformance.deployment.discovery.DiscoveryError` saying
    which request of the venue broke discovery (the test fails in words)."""

    def __init__(
        self, found: Mapping[str, str], undiscovered: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(found)
        self.undiscovered = {k: Undiscovered.of(v) for k, v in (undiscovered or {}).items()}

    def __missing__(self, name: str) -> str:
        reason = self.undiscovered.get(name)
        if reason is None:
            raise InputProblem(
                "contracts", f"the target's info names no {name} contract: {HOW['contracts']}"
            )
        raise reason.error(name)


@dataclass(frozen=True)
class VenueChain:
    chain_id: int
    environment: str  # live | test
    rpc_url: str
    contracts: Mapping[str, str]
    tokens: Mapping[str, Token]  # by symbol
    min_size: Decimal
    corridors: tuple[DeployedCorridor, ...] = ()
    fee_bps: int | None = None  # the corridors' protocol fee when the info names one (not shown)

    def token(self, symbol: str) -> Token:
        return self.tokens[symbol]

    def token_at(self, address: str) -> Token:
        for token in self.tokens.values():
            if token.address.lower() == address.lower():
                return token
        raise KeyError(address)

    def rfq_directions(self) -> set[tuple[str, str]]:
        """Every (sellToken, buyToken) of the RFQ corridors, in both directions."""
        out: set[tuple[str, str]] = set()
        for corridor in self.corridors:
            if corridor.mode == "RFQ":
                out |= {(corridor.base, corridor.quote), (corridor.quote, corridor.base)}
        return out

    @property
    def reactor(self) -> str:
        return self.contracts["reactor"]

    @property
    def router(self) -> str:
        return self.contracts["router"]

    @property
    def fee_recipient(self) -> str:
        return self.contracts["fee_recipient"]

    @property
    def wallet_factory(self) -> str:
        return self.contracts["wallet_factory"]

    def rpc(self) -> Chain:
        return Chain(self.rpc_url, self.chain_id)

    def with_contract(self, name: str, address: str) -> VenueChain:
        """The same chain, with one more contract known (found out by a test's helper)."""
        undiscovered = getattr(self.contracts, "undiscovered", {})
        contracts = Contracts({**self.contracts, name: address}, undiscovered)
        return replace(self, contracts=contracts)


def _fee_bps(chain: Mapping[str, Any]) -> int | None:
    """The one fee of every corridor of the chain (``/_sim/info``); None when not named."""
    fees = {c.get("fee_bps") for c in chain.get("corridors") or []}
    return int(fees.pop()) if len(fees) == 1 and None not in fees else None


@dataclass(frozen=True)
class Venue:
    """The target's chains, tokens and demo wallets, read once from its info."""

    chains: Mapping[int, VenueChain]
    demo_wallets: tuple[Wallet, ...]
    # What reaching for a chain the venue does not know raises (Target.no_rpc).
    missing: Callable[[int], Exception] = KeyError

    @classmethod
    def of(cls, target: Target) -> Venue:
        """From the target's info when it has one (a shortcut), else discovered from public
        surfaces once per session (:mod:`conformance.deployment.discovery`), with the given taker
        wallets as the wallets that fund fresh takers."""
        cached = target.cache.get("venue")
        if isinstance(cached, Venue):
            return cached
        chains: dict[int, VenueChain] = {}
        for chain in target.chains():
            chain_id = int(chain["chain_id"])
            tokens = {
                str(t["symbol"]): Token(
                    str(t["symbol"]),
                    to_checksum_address(str(t["address"])),
                    int(t["decimals"]),
                    bool(t.get("usdt_like")),
                )
                for t in chain.get("tokens") or []
            }
            chains[chain_id] = VenueChain(
                chain_id=chain_id,
                environment=str(chain.get("environment")),
                rpc_url=target.rpc_url(chain_id),
                contracts=Contracts(
                    {
                        k: to_checksum_address(str(v))
                        for k, v in (chain.get("contracts") or {}).items()
                    },
                    chain.get("undiscovered"),
                ),
                tokens=tokens,
                min_size=Decimal(str(chain.get("min_size", "1"))),
                fee_bps=_fee_bps(chain),
                corridors=tuple(
                    DeployedCorridor(
                        to_checksum_address(str(c["base"])),
                        to_checksum_address(str(c["quote"])),
                        str(c.get("mode")),
                    )
                    for c in chain.get("corridors") or []
                ),
            )
        wallets = tuple(
            Wallet(to_checksum_address(str(w["address"])), str(w["private_key"]))
            for w in target.wallets()
        )
        venue = target.cache["venue"] = cls(chains, wallets, target.no_rpc)
        return venue

    def chain(self, chain_id: int) -> VenueChain:
        """The chain; without it (no RPC URL was given for it, so nothing of it could be read)
        the test is skipped naming the input."""
        try:
            return self.chains[chain_id]
        except KeyError:
            raise self.missing(chain_id) from None
