"""What the proxy knows of the spec besides the suite's checks: the operations of the three
documents' endpoint tables (method, path, the table row's rule id, whether the limiter answers
them) and the error tables, read from the rule ids themselves (``<doc>/errors/<status>-<code>``,
the ids of ``conformance-report/matrix.md``), so the status/code pairs have one definition: the
spec's own tables as the rule parser reads them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.rules import Rule, load_rules

# Which document's error table and conventions a surface answers by.
DOCUMENT = {"rfq": "rfq", "ramp": "ramp", "v1": "v1", "feed": "v1"}
_ERROR_ROW = re.compile(r"^(rfq|ramp|v1)/errors/([0-9]{3})-([a-z_]+)$")


@dataclass(frozen=True)
class SpecOperation:
    """One row of an endpoint table."""

    method: str
    template: str  # the path as the table writes it, {id} for a parameter
    surface: str  # rfq | ramp | v1 | feed
    rule: str  # the row's rule id
    limited: bool = False  # its answers come through the per-key (or per-IP) limiter
    keyed: bool = False  # needs an API key
    role: str = ""  # what some checks look for: health, status, firm (the firm request)
    reads: str = ""  # the kind of object its answers show (read_twice.py KINDS), if any
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = "^" + re.sub(r"\\\{[a-zA-Z]+\\\}", "[^/]+", re.escape(self.template)) + "$"
        object.__setattr__(self, "pattern", re.compile(regex))

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"


def _rfq(method: str, template: str, slug: str, **flags: Any) -> SpecOperation:
    return SpecOperation(method, template, "rfq", f"rfq/endpoints/{slug}", **flags)


def _ramp(method: str, template: str, **flags: Any) -> SpecOperation:
    slug = (method + template).lower().replace("/", "-").replace("{id}", "id")
    return SpecOperation(method, template, "ramp", f"ramp/endpoints/{slug}", **flags)


def _v1(method: str, template: str, **flags: Any) -> SpecOperation:
    slug = (method + template).lower().replace("/", "-").replace("{id}", "id")
    return SpecOperation(
        method, template, "v1", f"v1/endpoints/{slug}", limited=True, keyed=True, **flags
    )


# Every operation of the endpoint tables, one row each: the one place a path is written.
RFQ_PREVIEW = _rfq("POST", "/v2/rfq/preview", "post-v2-rfq-preview")
RFQ_REQUEST = _rfq(
    "POST", "/v2/rfq/request", "post-v2-rfq-request", limited=True, role="firm", reads="rfq"
)
RFQ_LEVELS = _rfq("GET", "/v2/rfq/levels", "get-v2-rfq-levels")
RFQ_CANCEL = _rfq("POST", "/v2/rfq/{id}/cancel", "post-v2-rfq-id-cancel", limited=True, reads="rfq")
RFQ_SUBMIT = _rfq("POST", "/v2/rfq/{id}/submit", "post-v2-rfq-id-submit", limited=True, reads="rfq")
RFQ_GET = _rfq("GET", "/v2/rfq/{id}", "get-v2-rfq-id", limited=True, reads="rfq")
V2_HEALTH = _rfq("GET", "/v2/health", "get-v2-health", role="health")
V2_DOCUMENT = _rfq("GET", "/v2/openapi.json", "get-v2-openapi-json")
WEBHOOK_CREATE = _rfq("POST", "/v1/webhooks", "post-v1-webhooks", limited=True, keyed=True)
WEBHOOK_LIST = _rfq("GET", "/v1/webhooks", "get-v1-webhooks", limited=True, keyed=True)
WEBHOOK_DELETE = _rfq(
    "DELETE", "/v1/webhooks/{id}", "delete-v1-webhooks-id", limited=True, keyed=True
)
RAMP_PROVIDERS = _ramp("GET", "/v2/ramp/providers")
RAMP_BANKS = _ramp("GET", "/v2/ramp/banks")
RAMP_BANK_RESOLVE = _ramp("POST", "/v2/ramp/banks/resolve")
RAMP_CUSTOMER = _ramp("POST", "/v2/ramp/customers")
RAMP_CUSTOMER_DETAILS = _ramp("POST", "/v2/ramp/customers/details")
RAMP_KYC = _ramp("POST", "/v2/ramp/customers/kyc")
RAMP_KYC_STATUS = _ramp("POST", "/v2/ramp/customers/kyc/status")
RAMP_KYC_LINK = _ramp("POST", "/v2/ramp/customers/kyc/link")
RAMP_TRANSFER_CREATE = _ramp("POST", "/v2/ramp/transfers", reads="ramp")
RAMP_TRANSFER_LIST = _ramp("POST", "/v2/ramp/transfers/list", reads="ramp")
RAMP_TRANSFER_GET = _ramp("GET", "/v2/ramp/transfers/{id}", reads="ramp")
RAMP_RETRY_CHECK = _ramp("POST", "/v2/ramp/transfers/{id}/retry-payout/check", reads="ramp")
RAMP_RETRY = _ramp("POST", "/v2/ramp/transfers/{id}/retry-payout", reads="ramp")
RAMP_SUPPORT_TRANSFER = _ramp("POST", "/v2/ramp/support/transfer")
V1_HEALTH = SpecOperation("GET", "/v1/health", "v1", "v1/endpoints/get-v1-health", role="health")
V1_STATUS = SpecOperation("GET", "/v1/status", "v1", "v1/endpoints/get-v1-status", role="status")
V1_DOCUMENT = SpecOperation("GET", "/v1/openapi.json", "v1", "v1/auth/item-1")
V1_CORRIDORS = _v1("GET", "/v1/corridors")
V1_QUOTE = _v1("GET", "/v1/quote")
V1_ORDER_BOOK = _v1("GET", "/v1/order-book")
V1_SWAP_CREATE = _v1("POST", "/v1/swaps")
V1_SWAP_LIST = _v1("GET", "/v1/swaps")
V1_SWAP_SUBMIT = _v1("POST", "/v1/swaps/{id}/submit")
V1_SWAP_GET = _v1("GET", "/v1/swaps/{id}")
V1_LIMIT_QUOTE = _v1("GET", "/v1/limit-orders/quote", reads="v1-limit-orders")
V1_LIMIT_PREPARE = _v1("POST", "/v1/limit-orders/prepare", reads="v1-limit-orders")
V1_LIMIT_PLACE = _v1("POST", "/v1/limit-orders", reads="v1-limit-orders")
V1_LIMIT_LIST = _v1("GET", "/v1/limit-orders", reads="v1-limit-orders")
V1_LIMIT_GET = _v1("GET", "/v1/limit-orders/{id}", reads="v1-limit-orders")
FEED_TICKERS = SpecOperation(
    "GET", "/tickers", "feed", "v1/feed/get-tickers/response-array-ticker_id-base_currency"
)
FEED_PAIRS = SpecOperation("GET", "/pairs", "feed", "v1/feed/get-pairs/array-ticker_id-base-target")
FEED_TRADES = SpecOperation(
    "GET",
    "/historical_trades",
    "feed",
    "v1/feed/get-historical_trades/response-buy-sell-newest",
    reads="feed-trades",
)

# More specific templates first: /v2/rfq/levels before /v2/rfq/{id}.
OPERATIONS: tuple[SpecOperation, ...] = (
    RFQ_PREVIEW,
    RFQ_REQUEST,
    RFQ_LEVELS,
    RFQ_CANCEL,
    RFQ_SUBMIT,
    RFQ_GET,
    V2_HEALTH,
    V2_DOCUMENT,
    WEBHOOK_CREATE,
    WEBHOOK_LIST,
    WEBHOOK_DELETE,
    RAMP_PROVIDERS,
    RAMP_BANKS,
    RAMP_BANK_RESOLVE,
    RAMP_CUSTOMER,
    RAMP_CUSTOMER_DETAILS,
    RAMP_KYC,
    RAMP_KYC_STATUS,
    RAMP_KYC_LINK,
    RAMP_TRANSFER_CREATE,
    RAMP_TRANSFER_LIST,
    RAMP_TRANSFER_GET,
    RAMP_RETRY_CHECK,
    RAMP_RETRY,
    RAMP_SUPPORT_TRANSFER,
    V1_HEALTH,
    V1_STATUS,
    V1_DOCUMENT,
    V1_CORRIDORS,
    V1_QUOTE,
    V1_ORDER_BOOK,
    V1_SWAP_CREATE,
    V1_SWAP_LIST,
    V1_SWAP_SUBMIT,
    V1_SWAP_GET,
    V1_LIMIT_QUOTE,
    V1_LIMIT_PREPARE,
    V1_LIMIT_PLACE,
    V1_LIMIT_LIST,
    V1_LIMIT_GET,
    FEED_TICKERS,
    FEED_PAIRS,
    FEED_TRADES,
)


# The POSTs an Idempotency-Key applies to (every one under /v1/: the v1 API and the webhook
# registry).
IDEMPOTENT_POSTS = frozenset(
    op for op in OPERATIONS if op.method == "POST" and op.template.startswith("/v1/")
)
# Each document's OpenAPI path, by surface (the feed's has no row of the tables).
DOCUMENT_PATHS = {"rfq": "/v2/openapi.json", "v1": "/v1/openapi.json", "feed": "/feed/openapi.json"}
# Paths that are rfqsim's own and no part of the service the spec describes.
SIMULATOR_ONLY = ("/_sim", "/_provider")
# Which part of the service a path belongs to, by its beginning (first match): what a path no
# row names is judged by too.
SURFACE_PREFIXES = (
    (SIMULATOR_ONLY, "simulator"),
    (("/v2/ramp/",), "ramp"),
    (("/v2/", "/v1/webhooks"), "rfq"),
    (("/v1/",), "v1"),
)
FEED_PATHS = frozenset(
    {*(op.template for op in OPERATIONS if op.surface == "feed"), DOCUMENT_PATHS["feed"]}
)


def surface_of(path: str) -> str:
    """Which part of the service a path belongs to: ``rfq`` (v2 RFQ, health, the shared webhook
    registry), ``ramp``, ``v1``, ``feed``, ``simulator`` (rfqsim's own /_sim, /_provider: not
    checked) or ``other`` (a path no spec document names)."""
    for prefixes, surface in SURFACE_PREFIXES:
        if path.startswith(prefixes):
            return surface
    return "feed" if path in FEED_PATHS else "other"


def paths_of(role: str) -> frozenset[str]:
    """The paths of the rows with this role."""
    return frozenset(op.template for op in OPERATIONS if op.role == role)


def operation_of(method: str, path: str) -> SpecOperation | None:
    """The endpoint table's row for a request, if the spec names one."""
    for operation in OPERATIONS:
        if operation.method == method and operation.pattern.match(path):
            return operation
    return None


def path_known(path: str) -> bool:
    """Whether some row of the endpoint tables has this path (whatever the method)."""
    return any(operation.pattern.match(path) for operation in OPERATIONS)


@functools.cache
def rules() -> dict[str, Rule]:
    """Every rule of the three documents by id (docs/spec of this checkout)."""
    return {rule.id: rule for rule in load_rules()}


@functools.cache
def error_table(document: str) -> dict[int, dict[str, str]]:
    """A document's error table: status -> {code: the row's rule id}."""
    table: dict[int, dict[str, str]] = {}
    for rule_id in rules():
        match = _ERROR_ROW.match(rule_id)
        if match and match.group(1) == document:
            table.setdefault(int(match.group(2)), {})[match.group(3)] = rule_id
    return table
