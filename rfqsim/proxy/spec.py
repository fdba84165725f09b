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
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = "^" + re.sub(r"\\\{[a-zA-Z]+\\\}", "[^/]+", re.escape(self.template)) + "$"
        object.__setattr__(self, "pattern", re.compile(regex))

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"


def _rfq(method: str, template: str, slug: str, **flags: bool) -> SpecOperation:
    return SpecOperation(method, template, "rfq", f"rfq/endpoints/{slug}", **flags)


def _ramp(method: str, template: str) -> SpecOperation:
    slug = (method + template).lower().replace("/", "-").replace("{id}", "id")
    return SpecOperation(method, template, "ramp", f"ramp/endpoints/{slug}")


def _v1(method: str, template: str) -> SpecOperation:
    slug = (method + template).lower().replace("/", "-").replace("{id}", "id")
    return SpecOperation(method, template, "v1", f"v1/endpoints/{slug}", limited=True, keyed=True)


# More specific templates first: /v2/rfq/levels before /v2/rfq/{id}.
OPERATIONS: tuple[SpecOperation, ...] = (
    _rfq("POST", "/v2/rfq/preview", "post-v2-rfq-preview"),
    _rfq("POST", "/v2/rfq/request", "post-v2-rfq-request", limited=True),
    _rfq("GET", "/v2/rfq/levels", "get-v2-rfq-levels"),
    _rfq("POST", "/v2/rfq/{id}/cancel", "post-v2-rfq-id-cancel", limited=True),
    _rfq("POST", "/v2/rfq/{id}/submit", "post-v2-rfq-id-submit", limited=True),
    _rfq("GET", "/v2/rfq/{id}", "get-v2-rfq-id", limited=True),
    _rfq("GET", "/v2/health", "get-v2-health"),
    _rfq("GET", "/v2/openapi.json", "get-v2-openapi-json"),
    _rfq("POST", "/v1/webhooks", "post-v1-webhooks", limited=True, keyed=True),
    _rfq("GET", "/v1/webhooks", "get-v1-webhooks", limited=True, keyed=True),
    _rfq("DELETE", "/v1/webhooks/{id}", "delete-v1-webhooks-id", limited=True, keyed=True),
    _ramp("GET", "/v2/ramp/providers"),
    _ramp("GET", "/v2/ramp/banks"),
    _ramp("POST", "/v2/ramp/banks/resolve"),
    _ramp("POST", "/v2/ramp/customers"),
    _ramp("POST", "/v2/ramp/customers/details"),
    _ramp("POST", "/v2/ramp/customers/kyc"),
    _ramp("POST", "/v2/ramp/customers/kyc/status"),
    _ramp("POST", "/v2/ramp/customers/kyc/link"),
    _ramp("POST", "/v2/ramp/transfers"),
    _ramp("POST", "/v2/ramp/transfers/list"),
    _ramp("GET", "/v2/ramp/transfers/{id}"),
    _ramp("POST", "/v2/ramp/transfers/{id}/retry-payout/check"),
    _ramp("POST", "/v2/ramp/transfers/{id}/retry-payout"),
    _ramp("POST", "/v2/ramp/support/transfer"),
    SpecOperation("GET", "/v1/health", "v1", "v1/endpoints/get-v1-health"),
    SpecOperation("GET", "/v1/status", "v1", "v1/endpoints/get-v1-status"),
    SpecOperation("GET", "/v1/openapi.json", "v1", "v1/auth/item-1"),
    _v1("GET", "/v1/corridors"),
    _v1("GET", "/v1/quote"),
    _v1("GET", "/v1/order-book"),
    _v1("POST", "/v1/swaps"),
    _v1("GET", "/v1/swaps"),
    _v1("POST", "/v1/swaps/{id}/submit"),
    _v1("GET", "/v1/swaps/{id}"),
    _v1("GET", "/v1/limit-orders/quote"),
    _v1("POST", "/v1/limit-orders/prepare"),
    _v1("POST", "/v1/limit-orders"),
    _v1("GET", "/v1/limit-orders"),
    _v1("GET", "/v1/limit-orders/{id}"),
    SpecOperation(
        "GET", "/tickers", "feed", "v1/feed/get-tickers/response-array-ticker_id-base_currency"
    ),
    SpecOperation("GET", "/pairs", "feed", "v1/feed/get-pairs/array-ticker_id-base-target"),
    SpecOperation(
        "GET",
        "/historical_trades",
        "feed",
        "v1/feed/get-historical_trades/response-buy-sell-newest",
    ),
)


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
