"""Shapes of /_sim/ramp: the provider sandbox's controls as the simulator proxies them
(docs/provider-sandbox.md "Controls"; field names are the sandbox's own)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel

from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.api.ramp.schemas import DECIMAL_PATTERN

Decimal = Annotated[str, Field(pattern=DECIMAL_PATTERN, max_length=50)]
ChainList = Annotated[list[Annotated[int, Field(ge=1, le=2**53)]], Field(max_length=16)]


class _Control(ApiModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RampInfo(SnakeApiModel):
    provider: str = Field(description="The provider id the ramp serves")
    url: str | None = Field(description="The provider (sandbox) base URL; null before start-up")
    in_process: bool = Field(description="true: rfqsim started the sandbox in its own process")
    webhook_url: str = Field(description="Where the provider's status webhooks reach rfqsim")
    webhook_secret: str = Field(
        description="The HMAC secret the provider signs its webhooks with (tests forge late ones)"
    )


class SandboxAnswer(RootModel[dict[str, Any]]):
    """The sandbox's own answer, passed through unchanged."""


class PayIn(_Control):
    mode: Literal["exact", "short", "late"] = "exact"
    amount: Decimal | None = Field(default=None, description="short: what arrives")


class Advance(_Control):
    to: str | None = Field(default=None, max_length=40, description="a later provider status")


class Fail(_Control):
    refund: bool = False


class Sides(_Control):
    buy: bool | None = None
    sell: bool | None = None


class Switches(_Control):
    enabled: bool | None = None
    sides: Sides | None = None
    chains: ChainList | None = None
    sandbox_chains: ChainList | None = None
    business_profile_sells: bool | None = None


class WebhookMode(_Control):
    mode: Literal["deliver", "drop", "delay"]
    delay_seconds: Annotated[float, Field(ge=0, le=86400)] | None = None


class Reachability(_Control):
    reachable: bool


class RateShift(_Control):
    percent: Annotated[float, Field(gt=-100, le=1000)]


class SandboxSettings(_Control):
    review_delay_seconds: Annotated[float, Field(ge=0, le=86400)] | None = None
    step_delay_seconds: Annotated[float, Field(ge=0, le=86400)] | None = None
    max_buy: Decimal | None = None
    api_latency_ms: Annotated[int, Field(ge=0, le=600_000)] | None = None


class KycOutcome(_Control):
    outcome: Literal["approve", "reject", "expire"]
