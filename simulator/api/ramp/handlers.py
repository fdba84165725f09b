"""HTTP handlers of the v2 ramp's discovery, customer and KYC operations: parse, call one
service, render. Bodies are not wrapped in `data`; no API key is looked at
(RA4: only the per-IP backstop applies). `wallet_call` is shared with the transfer handlers."""

from __future__ import annotations

from typing import Protocol

from aiohttp import web

from simulator.api.access.middleware import client_ip
from simulator.api.http.appkeys import RAMP
from simulator.api.http.parsing import ProofFields, parse_body, parse_query, taker_proof
from simulator.api.http.responses import body_response
from simulator.api.http.routes import RouteTable
from simulator.api.ramp import schemas
from simulator.errors import (
    Forbidden,
    InternalError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    ProviderDeclined,
    RateLimited,
    Unauthorized,
    UpstreamError,
)
from simulator.services.ramp.access import WalletCall
from simulator.services.ramp.ports import CustomerAddress, KycDocument, PersonDetails

# RA11: the kyc route's transport cap. Three maximal images need about 17 MiB; the rest is room
# so that an oversize image of any plausible size is still read, parsed and answered 400 naming
# its field (the spec's rule), rather than cut off as 413 before anyone looks at which field.
KYC_BODY_MAX_BYTES = 64 * 1024 * 1024


class WalletFields(Protocol):
    """What a wallet-naming ramp POST carries (WalletBody, and the retry bodies whose provider
    is optional)."""

    @property
    def wallet(self) -> str: ...

    @property
    def chain_id(self) -> int: ...

    @property
    def proof(self) -> ProofFields | None: ...

    @property
    def sandbox(self) -> bool: ...


def wallet_call(request: web.Request, body: WalletFields, provider: str) -> WalletCall:
    """The caller of a wallet-naming ramp POST; the proof nonce binds to the client IP (no key
    is involved on the ramp)."""
    return WalletCall(
        provider=provider,
        wallet=body.wallet,
        chain_id=body.chain_id,
        proof=taker_proof(body.proof),
        caller=f"ip:{client_ip(request)}",
        sandbox=body.sandbox,
    )


async def list_providers(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.ProvidersQuery)
    listed = await request.app[RAMP].catalog.listings(
        fiat=query.fiat,
        token=query.token,
        chain_id=query.chain_id,
        side=query.side,
        sandbox=query.sandbox,
    )
    return body_response(
        schemas.ProvidersList(
            providers=[schemas.RampProviderItem.model_validate(c) for c in listed]
        )
    )


async def list_banks(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.BanksQuery)
    banks = await request.app[RAMP].catalog.banks(query.provider, sandbox=query.sandbox)
    return body_response(
        schemas.BankList(banks=[schemas.BankItem(code=b.code, name=b.name) for b in banks])
    )


async def resolve_account(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.ResolveBody)
    name = await request.app[RAMP].catalog.resolve(
        body.provider, body.bank_code, body.account_number, sandbox=body.sandbox
    )
    return body_response(schemas.ResolvedAccount(account_name=name))


async def register_customer(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.CustomerBody)
    address = body.address
    view = await request.app[RAMP].customers.register(
        wallet_call(request, body, body.provider),
        PersonDetails(
            first_name=body.first_name,
            last_name=body.last_name,
            email=body.email,
            phone=body.phone,
            birth_date=body.birth_date,
            address=CustomerAddress(
                line1=address.line1,
                line2=address.line2,
                city=address.city,
                state=address.state,
                postal_code=address.postal_code,
            )
            if address is not None
            else None,
        ),
    )
    return body_response(schemas.CustomerResult(customer=schemas.Customer.model_validate(view)))


async def customer_details(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.WalletBody)
    record = await request.app[RAMP].customers.details(wallet_call(request, body, body.provider))
    details = (
        schemas.CustomerDetails(
            first_name=record.first_name,
            last_name=record.last_name,
            email=record.email,
            phone=record.phone,
            registered=record.provider_customer_id is not None,
        )
        if record is not None
        else None
    )
    return body_response(schemas.DetailsResult(details=details))


