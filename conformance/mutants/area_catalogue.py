"""The mutations that break the maker stream, the webhook registry, the ramp's transfers and
the v1 API (issue 34: the areas that had few or none), part of
:func:`conformance.mutants.catalogue.all_mutations`."""

from __future__ import annotations

from conformance.mutants import area_rewrites as a
from conformance.mutants import rewrites as r
from conformance.mutants.mutations import (
    Mutation,
    drop_header,
    leave,
    never,
    recode,
    rewrite_data,
)

STREAM = ("test_maker_stream_protocol.py",)
RAMP_VIEWS = ("test_ramp_transfers.py", "test_ramp_transfers_reads.py")
# The maker stream's mutations are scored on their own, not with the rest of the rfq area.
MAKER_STREAM = "maker stream"


def area_mutations() -> list[Mutation]:
    """Fresh instances (a mutation with memory starts empty)."""
    m = Mutation
    return [
        m(
            "stream_unauthenticated_403",
            "rfq/errors/401-unauthorized: a missing, unknown or malformed key is 401, not 403",
            a.stream_refused(401),
            recode(403, "forbidden"),
            STREAM,
            area=MAKER_STREAM,
        ),
        m(
            "stream_taker_key_401",
            "rfq/auth/api-keys: a key without the scope (a taker key on the stream) is 403",
            a.stream_refused(403),
            recode(401, "unauthorized"),
            STREAM,
            area=MAKER_STREAM,
        ),
        m(
            "stream_refusal_text_plain",
            "rfq/errors/envelope: the stream's refusals are error bodies like any other",
            a.stream_refused(),
            a.plain_refusal,
            STREAM,
            area=MAKER_STREAM,
        ),
        m(
            "stream_refusal_without_request_id",
            "rfq/overview/conventions: every response carries X-Request-Id (the stream's too)",
            a.stream_refused(),
            drop_header("X-Request-Id"),
            STREAM,
            area=MAKER_STREAM,
        ),
        m(
            "stream_ratelimit_headers_on_401",
            "rfq/limits: X-RateLimit-* absent on a bad key's 401 (the stream's too)",
            a.stream_keyed_401,
            r.ip_backstop_headers,
            STREAM,
            area=MAKER_STREAM,
        ),
        m(
            "stream_maker_closed_at_once",
            "rfq/endpoints: WSS /v2/maker/stream is used by maker credentials (not closed on them)",
            never,
            leave,
            STREAM,
            rewrite_frame=a.close_at_once(),
            area=MAKER_STREAM,
        ),
        m(
            "webhook_created_200",
            "rfq/endpoints/post-v1-webhooks: 201 with the endpoint",
            a.webhook_created,
            r.answer_200,
            ("test_webhooks_registry.py", "test_webhooks_rfq_events.py"),
        ),
        m(
            "webhook_secret_not_the_signing_one",
            "rfq/events/signature: HMAC keyed with the endpoint's signingSecret (the one shown)",
            a.webhook_created,
            a.other_secret(),
            ("test_webhooks_rfq_events.py", "test_webhooks_delivery.py"),
        ),
        m(
            "webhook_list_row_disagrees",
            "rfq/endpoints/get-v1-webhooks: the partner's endpoints as made, without secrets",
            r.webhook_list,
            a.webhook_rows_default_types,
            ("test_webhooks_registry.py",),
        ),
        m(
            "webhook_delete_unknown_200",
            "rfq/endpoints/delete-v1-webhooks-id: 404 if unknown (or another partner's)",
            a.webhook_delete_404,
            a.deleted_anyway,
            ("test_webhooks_registry.py",),
        ),
        m(
            "webhook_http_url_accepted",
            "rfq/events: endpoint URLs must be https (400 otherwise)",
            a.https_refused,
            a.http_endpoint_made,
            ("test_webhooks_registry.py",),
        ),
        m(
            "ramp_created_at_moves",
            "ramp transfer: createdAt, the same on every read, the list and a replay",
            a.ramp_transfer_answer,
            a.ramp_created_moves,
            RAMP_VIEWS,
        ),
        m(
            "ramp_replay_same_claim_token",
            "ramp transfers: an idempotent replay returns a fresh claim token",
            a.ramp_created,
            a.first_claim_token(),
            RAMP_VIEWS,
        ),
        m(
            "ramp_wallet_view_requoted",
            "ramp masked views: only the payout account is masked; amounts in full",
            a.ramp_wallet_read,
            a.wallet_view_requoted,
            RAMP_VIEWS,
        ),
        m(
            "ramp_masked_account_in_full",
            "ramp masked views: the payout account number cut to its last four digits",
            a.ramp_transfer_answer,
            a.account_in_full(),
            RAMP_VIEWS,
        ),
        m(
            "ramp_list_oldest_first",
            "ramp: POST /v2/ramp/transfers/list is newest first",
            a.ramp_list,
            a.ramp_list_reversed,
            RAMP_VIEWS,
        ),
        m(
            "ramp_wrong_claim_403",
            "ramp/reading: a wrong id and a wrong token both answer 404",
            a.ramp_wrong_claim,
            recode(403, "forbidden"),
            RAMP_VIEWS,
        ),
        m(
            "v1_bad_key_403",
            "v1/auth/item-4: a missing, revoked or bad key is 401 (403 is a missing scope)",
            a.v1_unauthorized,
            recode(403, "forbidden"),
            ("test_v1_auth.py", "test_v1_corridors.py"),
        ),
        m(
            "v1_limit_orders_oldest_first",
            "v1: GET /v1/limit-orders lists the wallet's orders newest first",
            a.limit_order_list,
            a.v1_list_reversed,
            ("test_v1_limit_orders_records.py",),
        ),
        m(
            "v1_list_row_disagrees",
            "v1 limit order record: exactly the amounts the order named (its list row too)",
            a.limit_order_list,
            a.v1_rows_amounts_swapped,
            ("test_v1_limit_orders_records.py",),
        ),
        m(
            "v1_record_rates_swapped",
            "v1 limit order record: rateRay the book rate, executionRateRay the maker frame",
            a.limit_order_record,
            a.v1_rates_swapped,
            ("test_v1_limit_orders_place.py", "test_v1_limit_orders_records.py"),
        ),
        m(
            "v1_filled_without_settlement",
            "v1/states: FILLED once the fill reconciles, txHash and filledAt set",
            a.limit_order_read,
            a.v1_fill_unreconciled,
            ("test_v1_limit_orders_states.py", "test_v1_limit_orders_lifecycle.py"),
        ),
        m(
            "v1_status_not_derived_live",
            "v1: GET /v1/limit-orders status derived live (past deadline EXPIRED, spent CANCELLED)",
            a.limit_order_read,
            a.v1_stored_status,
            ("test_v1_limit_orders_states.py",),
        ),
        m(
            "v1_swap_value_nonzero",
            "v1 unsigned transaction: value always 0 for swaps",
            a.swap_created,
            rewrite_data(a.v1_swap_value),
            ("test_v1_swaps_create.py",),
        ),
        m(
            "v1_submit_other_hash_200",
            "v1/errors/409-conflict: a submit in a state that does not allow it",
            a.v1_submit_409,
            a.v1_submit_accepted,
            ("test_v1_swaps_create.py", "test_v1_swaps_lifecycle.py"),
        ),
        m(
            "v1_replay_made_again",
            "v1 Idempotency-Key: a retry with the same key replays the first response",
            a.idempotent_replay,
            a.replay_made_again(),
            ("test_v1_idempotency.py",),
        ),
    ]
