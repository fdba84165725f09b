"""HTTP handlers of the v2 ramp's transfers, the inbound provider webhooks and /_sim/outbox:
parse, call one service, render. Ramp bodies are not wrapped in `data`; no API key is
looked at."""

from __future__ import annotations

from aiohttp import web

from simulator.api.http.appkeys import RAMP
from simulator.api.http.parsing import parse_body, parse_query
from simulator.api.http.responses import body_response, data_response
from simulator.api.http.routes import RouteTable
from simulator.api.ramp import transfer_schemas as schemas
from simulator.api.ramp.handlers import COMMON_ERRORS, WALLET_ERRORS, wallet_call
from simulator.api.ramp.schemas import KycState
from simulator.errors import (
    InternalError,
    InvalidRequest,
    KycRequired,
    NotFound,
    PayloadTooLarge,
    ProviderDeclined,
    QuoteDrift,
    RampCustomerRequired,
    Unauthorized,
)
from simulator.services.ramp.access import WalletCall
from simulator.services.ramp.transfers import CreateRequest, PayoutRequest, TransferCreation
from simulator.services.ramp.webhooks import SIGNATURE_HEADER

WEBHOOK_MAX_BYTES = 1 << 20


def render_created(request: web.Request, created: TransferCreation) -> web.Response:
    ramp = request.app[RAMP]
    view = ramp.reads.view(created.record)
    return body_response(
        schemas.TransferCreated(
            transfer=schemas.Transfer.model_validate(view), claim_token=created.claim_token
        ),
        status=201,
    )


async def create_transfer(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.TransferBody)
    payout = body.payout
    created = await request.app[RAMP].transfers.create(
        CreateRequest(
            call=wallet_call(request, body, body.provider),
            side=body.side,
            fiat=body.fiat,
            token=body.token,
            amount=body.amount,
            intent_key=body.intent_key,
            email=body.email,
            accepted_terms=body.accepted_terms,
            expected_target_amount=body.expected_target_amount,
            payout=PayoutRequest(
                bank_code=payout.bank_code,
                account_number=payout.account_number,
                account_name=payout.account_name,
                provider_recipient_id=payout.provider_recipient_id,
            )
            if payout is not None
            else None,
        )
    )
    return render_created(request, created)


async def get_transfer(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.TransferQuery)
    view = await request.app[RAMP].reads.read(
        request.match_info["transfer_id"],
        claim=request.headers.get("X-Ramp-Claim"),
        wallet=query.wallet,
    )
    return body_response(schemas.TransferResult(transfer=schemas.Transfer.model_validate(view)))


async def list_transfers(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.ListBody)
    page = request.app[RAMP].reads.list(body.wallet, body.first, body.after)
    return body_response(
        schemas.TransferList(
            transfers=[schemas.Transfer.model_validate(v) for v in page.transfers],
            next_cursor=page.next_cursor,
        )
    )


async def support_transfer(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.SupportBody)
    view = request.app[RAMP].reads.support(body.reference)
    return body_response(schemas.TransferResult(transfer=schemas.Transfer.model_validate(view)))


def _retry_call(request: web.Request, body: schemas.RetryBody) -> WalletCall:
    """`wallet_call`, with the provider defaulting to the transfer's own."""
    transfer_id = request.match_info["transfer_id"]
    provider = body.provider or request.app[RAMP].reads.provider_of(transfer_id)
    return wallet_call(request, body, provider)


async def retry_check(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.RetryBody)
    found = await request.app[RAMP].retry.check(
        request.match_info["transfer_id"], _retry_call(request, body)
    )
    return body_response(schemas.RetryEligibility.model_validate(found))


async def retry_payout(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.RetryBody)
    created = await request.app[RAMP].retry.retry(
        request.match_info["transfer_id"], _retry_call(request, body)
    )
    return render_created(request, created)


async def provider_webhook(request: web.Request) -> web.Response:
    """RA28: the raw bytes are what the signature covers, so they are read before any parsing."""
    raw = await request.read()
    if len(raw) > WEBHOOK_MAX_BYTES:
        raise PayloadTooLarge(f"Webhook body exceeds {WEBHOOK_MAX_BYTES} bytes")
    receipt = request.app[RAMP].webhooks.receive(
        request.match_info["provider"], raw, request.headers.get(SIGNATURE_HEADER)
    )
    return body_response(
        schemas.WebhookAck(received=True, event_id=receipt.event_id, outcome=receipt.outcome)
    )


