"""Route table: every operation is declared once, with the models it parses and renders, the
errors it can return and the policy the edge applies to it (who may call, rate limits and the
per-IP backstop, the request journal, the state gate, Idempotency-Key, the error style). The
same declaration registers the aiohttp route and writes the OpenAPI document, so the document
cannot drift from what the handlers do, and no middleware keeps a list of paths of its own
(api/http/policy.py reads the declaration for each request)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel

from simulator.errors import ServiceError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Document = Literal["v2", "v1", "sim", "feed"]
# How errors of an operation are rendered: the spec's envelope `{error: {code, message,
# request_id, details?}}`, or the rates feed's `{error: "<string>"}` (spec 3 "Rates feed errors").
ErrorStyle = Literal["envelope", "feed"]
# Which instance of a venue of several serves an operation (api/http/forwarding.py; one process
# serves everything): "here" the one the request reached, "owner" the one holding the record
# the path names (`record_param`), "primary" the venue's first instance alive (the default:
# what only it holds), "every" the primary, then each other instance the same request.
Placement = Literal["here", "owner", "primary", "every"]


@dataclass(frozen=True)
class Access:
    """Who may call an API operation (see api/access/middleware.py). Operations without one (health,
    OpenAPI, /_sim) are outside the per-key limiter."""

    scope: str | None  # scope a key caller needs (None: any key, or none)
    keyless: bool = True  # callers without a key may call (proof / claim checked by the service)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    handler: Handler
    operation_id: str
    summary: str
    document: Document  # which OpenAPI document lists it
    tags: tuple[str, ...] = ()
    body: type[BaseModel] | None = None  # JSON request body model
    query: type[BaseModel] | None = None  # query-string model
    responses: dict[int, type[BaseModel] | None] = field(default_factory=dict)  # success: data
    errors: tuple[type[ServiceError], ...] = ()  # error statuses this operation can answer
    # The wire model of each object member of those errors (`ServiceError.object_members`),
    # validated from the service object the error carries: 422 kyc_required's `kyc`.
    error_members: dict[str, type[BaseModel]] = field(default_factory=dict)
    security: tuple[str, ...] = ()  # OpenAPI security scheme names (any of them; "" = none)
    envelope: bool = True  # success bodies wrapped in `data`
    access: Access | None = None  # None: not an API call (no key, no per-key limiter)
    route_path: str | None = None  # aiohttp route pattern when it must differ from `path`
    error_style: ErrorStyle = "envelope"  # the shape every error of this path is rendered in
    # Response headers every answer carries, documented on each response: name -> description.
    headers: tuple[tuple[str, str], ...] = ()
    documented: bool = True  # False: served but left out of the OpenAPI document (preflight)
    # Honours the Idempotency-Key header (api/http/idempotency.py): set on every v1 POST that
    # creates (spec 3 "Endpoints"). The handler must answer with a `web.Response`.
    idempotent: bool = False
    # Changes the venue's configuration (keys, limits): once it answered, the instance sends
    # the change to the other instances (api/http/configuration.py; several instances only).
    changes_configuration: bool = False
    also_in: tuple[Document, ...] = ()  # further documents that list it (the shared registry)
    placement: Placement = "primary"  # where a venue of several instances serves it
    record_param: str | None = None  # the path parameter naming the record ("owner")
    # Outside the per-IP backstop: health checks and the OpenAPI
    # documents, so a load balancer's probes and tooling are never throttled. /_sim and
    # /_provider (the "sim" document) are outside it anyway.
    backstop_exempt: bool = False
    # Every 429 of the operation carries Retry-After (False where the outstanding-RFQ cap's
    # 429, which never does, can also answer).
    retry_after_always: bool = True
    # Recorded in the request journal (/_sim/requests). Off for what reads the journal or
    # draws the console: reading must not add rows.
    journaled: bool = True
    # Runs inside the state gate (api/http/state_gate.py): a reset or restore waits for it or
    # cancels it. Off for the state control's own operations, the journal's reads and the maker
    # stream's long-lived sockets.
    gated: bool = True

    @property
    def api_traffic(self) -> bool:
        """A call of the API: the /_sim controls and the provider's inbound webhooks (the "sim"
        document) are not, so neither the per-IP backstop nor injected faults apply to them."""
        return self.document != "sim"

    @property
    def same_origin_writes(self) -> bool:
        """The control API: its state-changing requests are refused when another site's page
        sent them (rfqkit/local_guard.py); it has no credential a forged request would lack.
        The public API and the provider's signed inbound webhooks are not (docs/decisions.md
        SEC2)."""
        return self.path.startswith("/_sim")

    @property
    def behind_backstop(self) -> bool:
        """The per-IP backstop counts this operation's requests (and may answer 429)."""
        return not self.backstop_exempt and self.api_traffic

    @property
    def router_path(self) -> str:
        """What aiohttp registers: `route_path` if given (e.g. a regex that keeps a templated
        segment off its concrete siblings), else the documented `path`."""
        return self.route_path or self.path


class RouteTable:
    def __init__(self) -> None:
        self.operations: list[Operation] = []

    def add(self, operation: Operation) -> None:
        for error in operation.errors:
            for member in error.object_members:
                if member not in operation.error_members:
                    raise ValueError(
                        f"{operation.operation_id}: {error.code} carries `{member}`; "
                        f"declare its wire model in error_members"
                    )
        self.operations.append(operation)

    def register(self, router: web.UrlDispatcher) -> None:
        for op in self.operations:
            router.add_route(op.method, op.router_path, op.handler, name=op.operation_id)

    def adder(
        self, document: Document, tags: tuple[str, ...], **defaults: Any
    ) -> Callable[..., None]:
        """`add(method, path, handler, operation_id, summary, **fields)` for one area's routes,
        with the fields every operation of the area shares (`defaults`)."""

        def add(
            method: str, path: str, handler: Any, op_id: str, summary: str, **fields: Any
        ) -> None:
            self.add(
                Operation(
                    method=method,
                    path=path,
                    handler=handler,
                    operation_id=op_id,
                    summary=summary,
                    document=document,
                    tags=tags,
                    **{**defaults, **fields},
                )
            )

        return add

    def by_name(self) -> dict[str, Operation]:
        return {op.operation_id: op for op in self.operations}

    def for_document(self, document: Document) -> list[Operation]:
        return [
            op
            for op in self.operations
            if op.documented and (op.document == document or document in op.also_in)
        ]

    def declared_at(self, path: str) -> Operation | None:
        """The first operation declared at a plain `path`, whatever its method: what a request
        aiohttp answers 405 to (a known path, another method) takes its policy from."""
        return next(
            (op for op in self.operations if "{" not in op.router_path and op.router_path == path),
            None,
        )

    def document_at(self, path: str) -> Document | None:
        """The document of the operations under the same first path segment (`/_sim`, `/v2`,
        `/tickers`, ...): what a path no operation declares (aiohttp's own 404) belongs to."""
        segment = "/" + path.lstrip("/").split("/", 1)[0]
        for op in self.operations:
            if op.path == segment or op.path.startswith(segment + "/"):
                return op.document
        return None

    def error_styles(self) -> dict[str, ErrorStyle]:
        """Paths whose errors are not the envelope, by request path (so aiohttp's own 405 for a
        known path finds the shape too). Only plain paths can be looked up this way."""
        return {
            op.router_path: op.error_style
            for op in self.operations
            if op.error_style != "envelope" and "{" not in op.router_path
        }
