"""build_ramp: the ramp area's services wired together (reached by handlers through the `RAMP`
app key); the provider's webhook secret."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from simulator.clock import Clock
from simulator.randomness import RandomSource, secret_token
from simulator.services.access.proofs import ProofService
from simulator.services.ramp.access import RampGate
from simulator.services.ramp.area import RampArea
from simulator.services.ramp.catalog import CatalogSettings, ProviderDirectory, RampCatalog
from simulator.services.ramp.controls import RampControls
from simulator.services.ramp.customers import CustomerSettings, CustomersSaved, RampCustomers
from simulator.services.ramp.emails import EmailsSaved, Outbox, SmtpTarget
from simulator.services.ramp.ports import ProviderTransfer
from simulator.services.ramp.reads import RampReads
from simulator.services.ramp.retry import RampRetries, RetriesSaved, RetrySettings
from simulator.services.ramp.store import TransferStore, TransferStoreSaved
from simulator.services.ramp.sweep import RampSweep, RampSweepSaved
from simulator.services.ramp.tracking import TrackingSettings, TransferTracker
from simulator.services.ramp.transfers import RampTransfers, TransferSettings
from simulator.services.ramp.webhooks import ProviderWebhooks, ProviderWebhooksSaved
from simulator.services.shared.state import SavedAttributes, StateParticipant
from simulator.services.shared.timelines import Timelines, TimelineState
from simulator.settings import RampSettings

# `python -m provider_sandbox serve`'s default --webhook-secret: what an external sandbox signs
# with unless both sides are configured otherwise.
EXTERNAL_SANDBOX_SECRET = "whsec_sandbox_rfqsim"


def provider_webhook_secret(settings: RampSettings) -> str:
    """The configured secret; else, with `--provider-url`, the external sandbox's default; else
    a fresh secret (never seeded: randomness.py) that rfqsim hands to the sandbox it starts."""
    if settings.webhook_secret is not None:
        return settings.webhook_secret
    if settings.provider_url is not None:
        return EXTERNAL_SANDBOX_SECRET
    return secret_token("whsec_")


def build_ramp(
    settings: RampSettings,
    clock: Clock,
    random: RandomSource,
    proofs: ProofService,
    *,
    production: bool,
    parse_transfer: Callable[[dict[str, Any]], ProviderTransfer],
    token_decimals: dict[str, int] | None = None,
    history: Timelines,
) -> RampArea:
    """`parse_transfer` reads the provider's transfer object (the provider adapter's parser),
    for inbound webhooks; `token_decimals` the chains' token decimals (RA12 amount checks)."""
    providers = ProviderDirectory([settings.provider_id])
    catalog = RampCatalog(
        clock,
        providers,
        CatalogSettings(production=production, banks_cache_s=settings.banks_cache_s),
    )
    gate = RampGate(proofs, catalog)
    customers = RampCustomers(
        clock,
        random.fork("ramp-customers"),
        gate,
        catalog,
        CustomerSettings(kyc_reread_s=settings.kyc_reread_s),
    )
    # transfers helper: the transfer services.
    webhook_secret = provider_webhook_secret(settings)
    outbox = Outbox(
        clock,
        random.fork("ramp-emails"),
        settings.reopen_url_base,
        smtp=SmtpTarget.parse(settings.smtp) if settings.smtp else None,
    )
    store = TransferStore()
    tracker = TransferTracker(
        clock,
        providers.attached,
        outbox,
        TrackingSettings(
            recheck_s=settings.recheck_s,
            expire_after_s=settings.expire_after_s,
            recheck_days=settings.recheck_days,
        ),
        history,
    )
    transfers = RampTransfers(
        clock,
        random.fork("ramp-transfers"),
        gate,
        catalog,
        customers,
        store,
        tracker,
        outbox,
        TransferSettings(drift_bound=Decimal(str(settings.drift_bound))),
        decimals=token_decimals,
    )
    reads = RampReads(store, tracker, catalog)
    retry = RampRetries(
        clock,
        random.fork("ramp-retry"),
        gate,
        customers,
        store,
        tracker,
        RetrySettings(retry_after_s=settings.retry_after_s),
    )
    sweep = RampSweep(clock, store, tracker, customers, interval_s=settings.sweep_interval_s)
    webhooks = ProviderWebhooks(
        store, tracker, {settings.provider_id: webhook_secret}, parse_transfer
    )
    return RampArea(
        settings=settings,
        providers=providers,
        catalog=catalog,
        gate=gate,
        customers=customers,
        # A secret is never seeded (randomness.py): a fresh one per run unless configured.
        webhook_secret=webhook_secret,
        transfers=transfers,
        reads=reads,
        retry=retry,
        sweep=sweep,
        emails=outbox,
        webhooks=webhooks,
        tracker=tracker,
        history=history,
        controls=RampControls(settings.provider_id, webhook_secret, reads, customers),
    )


def ramp_state(area: RampArea) -> list[StateParticipant]:
    """Transfers, customers, emails and what the background work remembers. The catalog's bank
    list is a cache of the provider's answer, not state."""
    return [
        SavedAttributes("ramp.transfers", area.transfers.store, TransferStoreSaved),
        SavedAttributes("ramp.customers", area.customers, CustomersSaved),
        SavedAttributes("ramp.emails", area.emails, EmailsSaved),
        SavedAttributes("ramp.retry", area.retry, RetriesSaved),
        SavedAttributes("ramp.sweep", area.sweep, RampSweepSaved),
        SavedAttributes("ramp.webhooks", area.webhooks, ProviderWebhooksSaved),
        TimelineState("ramp.timelines", area.history),
    ]