async def submit_kyc(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.KycBody, max_bytes=KYC_BODY_MAX_BYTES)
    document = body.document
    view = await request.app[RAMP].customers.submit_kyc(
        wallet_call(request, body, body.provider),
        KycDocument(
            type=document.type,
            number=document.number,
            expiry_date=document.expiry_date,
            image_front=document.image_front,
            image_back=document.image_back,
            selfie_image=body.selfie_image,
        ),
    )
    return body_response(schemas.KycSubmitted(kyc=schemas.KycState.model_validate(view)))


async def kyc_status(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.KycStatusBody)
    view = await request.app[RAMP].customers.kyc_status(
        wallet_call(request, body, body.provider), body.fiat
    )
    kyc = schemas.KycState.model_validate(view) if view is not None else None
    return body_response(schemas.KycResult(kyc=kyc))


async def kyc_link(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.WalletBody)
    url = await request.app[RAMP].customers.kyc_link(wallet_call(request, body, body.provider))
    return body_response(schemas.KycLink(url=url))


# Every ramp operation can meet these: the per-IP backstop and a server fault.
COMMON_ERRORS = (RateLimited, InternalError)
# A wallet-naming POST: schema and sandbox flag (400), body cap (413), proof (401), unknown
# provider (404), sandbox chain (403), provider down or a smart account unverifiable (502).
WALLET_ERRORS = (
    InvalidRequest,
    PayloadTooLarge,
    Unauthorized,
    Forbidden,
    NotFound,
    UpstreamError,
    *COMMON_ERRORS,
)


def add_routes(table: RouteTable) -> None:
    add = table.adder("v2", ("ramp",), envelope=False, access=None)
    add(
        "GET",
        "/v2/ramp/providers",
        list_providers,
        "rampProviders",
        "Providers that can run the corridor now, from their live switches",
        query=schemas.ProvidersQuery,
        responses={200: schemas.ProvidersList},
        errors=(InvalidRequest, *COMMON_ERRORS),
    )
    add(
        "GET",
        "/v2/ramp/banks",
        list_banks,
        "rampBanks",
        "Payout banks of a provider (cached 15 minutes)",
        query=schemas.BanksQuery,
        responses={200: schemas.BankList},
        errors=(
            InvalidRequest,
            Forbidden,
            NotFound,
            ProviderDeclined,
            UpstreamError,
            *COMMON_ERRORS,
        ),
    )
    add(
        "POST",
        "/v2/ramp/banks/resolve",
        resolve_account,
        "rampResolveAccount",
        "The holder's name of a bank account (no wallet, no proof)",
        body=schemas.ResolveBody,
        responses={200: schemas.ResolvedAccount},
        errors=(
            InvalidRequest,
            PayloadTooLarge,
            Forbidden,
            NotFound,
            ProviderDeclined,
            UpstreamError,
            *COMMON_ERRORS,
        ),
    )
    add(
        "POST",
        "/v2/ramp/customers",
        register_customer,
        "rampRegisterCustomer",
        "Register or update the person behind a wallet (serialised per wallet)",
        body=schemas.CustomerBody,
        responses={200: schemas.CustomerResult},
        errors=(*WALLET_ERRORS, ProviderDeclined),
    )
    add(
        "POST",
        "/v2/ramp/customers/details",
        customer_details,
        "rampCustomerDetails",
        "The stored details of a wallet's customer record, or null",
        body=schemas.WalletBody,
        responses={200: schemas.DetailsResult},
        errors=WALLET_ERRORS,
    )
    add(
        "POST",
        "/v2/ramp/customers/kyc",
        submit_kyc,
        "rampSubmitKyc",
        "Submit identity documents (forwarded, not kept); the review state after",
        body=schemas.KycBody,
        responses={200: schemas.KycSubmitted},
        errors=(*WALLET_ERRORS, ProviderDeclined),
    )
    add(
        "POST",
        "/v2/ramp/customers/kyc/status",
        kyc_status,
        "rampKycStatus",
        "The KYC review state (provider re-read at most every 15 s), or null",
        body=schemas.KycStatusBody,
        responses={200: schemas.KycResult},
        errors=(*WALLET_ERRORS, ProviderDeclined),
    )
    add(
        "POST",
        "/v2/ramp/customers/kyc/link",
        kyc_link,
        "rampKycLink",
        "A provider-hosted verification page (needs a provider profile)",
        body=schemas.WalletBody,
        responses={200: schemas.KycLink},
        errors=(*WALLET_ERRORS, ProviderDeclined),
    )
