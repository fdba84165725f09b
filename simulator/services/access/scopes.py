"""The v1 scope table (spec 3 "Authentication"), as data: which scope each v1 operation needs,
and which v1 paths need no key at all. The route table is checked against it at start-up
(api/v1/access.py `check_v1_operations`), so a v1 operation cannot be declared with another
scope, and v1, closed to new features, cannot grow an operation the spec does not list."""

from __future__ import annotations

import re

# Item 1: "Every v1 request except /v1/health, /v1/status and /v1/openapi.json needs an API key".
V1_PUBLIC: frozenset[tuple[str, str]] = frozenset(
    {("GET", "/v1/health"), ("GET", "/v1/status"), ("GET", "/v1/openapi.json")}
)

# The scopes table, one row per operation; a templated segment is written `{id}`.
V1_SCOPES: dict[tuple[str, str], str] = {
    ("GET", "/v1/corridors"): "quotes:read",
    ("GET", "/v1/order-book"): "quotes:read",
    ("GET", "/v1/quote"): "quotes:read",
    ("GET", "/v1/limit-orders/quote"): "quotes:read",
    ("POST", "/v1/swaps"): "trades:write",
    ("POST", "/v1/swaps/{id}/submit"): "trades:write",
    ("POST", "/v1/limit-orders"): "trades:write",
    ("POST", "/v1/limit-orders/prepare"): "trades:write",
    ("GET", "/v1/swaps"): "trades:read",
    ("GET", "/v1/swaps/{id}"): "trades:read",
    ("GET", "/v1/limit-orders"): "trades:read",
    ("GET", "/v1/limit-orders/{id}"): "trades:read",
    ("POST", "/v1/webhooks"): "webhooks:manage",
    ("GET", "/v1/webhooks"): "webhooks:manage",
    ("DELETE", "/v1/webhooks/{id}"): "webhooks:manage",
}

_TEMPLATED = re.compile(r"\{[^/}]+\}")


def v1_row(method: str, path: str) -> tuple[str, str]:
    """The table's key for a documented operation: `/v1/swaps/{swap_id}` -> `/v1/swaps/{id}`."""
    return method.upper(), _TEMPLATED.sub("{id}", path)


def v1_scope(method: str, path: str) -> str | None:
    """The scope the spec requires for this v1 operation; None for the public ones.
    KeyError for an operation the spec does not list."""
    row = v1_row(method, path)
    if row in V1_PUBLIC:
        return None
    return V1_SCOPES[row]
