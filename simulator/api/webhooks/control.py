"""/_sim/webhooks: the delivery journal, manual redelivery, sending-side faults, and the local
CA that lets receivers on this machine serve https the simulator trusts."""

from __future__ import annotations

from aiohttp import web

from rfqkit.timestamps import from_unix, isoformat
from simulator.api.http.appkeys import WEBHOOKS
from simulator.api.http.forwarding import sent_on
from simulator.api.http.parsing import parse_body, parse_query
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.webhooks import schemas
from simulator.errors import Conflict, InternalError, InvalidRequest, NotFound, PayloadTooLarge
from simulator.services.shared.events import event_of
from simulator.services.webhooks.outbox import DeliveryFaults


async def list_endpoints(request: web.Request) -> web.Response:
    endpoints = request.app[WEBHOOKS].registry.all()
    return data_response(
        schemas.EndpointList(
            endpoints=[
                schemas.EndpointView(
                    id=e.endpoint_id,
                    partner_id=e.partner_id,
                    url=e.url,
                    event_types=list(e.event_types),
                    status=e.status,
                    created_at=isoformat(from_unix(e.created_at)),
                )
                for e in endpoints
            ]
        )
    )


async def list_deliveries(request: web.Request) -> web.Response:
    query = parse_query(request, schemas.DeliveryQuery)
    found = request.app[WEBHOOKS].outbox.find(
        endpoint_id=query.endpoint_id,
        event_id=query.event_id,
        status=query.status,
        limit=query.limit,
    )
    return data_response(
        schemas.DeliveryList(deliveries=[schemas.DeliveryView.model_validate(d) for d in found])
    )


async def redeliver(request: web.Request) -> web.Response:
    delivery = await request.app[WEBHOOKS].worker.redeliver(request.match_info["delivery_id"])
    return data_response(schemas.DeliveryView.model_validate(delivery))


def _faults(faults: DeliveryFaults) -> schemas.WebhookFaultState:
    return schemas.WebhookFaultState(
        duplicate=faults.duplicate, delay_ms=faults.delay_ms, drop_first=faults.drop_first
    )


async def get_faults(request: web.Request) -> web.Response:
    return data_response(_faults(request.app[WEBHOOKS].faults))


async def post_faults(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.WebhookFaultUpdate)
    faults = request.app[WEBHOOKS].faults
    faults.update(duplicate=body.duplicate, delay_ms=body.delay_ms, drop_first=body.drop_first)
    return data_response(_faults(faults))


async def delete_faults(request: web.Request) -> web.Response:
    faults = request.app[WEBHOOKS].faults
    faults.clear()
    return data_response(_faults(faults))


async def get_ca(request: web.Request) -> web.Response:
    pem = await request.app[WEBHOOKS].certificates.ca_pem()
    return data_response(schemas.CaCertificate(ca_pem=pem.decode()))


async def issue_certificate(request: web.Request) -> web.Response:
    body = await parse_body(request, schemas.CertificateRequest)
    issued = await request.app[WEBHOOKS].certificates.issue(body.hostnames)
    return data_response(
        schemas.IssuedCertificate(
            cert_pem=issued.cert_pem.decode(),
            key_pem=issued.key_pem.decode(),
            ca_pem=issued.ca_pem.decode(),
        )
    )


# adapters/webhooks/venue_events.py sends them here; not under /_sim, which --no-control-api
# takes away: a venue without the control API delivers its events too
EVENTS_PATH = "/_venue/events"


async def venue_events(request: web.Request) -> web.Response:
    """Events another instance of the venue made, for this one's webhook worker (several
    instances: adapters/webhooks/venue_events.py); nobody else may send them."""
    if not sent_on(request):
        raise NotFound("No such resource")
    dispatcher = request.app[WEBHOOKS].dispatcher
    for data in await request.json():
        dispatcher.publish(event_of(data))
    return web.Response(status=204)


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim", "webhooks"))
    add(
        "POST",
        EVENTS_PATH,
        venue_events,
        "simVenueEvents",
        "Events of another instance of the venue, for this one's webhook worker",
        responses={204: None},
        errors=(NotFound, InternalError),
        documented=False,
        journaled=False,
        placement="here",
    )

    body_errors = (InvalidRequest, PayloadTooLarge, InternalError)
    add(
        "GET",
        "/_sim/webhooks/endpoints",
        list_endpoints,
        "simListWebhookEndpoints",
        "Every registered webhook endpoint of every partner (no signing secrets)",
        responses={200: schemas.EndpointList},
        errors=(InternalError,),
    )
    add(
        "GET",
        "/_sim/webhooks/deliveries",
        list_deliveries,
        "simListWebhookDeliveries",
        "Webhook deliveries with every attempt (filter by endpoint, event, status)",
        query=schemas.DeliveryQuery,
        responses={200: schemas.DeliveryList},
        errors=(InvalidRequest, InternalError),
    )
    add(
        "POST",
        "/_sim/webhooks/deliveries/{delivery_id}/redeliver",
        redeliver,
        "simRedeliverWebhook",
        "Make one more attempt now, signed afresh (answers once it has ended)",
        responses={200: schemas.DeliveryView},
        errors=(NotFound, Conflict, InternalError),
    )
    add(
        "GET",
        "/_sim/webhooks/faults",
        get_faults,
        "simGetWebhookFaults",
        "Sending-side webhook faults",
        responses={200: schemas.WebhookFaultState},
        errors=(InternalError,),
    )
    add(
        "POST",
        "/_sim/webhooks/faults",
        post_faults,
        "simSetWebhookFaults",
        "Duplicate, delay or drop webhook attempts",
        body=schemas.WebhookFaultUpdate,
        responses={200: schemas.WebhookFaultState},
        errors=body_errors,
        placement="every",
    )
    add(
        "DELETE",
        "/_sim/webhooks/faults",
        delete_faults,
        "simClearWebhookFaults",
        "Turn every webhook fault off",
        responses={200: schemas.WebhookFaultState},
        errors=(InternalError,),
        placement="every",
    )
    add(
        "GET",
        "/_sim/webhooks/ca",
        get_ca,
        "simWebhookCa",
        "The local CA certificate the webhook sender trusts",
        responses={200: schemas.CaCertificate},
        errors=(InternalError,),
    )
    add(
        "POST",
        "/_sim/webhooks/certificates",
        issue_certificate,
        "simIssueWebhookCertificate",
        "A server certificate signed by the local CA, for a local https receiver",
        body=schemas.CertificateRequest,
        responses={200: schemas.IssuedCertificate},
        errors=body_errors,
    )
