"""GET /_sim/chains: each chain's head and what the demo and maker wallets hold (the console's
Venue view), read fresh from the chains."""

from __future__ import annotations

from aiohttp import web
from pydantic import Field

from rfqkit.wallets import demo_wallet, maker_wallet
from simulator.api.http.appkeys import MAKER_NAMES, SETTINGS, VENUE, WALLET_BALANCES
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.errors import InternalError
from simulator.services.sim.wallets import WatchedWallet, holdings


class WalletView(SnakeApiModel):
    label: str
    address: str
    name: str | None = Field(description="The simulated maker using it (alpha, ...)")
    native_wei: str
    tokens: dict[str, str] = Field(description="Token symbol -> balance in base units")


class ChainView(SnakeApiModel):
    chain_id: int
    block: int | None = Field(description="The head; null when the chain could not be read")
    error: str | None
    wallets: list[WalletView]


class ChainsView(ApiModel):
    chains: list[ChainView]


async def list_chains(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    names = request.app[MAKER_NAMES]
    wallets = [
        WatchedWallet(w.label, w.address, None)
        for w in (demo_wallet(i) for i in range(settings.funding.demo_wallets))
    ] + [
        WatchedWallet(w.label, w.address, names.name_of(w.address))
        for w in (maker_wallet(i) for i in range(settings.funding.makers))
    ]
    chains = {
        chain.chain_id: {t.symbol: t.address for t in chain.tokens}
        for chain in request.app[VENUE].chains.values()
    }
    found = await holdings(request.app[WALLET_BALANCES], chains, wallets)
    return data_response(
        ChainsView(
            chains=[
                ChainView(
                    chain_id=c.chain_id,
                    block=c.block,
                    error=c.error,
                    wallets=[
                        WalletView(
                            label=h.wallet.label,
                            address=h.wallet.address,
                            name=h.wallet.name,
                            native_wei=str(h.native_wei),
                            tokens={s: str(v) for s, v in h.tokens.items()},
                        )
                        for h in c.wallets
                    ],
                )
                for c in found
            ]
        )
    )


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim",))
    add(
        "GET",
        "/_sim/chains",
        list_chains,
        "simListChains",
        "Each chain's block number and the demo and maker wallets' native and token balances, "
        "read now (an unreadable chain has block null and its error)",
        responses={200: ChainsView},
        errors=(InternalError,),
    )
