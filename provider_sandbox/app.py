"""create_sandbox_app: the aiohttp application of the provider sandbox."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

from provider_sandbox import api, controls
from provider_sandbox.appkeys import SANDBOX
from provider_sandbox.core import Sandbox
from provider_sandbox.errors import SandboxError, SandboxForbidden, SandboxUnauthorized
from rfqkit.local_guard import HostCheck, refusal_of
from rfqkit.tasks import cancel_and_wait

log = logging.getLogger("provider_sandbox")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
API_PREFIX = "/api/"
CONTROLS_PREFIX = "/sandbox/"
HTTP_ERROR_TYPES = {400: "invalid", 401: "unauthorized", 404: "not_found", 405: "invalid"}


def _route_key(request: web.Request) -> str:
    resource = request.match_info.route.resource
    template = resource.canonical if resource is not None else request.path
    return f"{request.method} {template}"


def _error(status: int, type_: str, message: str) -> web.Response:
    return web.json_response({"error": {"type": type_, "message": message}}, status=status)


@web.middleware
async def errors_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except SandboxError as exc:
        return web.json_response(exc.body(), status=exc.status)
    except web.HTTPRedirection:
        raise
    except web.HTTPException as exc:
        type_ = HTTP_ERROR_TYPES.get(exc.status, "invalid" if exc.status < 500 else "internal")
        return _error(exc.status, type_, exc.reason)
    except Exception:
        log.exception("provider sandbox: unhandled error on %s %s", request.method, request.path)
        return _error(500, "internal", "The provider sandbox failed; see its log")


HOST_CHECK: web.AppKey[HostCheck] = web.AppKey("host_check")


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuses a Host name a web page could have re-pointed here, and a state-changing request
    to the controls (`/sandbox`, no key) that another site's page sent (rfqkit/local_guard.py).
    The API (`/api/v1`) needs its bearer key, which a page on another site does not have."""
    refused = refusal_of(
        request.app[HOST_CHECK],
        request.method,
        request.headers,
        request.scheme,
        guards_writes=request.path.startswith(CONTROLS_PREFIX),
    )
    if refused is not None:
        message, details = refused
        raise SandboxForbidden(message, **details)
    return await handler(request)


@web.middleware
async def api_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Counts, reachability, latency and the bearer key: /api/v1 only (controls stay up)."""
    if not request.path.startswith(API_PREFIX):
        return await handler(request)
    sandbox = request.app[SANDBOX]
    settings = sandbox.state.settings
    sandbox.state.calls[_route_key(request)] += 1
    if not settings.reachable:
        # Close without a byte of answer: the client sees a transport error, as with a provider
        # that is down. A handler must return a response; this one is never sent (the
        # connection is already closed, and aiohttp drops the write).
        if request.transport is not None:
            request.transport.close()
        return web.Response(status=503)
    latency_s = settings.api_latency_ms / 1000
    try:
        if request.headers.get("Authorization") != f"Bearer {sandbox.config.api_key}":
            raise SandboxUnauthorized("A valid API key is required")
        response = await handler(request)
    except SandboxError as exc:
        response = web.json_response(exc.body(), status=exc.status)
    # The work is done at once and only the answer is held, as with a slow provider: a create
    # is booked while its caller still waits (a retry then finds it, 409 with the transfer).
    if latency_s > 0:
        await asyncio.sleep(latency_s)
    return response


def create_sandbox_app(sandbox: Sandbox) -> web.Application:
    # KYC documents arrive as JSON with up to three 4 MiB images in base64 (about 16.8 MiB):
    # aiohttp's default 1 MiB cap would refuse a valid maximal submission.
    app = web.Application(
        middlewares=[errors_middleware, guard_middleware, api_middleware],
        client_max_size=32 * 1024 * 1024,
    )
    app[SANDBOX] = sandbox
    config = sandbox.config
    app[HOST_CHECK] = HostCheck(
        bind=config.host, allowed=config.allowed_hosts, server="provider sandbox"
    )
    api.add_routes(app)
    controls.add_routes(app)
    app.cleanup_ctx.append(_background)
    return app


async def _background(app: web.Application) -> AsyncIterator[None]:
    """The tick (clock-driven progress, deposit watching, held webhooks) and the webhook
    worker; both are cancelled and awaited on shutdown, then the chain sessions close."""
    sandbox = app[SANDBOX]
    tasks = [
        asyncio.create_task(sandbox.run_ticks(), name="provider-sandbox-tick"),
        asyncio.create_task(sandbox.webhooks.run(), name="provider-sandbox-webhooks"),
    ]
    try:
        yield
    finally:
        await cancel_and_wait(tasks)
        await sandbox.close()
