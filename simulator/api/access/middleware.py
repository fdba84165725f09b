"""Access control for API operations, in the order the spec implies:

1. the per-IP backstop, before anyone is identified (429 + Retry-After, no X-RateLimit-*);
2. the API key, if one is presented (401 for any bad key, without X-RateLimit-*);
3. the per-key (or per-IP for keyless callers) limiter, whose X-RateLimit-* headers then ride on
   every response to the request, errors included (429 + Retry-After when over);
4. the operation's scope for key callers (403), and whether keyless callers may call at all.

Proofs of control and claim tokens depend on the body or the resource, so the services check
them; this layer only identifies the caller (`request[CALLER]`). Of several instances, the one
a request reaches counts it (1 and 3, and an injected 500); one that serves it for that one
identifies the caller again and counts nothing (api/http/forwarding.py)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from simulator.api.http.appkeys import (
    ACCESS,
    CALLER,
    CONFIGURATION,
    INJECTED_ERRORS,
    RATE_DECISION,
    SETTINGS,
)
from simulator.api.http.forwarding import sent_on
from simulator.api.http.policy import api_traffic, operation_of
from simulator.errors import Unauthorized
from simulator.services.access.callers import Caller
from simulator.services.access.keys import ApiKey, InvalidApiKey
from simulator.services.access.limits import rate_limited


def client_ip(request: web.Request) -> str:
    if request.app[SETTINGS].trusted_proxy:
        forwarded = request.headers.get("X-Forwarded-For", "")
        first = forwarded.split(",")[0].strip()
        if first:
            return first
    return request.remote or "unknown"


def presented_key(request: web.Request) -> str | None:
    bearer = request.headers.get("Authorization")
    header = request.headers.get("X-API-Key")
    from_bearer = None
    if bearer is not None:
        scheme, _, value = bearer.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthorized(
                "Authorization must be 'Bearer <API_KEY>'", details={"reason": "invalid_api_key"}
            )
        from_bearer = value.strip()
    if from_bearer is not None and header is not None and from_bearer != header.strip():
        raise Unauthorized(
            "Two different API keys presented", details={"reason": "invalid_api_key"}
        )
    return from_bearer or (header.strip() if header is not None else None)


def _key_or_none(request: web.Request) -> str | None:
    """The presented key, or None when there is none or the headers are malformed (which the
    checks after the fault switch answer 401): tells the fleet's own calls apart."""
    try:
        return presented_key(request)
    except Unauthorized:
        return None


async def _authenticated(request: web.Request, raw_key: str) -> ApiKey:
    """The key presented; one this instance does not know may have been created at another
    instance of the venue a moment ago: the venue's configuration is read before the 401."""
    keys = request.app[ACCESS].keys
    try:
        return keys.authenticate(raw_key)
    except InvalidApiKey:
        replica = request.app[CONFIGURATION]
        if replica is None or not await replica.refresh():
            raise
    return keys.authenticate(raw_key)


async def _injected_error(request: web.Request, presented_key: str | None) -> bool:
    """This request takes one of the injected 500s: this instance's count says some may be
    left, and of several instances the venue's count agrees (else none is left here either)."""
    faults = request.app[ACCESS].faults
    if not faults.take_internal_error(presented_key):
        return False
    venue = request.app.get(INJECTED_ERRORS)
    if venue is None or await venue.take():
        return True
    faults.internal_errors = 0  # taken at the other instances
    return False


@web.middleware
async def access_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    ip = client_ip(request)
    services = request.app[ACCESS]
    # The operation's declaration decides (the same one the OpenAPI document is written from):
    # the control API and the provider's inbound webhooks are not API traffic (no per-IP
    # backstop, no injected faults); a request no operation matches (404, 405) counts as API
    # traffic unless its path is the control API's.
    operation = operation_of(request)
    in_api = api_traffic(request)
    behind_backstop = operation.behind_backstop if operation is not None else in_api
    limits = services.limits
    limiter = services.limiter
    counted = not sent_on(request)  # one sent by another instance was counted there
    if behind_backstop and counted:
        backstop = limiter.hit(f"backstop:{ip}", limits.ip_backstop_per_minute)
        if not backstop.allowed:
            raise rate_limited(backstop, with_headers=False)
    if in_api and counted and await _injected_error(request, _key_or_none(request)):
        # The /_sim fault switch for the spec's 500 row: a genuine unhandled exception, rendered
        # by the same error middleware as any real fault.
        raise RuntimeError("fault injected through /_sim/faults (internal_errors)")
    access = operation.access if operation is not None else None
    if access is None:
        return await handler(request)
    raw_key = presented_key(request)
    key = await _authenticated(request, raw_key) if raw_key is not None else None
    caller = Caller(ip=ip, key=key)
    tier_limit = (
        limits.tiers.get(key.tier, limits.tiers["default"])
        if key is not None
        else limits.keyless_per_minute
    )
    if counted:
        decision = limiter.hit(f"rate:{caller.identity}", tier_limit)
        request[RATE_DECISION] = decision  # its headers ride on the answer, sent on or not
        if not decision.allowed:
            raise rate_limited(decision, with_headers=True)
    if key is None and not access.keyless:
        raise Unauthorized("An API key is required", details={"reason": "api_key_required"})
    if access.scope is not None:
        caller.require_scope(access.scope)
    request[CALLER] = caller
    return await handler(request)


async def add_rate_limit_headers(request: web.Request, response: web.StreamResponse) -> None:
    decision = request.get(RATE_DECISION)
    if decision is not None:
        response.headers.update(decision.headers())
