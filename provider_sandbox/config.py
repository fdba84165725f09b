"""Start-up configuration of the provider sandbox. The defaults are the ones documented in
docs/provider-sandbox.md; everything a test may want to change at runtime lives in
`state.RuntimeSettings` instead (PUT /sandbox/config, /sandbox/switches)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from rfqkit.wallets import PROVIDER_TREASURY

NETWORK_NAMES = {
    56: "bnb-smart-chain",
    97: "bnb-testnet",
}  # the chains' `name` in simulator settings


@dataclass(frozen=True)
class SandboxChain:
    chain_id: int
    rpc_url: str
    network: str  # "bnb-smart-chain" for 56, "bnb-testnet" for 97 (payIn/payOut `network`)
    token_address: str  # NGNS on that chain
    token_decimals: int = 6  # NGNS decimals


@dataclass
class SandboxConfig:
    chains: tuple[SandboxChain, ...]  # chains the sandbox can settle on (it needs RPC for each)
    host: str = "127.0.0.1"  # loopback: the controls have no authentication
    port: int = 0  # 0 = a free port
    # Host names answered besides loopback names, IP addresses and `host` (rfqkit/local_guard.py)
    allowed_hosts: tuple[str, ...] = ()
    api_key: str = "sk_sandbox_rfqsim"  # bearer key of /api/v1
    webhook_url: str | None = None  # where status webhooks go; None = nowhere (logged as dropped)
    webhook_secret: str = "whsec_sandbox_rfqsim"  # HMAC key for X-Provider-Signature
    seed: int = 0  # seeds ids, account numbers, deposit keys and rate noise
    treasury_private_key: str = PROVIDER_TREASURY.private_key  # pays buys, sends sell shortcuts
    provider_id: str = "ngnramp"  # `provider` in capabilities
    display_name: str = "NGN Ramp (simulated provider)"  # `displayName` in capabilities
    fiat: str = "NGN"  # the corridor's fiat code
    token: str = "NGNS"  # the corridor's token code
    # Live chains default to every configured chain that is on the documented list [56, 97];
    # None means exactly that, a tuple overrides it.
    live_chains: tuple[int, ...] | None = None
    sandbox_chains: tuple[int, ...] | None = None  # None = [97] if configured
    max_buy: Decimal = Decimal("5000000")  # single-deposit cap in NGN
    buy_fee_percent: Decimal = Decimal("1.0")  # of the converted amount, in NGNS
    buy_fee_flat: Decimal = Decimal("100")  # NGNS
    sell_fee_percent: Decimal = Decimal("0.5")  # of the converted amount, in NGN
    sell_fee_flat: Decimal = Decimal("50")  # NGN
    buy_spread: Decimal = Decimal("0.995")  # buy rate = (1 / mid) x spread
    sell_spread: Decimal = Decimal("0.995")  # sell rate = mid x spread
    rate_walk_per_minute: float = 0.001  # the random walk's largest step per clock minute
    review_delay_s: float = 30.0  # clock seconds until a KYC outcome shows
    step_delay_s: float = 5.0  # clock seconds per provider status step after pay-in
    payment_window_s: float = 1800.0  # expiresAt = createdAt + this
    quote_ttl_s: float = 60.0  # a quote is locked this long
    api_latency_ms: int = 0  # wall-clock delay before every API answer
    tick_interval_s: float = 0.25  # wall seconds between background ticks
    webhook_timeout_s: float = 5.0  # a webhook POST is given up after this (no retries)

    def chain(self, chain_id: int) -> SandboxChain | None:
        return next((c for c in self.chains if c.chain_id == chain_id), None)

    def default_live_chains(self) -> list[int]:
        if self.live_chains is not None:
            return list(self.live_chains)
        return [c.chain_id for c in self.chains if c.chain_id in NETWORK_NAMES]

    def default_sandbox_chains(self) -> list[int]:
        if self.sandbox_chains is not None:
            return list(self.sandbox_chains)
        return [c.chain_id for c in self.chains if c.chain_id == 97]
