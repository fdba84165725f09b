"""The mutations ``just mutants`` runs: plausible bugs of a real deployment, each breaking one
statement of the spec (the first 36 are the ones the conformance-against-a-real-deployment
issue measured; the next were added with it, the last breaking ones for the areas that had
few or none: the maker stream, the webhook registry, the ramp and v1). :func:`all_mutations`
gives fresh instances.
"""

from __future__ import annotations

from conformance.mutants import rewrites as r
from conformance.mutants.area_catalogue import area_mutations
from conformance.mutants.mutations import (
    Mutation,
    drop_header,
    error_answer,
    firm,
    no_quote,
    recode,
    record_status,
    rewrite_data,
    rewrite_error,
    set_status_and_data,
)

RFQ_FLOW = ("test_rfq_settlement_single_maker.py", "test_rfq_lifecycle.py")
ERRORS = ("test_conventions.py", "test_claims.py", "test_rfq_paths_validation.py")


def all_mutations() -> list[Mutation]:
    """Fresh instances (a mutation with memory starts empty)."""
    m = Mutation
    return [
        m(
            "drop_request_id",
            "rfq/overview/conventions/every-response-carries-x-request-id",
            r.always,
            drop_header("X-Request-Id"),
            ("test_conventions.py",),
        ),
        m(
            "claim_wrong_token_403",
            "rfq/errors/404-not_found: ownership-scoped, never 403",
            r.claim_404,
            recode(403, "forbidden"),
            ("test_claims.py",),
        ),
        m(
            "no_retry_after_on_429",
            "rfq/limits: Retry-After on the time-window 429s",
            error_answer(429),
            drop_header("Retry-After"),
            ("test_rate_limits.py", "test_limits_public.py"),
        ),
        m(
            "no_quote_as_400",
            "rfq/endpoints/behaviour-3: a no-quote is HTTP 200",
            no_quote,
            r.no_quote_400,
            ("test_rfq_paths_no_quote.py", "test_claims.py", "test_auth_proofs_eoa.py"),
        ),
        m(
            "taker_pays_over_cap",
            "firm quote takerPays: never more than the requested sellAmount",
            r.exact_input_firm,
            r.taker_pays_over_cap,
            RFQ_FLOW,
        ),
        m(
            "released_renamed",
            "rfq/states: the cancel response reports status released",
            r.cancelled,
            rewrite_data(r.cancel_status),
            ("test_rfq_lifecycle.py", "test_claims.py", "test_limits_public.py"),
        ),
        m(
            "firm_request_201",
            "rfq/endpoints/post-v2-rfq-request: firm quote, status 200",
            firm,
            r.answer_201,
            RFQ_FLOW,
        ),
        m(
            "ramp_status_backwards",
            "ramp/states: statuses are forward-only",
            r.ramp_read,
            r.ramp_backwards(),
            ("test_ramp_transfers_lifecycle.py",),
        ),
        m(
            "error_text_plain",
            "rfq/errors/envelope: error bodies are the JSON envelope",
            r.api_error,
            r.text_plain,
            ERRORS,
        ),
        m(
            "error_request_id_mismatch",
            "rfq/errors: request_id equals the X-Request-Id header",
            r.api_error,
            rewrite_error(r.request_id_mismatch),
            ERRORS,
        ),
        m(
            "unknown_path_400",
            "rfq/errors/404-not_found for an unknown path",
            r.unknown_path,
            recode(400, "invalid_request"),
            ("test_conventions.py",),
        ),
        m(
            "method_405_without_allow",
            "405 method_not_allowed carries Allow",
            error_answer(405),
            drop_header("Allow"),
            ("test_conventions.py",),
        ),
        m(
            "payload_413_as_400",
            "413 payload_too_large for a body over 1 MiB",
            error_answer(413),
            recode(400, "invalid_request"),
            ("test_conventions.py",),
        ),
        m(
            "validation_without_issues",
            "rfq/errors: details.issues names the offending fields",
            r.validation,
            rewrite_error(r.drop_issues),
            ("test_rfq_paths_validation.py", "test_claims.py"),
        ),
        m(
            "no_ratelimit_headers",
            "rfq/limits: X-RateLimit-* on every response of the limiter",
            r.rfq_success,
            r.drop_rate_headers,
            ("test_rate_limits.py", "test_limits_public.py"),
        ),
        m(
            "unknown_key_403",
            "rfq/auth/api-keys: an unknown or revoked key is 401",
            error_answer(401, "unauthorized"),
            r.unknown_key_403,
            ("test_auth_keys.py",),
        ),
        m(
            "ratelimit_headers_on_401",
            "rfq/limits: X-RateLimit-* absent on a bad key's 401",
            error_answer(401),
            r.ip_backstop_headers,
            ("test_auth_keys.py",),
        ),
        m(
            "health_time_not_utc",
            "rfq/overview/conventions: timestamps are ISO-8601 UTC",
            r.health,
            rewrite_data(r.health_time_local),
            ("test_health.py",),
        ),
        m(
            "amount_as_number",
            "rfq/overview/conventions: amounts are base-10 strings",
            firm,
            rewrite_data(r.not_base10),
            RFQ_FLOW,
        ),
        m(
            "quote_expires_beyond_ttl",
            "rfq/limits/quote-ttl: 60 s cap",
            firm,
            rewrite_data(r.expires_late),
            ("test_timing_budgets.py", *RFQ_FLOW),
        ),
        m(
            "ladder_levels_reversed",
            "rfq levels: both columns increasing together",
            r.ladder,
            rewrite_data(r.levels_reversed),
            ("test_rfq_ladder_preview.py",),
        ),
        m(
            "ladder_stale_asof",
            "rfq/limits/ladder-cache: about 2 s",
            r.ladder,
            rewrite_data(r.levels_stale),
            ("test_rfq_ladder_preview.py", "test_timing_budgets.py"),
        ),
        m(
            "ladder_one_direction",
            "rfq levels: every pair appears in both directions",
            r.ladder,
            rewrite_data(r.drop_reverse_pairs),
            ("test_rfq_ladder_preview.py",),
        ),
        m(
            "swap_value_nonzero",
            "unsigned transaction: value always 0",
            firm,
            rewrite_data(r.swap_value),
            RFQ_FLOW,
        ),
        m(
            "approval_wrong_chain",
            "unsigned transaction: chainId of the request",
            firm,
            rewrite_data(r.approval_wrong_chain),
            RFQ_FLOW,
        ),
        m(
            "firm_without_claim_token",
            "firm quote: claimToken returned exactly once",
            firm,
            rewrite_data(r.no_claim_token),
            RFQ_FLOW,
        ),
        m(
            "record_leaks_claim_token",
            "RFQ record: the claim token is never returned by GET",
            record_status,
            rewrite_data(r.claim_in_record),
            RFQ_FLOW,
        ),
        m(
            "record_status_uppercase",
            "RFQ record: status enum",
            record_status,
            rewrite_data(r.uppercase_status),
            RFQ_FLOW,
        ),
        m(
            "fee_outside_taker_pays",
            "quote feeAmount: already inside takerPays",
            firm,
            rewrite_data(r.fee_outside),
            RFQ_FLOW,
        ),
        m(
            "no_quote_reason_renamed",
            "no-quote reasons",
            no_quote,
            rewrite_data(r.no_quote_reason),
            ("test_rfq_paths_no_quote.py", "test_claims.py", "test_auth_proofs_eoa.py"),
        ),
        m(
            "submit_bad_hash_accepted",
            "submit: txHash is a 0x-prefixed 32-byte hash (400)",
            r.submit_400,
            set_status_and_data(200, {"status": "submitted"}),
            ("test_claims.py", "test_rfq_lifecycle.py"),
        ),
        m(
            "cancel_conflict_as_200",
            "rfq/states/rule-1: cancel of an RFQ not quoted is 409",
            r.cancel_409,
            r.cancel_released,
            ("test_claims.py", "test_rfq_lifecycle.py"),
        ),
        m(
            "feed_timestamp_ms",
            "v1/feed: trade_timestamp in Unix seconds",
            r.trades,
            r.feed_ms,
            ("test_feed_trades.py",),
        ),
        m(
            "feed_tickers_wrapped",
            "v1/feed: /tickers answers a top-level array",
            r.tickers,
            r.feed_wrapped,
            ("test_feed_pairs_tickers.py",),
        ),
        # Added with the issue on cross-field and read-twice checks.
        m(
            "feed_trades_oldest_first",
            "v1/feed: /historical_trades lists each side newest first",
            r.trades,
            r.feed_oldest_first,
            ("test_feed_trades.py",),
        ),
        m(
            "feed_ticker_sides_inverted",
            "v1/feed: a ticker's bid (selling the base) is not above its ask",
            r.tickers,
            r.tickers_sides_inverted,
            ("test_feed_pairs_tickers.py",),
        ),
        m(
            "rfq_created_at_moves",
            "rfq record: createdAt is when the RFQ was made, the same on every read",
            record_status,
            rewrite_data(r.created_moves),
            ("test_rfq_lifecycle.py", "test_rfq_settlement_single_maker.py"),
        ),
        m(
            "webhook_list_shows_secret",
            "webhook endpoint: signingSecret only at creation",
            r.webhook_list,
            r.webhook_secret_listed,
            ("test_webhooks_registry.py",),
        ),
        m(
            "stale_proof_as_invalid",
            "rfq/auth/proof-of-control/rule-6: proof_of_control_stale",
            r.stale_proof,
            rewrite_error(r.invalid_reason),
            ("test_auth_proofs_eoa.py",),
        ),
        # Added with the issue's 36.
        m(
            "feed_error_envelope",
            "v1/errors/rates-feed-errors: body {error: <string>}",
            r.feed_error,
            r.feed_error_envelope,
            ("test_feed_errors.py",),
        ),
        m(
            "openapi_without_errors",
            "every operation documents its error responses",
            r.openapi,
            r.openapi_no_errors,
            ("test_openapi.py",),
        ),
        m(
            "ratelimit_remaining_constant",
            "rfq/limits: X-RateLimit-Remaining is what is left",
            r.success,
            r.rate_remaining_constant,
            ("test_rate_limits.py", "test_limits_public.py"),
        ),
        m(
            "ramp_providers_unwrapped",
            "ramp endpoints: GET /v2/ramp/providers is {providers}",
            r.providers,
            r.providers_unwrapped,
            ("test_ramp_catalog.py",),
        ),
        *area_mutations(),
        # Equivalent: changes the spec allows; a suite that fails on them is stricter than it.
        m(
            "addresses_lowercased",
            "rfq/overview/conventions: either address form is allowed",
            r.json_answer,
            r.lowercase_addresses,
            (*RFQ_FLOW, "test_rfq_ladder_preview.py", "test_claims.py"),
            equivalent=True,
        ),
        m(
            "extra_success_field",
            "the spec's tables name the fields a body has, not that there are no others",
            firm,
            rewrite_data(r.extra_field),
            RFQ_FLOW,
            equivalent=True,
        ),
    ]
