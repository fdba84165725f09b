"""Shapes shared by every API area: the error envelope, the rates feed's error body and health
bodies."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from rfqkit.wire import WireModel
from simulator.api.http.fields import Timestamp


class ApiModel(WireModel):
    """Base of every request/response model: camelCase on the wire from the one alias generator
    (rfqkit/wire.py); unknown request fields are refused (400)."""

    # Responses are validated from the services' records and their parts (from_attributes).
    model_config = ConfigDict(extra="forbid", from_attributes=True)


class SnakeApiModel(ApiModel):
    """A shape whose wire names are its Python names (snake_case): the control API's (/_sim is
    ours, not the spec's), the error envelope's `request_id`, the provider's bank details."""

    model_config = ConfigDict(alias_generator=None)


class ErrorIssue(ApiModel):
    field: str = Field(description="Dotted path of the offending field ('' for the whole body)")
    loc: list[str | int] = Field(description="Path of the offending field as a list")
    message: str
    type: str = Field(description="Machine-readable kind of failure")


class ErrorBody(SnakeApiModel):
    model_config = ConfigDict(extra="allow")  # a few codes carry extra members (ramp: kyc, drift)

    code: str = Field(description="Stable machine code")
    message: str = Field(description="Human text; not stable")
    request_id: str = Field(description="Equals the X-Request-Id response header")
    details: dict[str, Any] | None = Field(
        default=None, description="Either `issues` (schema failures) or a `reason` string"
    )


class ErrorEnvelope(ApiModel):
    error: ErrorBody


class FeedError(ApiModel):
    """Errors of the public rates feed (spec 3 "Rates feed errors"): not the envelope."""

    error: str = Field(description="What went wrong, for a person; not stable")


class DependencyCheck(ApiModel):
    status: Literal["up", "down"]
    since: Timestamp = Field(description="Service clock when this status began, ISO-8601 UTC")
    detail: str | None = Field(default=None, description="Why it is down, or a note")


class Health(ApiModel):
    status: Literal["ok", "degraded"] = Field(
        description="`ok` while every dependency is up; `degraded` when any is down (the "
        "process is up and serves what does not need it; the answer is still 200)"
    )
    version: str
    time: str = Field(description="Service clock, ISO-8601 UTC")
    checks: dict[str, DependencyCheck] = Field(
        description="Each dependency by name: `chain:<chainId>` (its node), "
        "`fillIndex:<chainId>` (the fill index following it, judged as /v1/status does), "
        "`provider:<id>` (the ramp provider)"
    )
