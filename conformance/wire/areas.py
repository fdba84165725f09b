"""The areas of the conformance suite: which test modules make up each area of the spec. Used by
`rfqsim conformance --only AREA` and by the report's per-area summary."""

from __future__ import annotations

# --only AREA: which test modules make up each area of the spec.
AREAS: dict[str, tuple[str, ...]] = {
    "conventions": (
        "test_conventions.py",
        "test_health.py",
        "test_openapi.py",
        "test_versioning.py",
    ),
    "auth": (
        "test_auth_proofs_eoa.py",
        "test_auth_proofs_smart_accounts.py",
        "test_auth_keys.py",
        "test_claims.py",
        "test_auth_matrix.py",
    ),
    "limits": (
        "test_rate_limits.py",
        "test_rfq_concurrency.py",
        "test_rate_limits_instances.py",
        "test_limits_public.py",
    ),
    "rfq": (
        "test_rfq_settlement_single_maker.py",
        "test_rfq_settlement_bundles.py",
        "test_rfq_settlement_contract_callers.py",
        "test_rfq_paths_validation.py",
        "test_rfq_paths_no_quote.py",
        "test_rfq_paths_funds.py",
        "test_rfq_paths_transient.py",
        "test_rfq_steering.py",
        "test_rfq_lifecycle.py",
        "test_rfq_ladder_preview.py",
        "test_rfq_corrections.py",
        "test_rfq_soliciting.py",
        "test_maker_stream_protocol.py",
    ),
    "timing": ("test_timing_budgets.py",),
    "webhooks": (
        "test_webhooks_registry.py",
        "test_webhooks_delivery.py",
        "test_webhooks_fill_events.py",
        "test_webhooks_rfq_events.py",
    ),
    "ramp": (
        "test_ramp_catalog.py",
        "test_ramp_customers_registration.py",
        "test_ramp_customers_proofs.py",
        "test_ramp_customers_kyc.py",
        "test_ramp_transfers.py",
        "test_ramp_transfers_reads.py",
        "test_ramp_transfers_lifecycle.py",
        "test_ramp_transfers_errors.py",
        "test_ramp_transfers_production.py",
        "test_ramp_policies.py",
    ),
    "feed": ("test_feed_pairs_tickers.py", "test_feed_trades.py", "test_feed_errors.py"),
    "v1": (
        "test_v1_auth.py",
        "test_v1_limits.py",
        "test_v1_status.py",
        "test_v1_corridors.py",
        "test_v1_idempotency.py",
        "test_v1_openapi.py",
        "test_v1_limit_orders_place.py",
        "test_v1_limit_orders_quote.py",
        "test_v1_limit_orders_records.py",
        "test_v1_limit_orders_states.py",
        "test_v1_limit_orders_lifecycle.py",
        "test_v1_book_orderbook.py",
        "test_v1_book_access.py",
        "test_v1_swaps_create.py",
        "test_v1_swaps_lifecycle.py",
    ),
    "schema": ("test_schemathesis.py",),
    "sim": ("test_sim_clock.py", "test_sim_info.py"),
}


def area_of(nodeid: str) -> str:
    """The area of a test by its module's file name; "other" for a module no area lists."""
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    for area, modules in AREAS.items():
        if module in modules:
            return area
    return "other"
