"""The ramp area as handlers and the wiring see it: its services, built together by
runtime/ramp.py `build_ramp` and reached through the `RAMP` app key."""

from __future__ import annotations

from dataclasses import dataclass

from simulator.services.ramp.access import RampGate
from simulator.services.ramp.catalog import ProviderDirectory, RampCatalog
from simulator.services.ramp.controls import RampControls
from simulator.services.ramp.customers import RampCustomers
from simulator.services.ramp.emails import Outbox
from simulator.services.ramp.reads import RampReads
from simulator.services.ramp.retry import RampRetries
from simulator.services.ramp.sweep import RampSweep
from simulator.services.ramp.tracking import TransferTracker
from simulator.services.ramp.transfers import RampTransfers
from simulator.services.ramp.webhooks import ProviderWebhooks
from simulator.services.shared.timelines import Timelines
from simulator.settings import RampSettings


@dataclass
class RampArea:
    settings: RampSettings
    providers: ProviderDirectory  # provider id -> port; ports attached by the provider runtime
    catalog: RampCatalog  # providers, banks, resolution, capability checks
    gate: RampGate  # sandbox flag, proof of control, provider: first checks of wallet calls
    customers: RampCustomers  # customer records; also the transfers' CustomerDirectory
    webhook_secret: str  # signs the provider's webhooks to /_provider/{provider}/webhooks
    transfers: RampTransfers  # creation (idempotent per intentKey)
    reads: RampReads  # reads (8 s re-check), list, support lookup
    retry: RampRetries  # stalled payout check and retry
    sweep: RampSweep  # background sweep and expiry (also calls customers.refresh_pending)
    emails: Outbox  # the three user emails, /_sim/outbox, optional SMTP
    webhooks: ProviderWebhooks  # inbound provider webhooks (/_provider/{provider}/webhooks)
    tracker: TransferTracker  # provider views applied forward only, re-checks, expiry
    history: Timelines  # every transfer's timeline (GET /_sim/transfers)
    controls: RampControls  # /_sim/ramp: the sandbox's controls under our ids; where it runs
