"""How a v1 operation declares who may call it, and the start-up check that every declared v1
operation matches spec 3's "Authentication" table (services/access/scopes.py).

A v1 operation that needs a key is declared with `**v1_keyed(scope)`:

    add = table.adder("v1", ("swaps",), **v1_keyed("trades:write"))
    add("POST", "/v1/swaps", create_swap, "v1CreateSwap", "…", body=..., idempotent=True,
        responses={201: ..., 200: ...}, errors=(InvalidRequest, *V1_KEY_ERRORS))

The access middleware then answers, in this order: 429 per-IP backstop; 401 for a bad,
suspended or revoked key (no X-RateLimit-*); 429 per-key limiter; 401 for a missing key;
403 for a missing scope; X-RateLimit-* ride on every answer from the limiter on."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.api.http.routes import Access, Operation
from simulator.errors import Forbidden, InternalError, RateLimited, Unauthorized
from simulator.services.access.scopes import V1_PUBLIC, V1_SCOPES, v1_row

KEY_SECURITY = ("bearerKey", "apiKeyHeader")  # Authorization: Bearer, or X-API-Key
V1_KEY_ERRORS = (Unauthorized, Forbidden, RateLimited, InternalError)


class V1RouteError(RuntimeError):
    """A v1 operation is declared against the spec's scope table."""


def v1_key_access(scope: str) -> Access:
    return Access(scope=scope, keyless=False)


def v1_keyed(scope: str) -> dict[str, Any]:
    """The Operation fields of a v1 operation that needs a key with `scope`."""
    return {"security": KEY_SECURITY, "access": v1_key_access(scope)}


def v1_problems(operations: Iterable[Operation]) -> list[str]:
    problems = []
    for op in operations:
        if not op.path.startswith("/v1/"):
            continue
        name = f"{op.method} {op.path} ({op.operation_id})"
        row = v1_row(op.method, op.path)
        if "v1" not in (op.document, *op.also_in):
            problems.append(f"{name}: not listed in the v1 document")
        if row in V1_PUBLIC:
            if op.access is not None:
                problems.append(f"{name}: public in spec 3, but declared with an access rule")
            continue
        scope = V1_SCOPES.get(row)
        if scope is None:
            problems.append(f"{name}: not an operation of spec 3 (v1 gets no new endpoints)")
        elif op.access != v1_key_access(scope) or op.security != KEY_SECURITY:
            problems.append(f"{name}: spec 3 requires a key with {scope}, declared {op.access}")
    return problems


def check_v1_operations(operations: Iterable[Operation]) -> None:
    """Raises V1RouteError naming every v1 operation that breaks the table."""
    problems = v1_problems(operations)
    if problems:
        raise V1RouteError("v1 routes against spec 3 'Authentication':\n" + "\n".join(problems))