async def list_outbox(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.OutboxQuery)
    found = request.app[RAMP].emails.find(to=query.to, transfer_id=query.transfer_id)
    return data_response(
        schemas.OutboxList(emails=[schemas.OutboxEmail.model_validate(e) for e in found])
    )


async def clear_outbox(request: web.Request) -> web.Response:
    return data_response(schemas.OutboxCleared(deleted=request.app[RAMP].emails.clear()))


# Creation can end in every row of the ramp error table but 429-with-key semantics.
CREATE_ERRORS = (
    *WALLET_ERRORS,
    RampCustomerRequired,
    QuoteDrift,
    KycRequired,
    ProviderDeclined,
)


def add_routes(table: RouteTable) -> None:
    add = table.adder("v2", ("ramp",), envelope=False, access=None)
    add(
        "POST",
        "/v2/ramp/transfers",
        create_transfer,
        "rampCreateTransfer",
        "Lock the price, register the payout recipient (sell), create the transfer",
        body=schemas.TransferBody,
        responses={201: schemas.TransferCreated},
        errors=CREATE_ERRORS,
        error_members={"kyc": KycState},
    )
    add(
        "GET",
        "/v2/ramp/transfers/{transfer_id}",
        get_transfer,
        "rampGetTransfer",
        "A transfer: the full view with X-Ramp-Claim, the masked view with ?wallet=",
        query=schemas.TransferQuery,
        responses={200: schemas.TransferResult},
        errors=(InvalidRequest, NotFound, *COMMON_ERRORS),
        # The claim header gives the full view; `?wallet=` alone (no credential, the `{}`
        # alternative) the masked one.
        security=("rampClaim", ""),
        # `list` is POST /v2/ramp/transfers/list, not a transfer id: without this a GET or an
        # OPTIONS there would match this route and advertise GET (the OpenAPI path is unchanged).
        route_path="/v2/ramp/transfers/{transfer_id:(?!list$)[^/]+}",
    )
    add(
        "POST",
        "/v2/ramp/transfers/list",
        list_transfers,
        "rampListTransfers",
        "A wallet's transfers, newest first, masked (no signature)",
        body=schemas.ListBody,
        responses={200: schemas.TransferList},
        errors=(InvalidRequest, PayloadTooLarge, *COMMON_ERRORS),
    )
    add(
        "POST",
        "/v2/ramp/transfers/{transfer_id}/retry-payout/check",
        retry_check,
        "rampRetryPayoutCheck",
        "Whether a payout stalled at funds_converted can be retried now",
        body=schemas.RetryBody,
        responses={200: schemas.RetryEligibility},
        errors=WALLET_ERRORS,
    )
    add(
        "POST",
        "/v2/ramp/transfers/{transfer_id}/retry-payout",
        retry_payout,
        "rampRetryPayout",
        "Pay the parked balance of a stalled payout to the original destination",
        body=schemas.RetryBody,
        responses={201: schemas.TransferCreated},
        errors=(*WALLET_ERRORS, ProviderDeclined),
    )
    add(
        "POST",
        "/v2/ramp/support/transfer",
        support_transfer,
        "rampSupportTransfer",
        "Support lookup: our id or the provider's reference; a masked transfer",
        body=schemas.SupportBody,
        responses={200: schemas.TransferResult},
        errors=(InvalidRequest, PayloadTooLarge, NotFound, *COMMON_ERRORS),
    )
    # RA28: the provider's inbound webhooks; in the "sim" document, never the public v2 one.
    table.adder("sim", ("provider",), envelope=False)(
        "POST",
        "/_provider/{provider}/webhooks",
        provider_webhook,
        "providerWebhook",
        "Inbound provider status webhook (HMAC-signed; not part of the public API)",
        responses={200: schemas.WebhookAck},
        errors=(InvalidRequest, Unauthorized, NotFound, PayloadTooLarge, InternalError),
    )
    sim = table.adder("sim", ("sim",))
    sim(
        "GET",
        "/_sim/outbox",
        list_outbox,
        "simOutbox",
        "Ramp emails sent (filters: to, transferId)",
        query=schemas.OutboxQuery,
        responses={200: schemas.OutboxList},
        errors=(InvalidRequest, InternalError),
    )
    sim(
        "DELETE",
        "/_sim/outbox",
        clear_outbox,
        "simClearOutbox",
        "Forget every ramp email in the outbox",
        responses={200: schemas.OutboxCleared},
        errors=(InternalError,),
    )
