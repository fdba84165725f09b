"""The sandbox as one object: config, clock, state, chain access, webhooks, transfer engine and
rate walk. The HTTP layers (api.py, controls.py) hold one of these; nothing is module-global."""

from __future__ import annotations

import asyncio
import logging
import random
from decimal import Decimal

from provider_sandbox.chain import SandboxChainAccess
from provider_sandbox.clock import SandboxClock
from provider_sandbox.config import SandboxConfig
from provider_sandbox.rates import RateWalk, mid_rate
from provider_sandbox.state import SETTLED, RuntimeSettings, SandboxState
from provider_sandbox.transfers import TransferEngine
from provider_sandbox.webhooks import WebhookSender

log = logging.getLogger("provider_sandbox")


class Sandbox:
    def __init__(self, config: SandboxConfig, clock: SandboxClock) -> None:
        self.config = config
        self.clock = clock
        self.state = self._fresh_state(random.Random(config.seed))
        self.walk = RateWalk(config.seed, config.rate_walk_per_minute)  # seeded rate noise
        self.chains = {
            c.chain_id: SandboxChainAccess(c, config.treasury_private_key) for c in config.chains
        }
        self.webhooks = WebhookSender(
            clock,
            lambda: self.state,
            config.webhook_url,
            config.webhook_secret,
            config.webhook_timeout_s,
        )
        self.engine = TransferEngine(config, clock, self.chains, self.webhooks, lambda: self.state)
        # Guards transfer creation across its chain read (a sell's deposit baseline), so two
        # creates with one reference or one quote cannot both pass the checks.
        self.create_lock = asyncio.Lock()

    def _fresh_state(self, rng: random.Random) -> SandboxState:
        return SandboxState(
            settings=RuntimeSettings.defaults(self.config),
            rng=rng,
            rate_epoch=self.clock.time(),
        )

    def reset(self) -> None:
        """Forget everything. The id generator carries on rather than restarting: a repeated
        id would collide with records the simulator still holds, and a repeated deposit
        address could still hold the last run's tokens."""
        self.state = self._fresh_state(self.state.rng)
        self.walk = RateWalk(self.config.seed, self.config.rate_walk_per_minute)
        self.webhooks.forget()
        self.engine.forget()

    def mid(self) -> Decimal:
        return mid_rate(
            self.walk, self.state.rate_epoch, self.clock.time(), self.state.settings.rate_shift
        )

    async def tick(self) -> None:
        """Catch every open transfer up with the clock and release held webhooks."""
        open_transfers = [t for t in self.state.transfers.values() if t.status not in SETTLED]
        for transfer in open_transfers:
            lock = self.engine.lock(transfer)
            if lock.locked():
                continue  # a request is refreshing it right now
            await self.engine.refresh(transfer)
        self.webhooks.release_due()

    async def run_ticks(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:  # one bad tick must not end progress for good
                log.exception("provider sandbox tick failed")
            await asyncio.sleep(self.config.tick_interval_s)

    async def close(self) -> None:
        for access in self.chains.values():
            await access.close()
