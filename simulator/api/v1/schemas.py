"""Wire shapes of /v1/status and /v1/corridors (spec 3: "body not shown", "Fields of corridor
list items: not shown"; ours, docs/decisions.md) and of /_sim/idempotency."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, RootModel

from simulator.api.http.fields import Timestamp, integral_number
from simulator.api.http.schemas import ApiModel

# -- /v1/status -----------------------------------------------------------------------------


class DependencyCheck(ApiModel):
    status: Literal["up", "down"]
    critical: bool = Field(description="A critical dependency that is down makes the service down")
    chain_id: int
    reason: str | None = Field(
        description="Why it is down (null when up): chain `unreachable` or `not_started`; fill "
        "index `paused`, `stalled`, `not_running` or `not_started`"
    )
    block_number: int | None = Field(
        description="chain: its head block; fillIndex: the last block scanned (null before the "
        "first scan or when unknown)"
    )


class ServiceStatus(ApiModel):
    status: Literal["operational", "degraded", "down"] = Field(
        description="`down` (HTTP 503) when a critical check is down; `degraded` when only "
        "non-critical ones are; else `operational`"
    )
    checked_at: Timestamp = Field(description="Service clock, ISO-8601 UTC")
    checks: dict[str, DependencyCheck] = Field(
        validation_alias="checks_by_name",
        description="By dependency: `chain:<chainId>` (critical), `fillIndex:<chainId>`",
    )


# -- /v1/corridors --------------------------------------------------------------------------


class CorridorsQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    chain_id: Annotated[int, Field(ge=1, le=2**53), BeforeValidator(integral_number)] | None = (
        Field(default=None, description="One chain; omitted, every chain of the key's environment")
    )


class CorridorToken(ApiModel):
    symbol: str
    address: str = Field(description="Checksummed token address")
    decimals: int


class Corridor(ApiModel):
    chain_id: int
    pair: str = Field(description="`<base symbol>_<quote symbol>`, e.g. USDC_NGNS")
    mode: Literal["RFQ", "BOOK"] = Field(
        description="BOOK: served only by resting limit orders; RFQ: by the makers' quotes "
        "(resting orders may rest there too)"
    )
    base: CorridorToken
    quote: CorridorToken
    fee_bps: int = Field(description="Reactor fee, basis points of each order's output")
    reactor: str = Field(description="Settlement reactor: swaps' approval target")
    signature_transfer: str = Field(
        description="Signature-allowance (Permit2-compatible) contract that limit-order makers "
        "approve"
    )


class CorridorList(RootModel[list[Corridor]]):
    """Corridors by chain id, then in the venue's order."""


# -- /_sim/idempotency ----------------------------------------------------------------------


class IdempotencyRecordView(ApiModel):
    caller: str = Field(description="`key:<key id>` (or `ip:<address>`)")
    method: str
    path: str
    key: str = Field(description="The Idempotency-Key value")
    state: Literal["in_flight", "finished"]
    status: int | None = Field(description="The stored response's status (null in flight)")
    created_at: str
    expires_at: str


class IdempotencyRecords(ApiModel):
    records: list[IdempotencyRecordView] = Field(description="Live records, oldest first")
