"""The description of a running simulator: printed as the banner, written to the ready file and
served at GET /_sim/info. One builder so the three can never disagree."""

from __future__ import annotations

import os
from typing import Any

from rfqkit.wallets import PROVIDER_TREASURY, demo_wallet, maker_wallet
from simulator import __version__
from simulator.services.shared.venue import VenueDirectory
from simulator.settings import Settings


def simulator_info(settings: Settings, venue: VenueDirectory, api_url: str) -> dict[str, Any]:
    chains = []
    for chain in sorted(venue.chains.values(), key=lambda c: c.chain_id):
        chains.append(
            {
                "chain_id": chain.chain_id,
                "environment": chain.environment,
                "name": chain.name,
                "rpc_url": chain.rpc_url,
                "managed": chain.managed,
                "min_size": str(chain.min_size),
                "contracts": {
                    "signature_transfer": chain.contracts.signature_transfer,
                    "reactor": chain.contracts.reactor,
                    "router": chain.contracts.router,
                    "wallet_factory": chain.contracts.wallet_factory,
                    "fee_recipient": chain.contracts.fee_recipient,
                },
                "tokens": [
                    {
                        "symbol": t.symbol,
                        "name": t.name,
                        "address": t.address,
                        "decimals": t.decimals,
                        "usdt_like": t.usdt_like,
                    }
                    for t in chain.tokens
                ],
                "corridors": [
                    {
                        "pair": c.pair_id,
                        "base": c.base.address,
                        "quote": c.quote.address,
                        "mode": c.timing.mode,
                        "reply_budget_ms": c.timing.reply_budget_ms,
                        "quote_ttl_s": c.timing.quote_ttl_s,
                        "preferred_wait_ms": c.timing.preferred_wait_ms,
                        "fee_bps": c.timing.fee_bps,
                    }
                    for c in chain.corridors
                ],
            }
        )
    funding = settings.funding
    fleet_names = {
        maker.wallet_index: maker.name
        for maker in (settings.makers.makers if settings.makers is not None else ())
        if maker.wallet_index is not None
    }
    return {
        "simulator": "rfqsim",
        "version": __version__,
        "api_url": api_url,
        # The console (/_sim/console) is part of the control API: none without it.
        "console_url": f"{api_url}/_sim/console" if settings.api.control_api else None,
        "pid": os.getpid(),
        "seed": settings.seed,
        "environment": settings.environment,
        "chains": chains,
        "chains_without_contracts": [
            {"chain_id": c.chain_id, "environment": c.environment, "name": c.name}
            for _, c in sorted(venue.without_contracts.items())
        ],
        "demo_wallets": [
            {"label": w.label, "address": w.address, "private_key": w.private_key}
            for w in (demo_wallet(i) for i in range(funding.demo_wallets))
        ],
        # Each maker wallet under the name the fleet (and its log lines) use for it, e.g. alpha
        # for maker-0; a wallet no configured maker uses keeps its wallet label.
        "maker_wallets": [
            {"label": w.label, "address": w.address, "name": fleet_names.get(i)}
            for i, w in enumerate(maker_wallet(i) for i in range(funding.makers))
        ],
        "funding": {
            "native_wei": str(funding.native_wei),
            "native": funding.native_wei // 10**18,
            "token_whole_units": funding.token_whole_units,
        },
        "provider_treasury": PROVIDER_TREASURY.address,
    }
