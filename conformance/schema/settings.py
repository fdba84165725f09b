"""What one schemathesis run is asked to do: :class:`RunSettings` (seed, examples per operation and
phase, stateful steps, the full run, the keyless pass, a rate limit for shared deployments, the
deviations file and the JUnit path), read from defaults, then the ``RFQSIM_SCHEMATHESIS_*``
environment, then explicit overrides; and :data:`PASSES`, the engine runs (:class:`PassPlan`: which
document, caller, operations and phases): three over the v2 document, with the reason there are
three, one over the rates feed's and one over the closed v1 API's. The budgets shared with the
engine configuration (rich operations, stateful factor, the response-time ceiling) are here too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.schema.deviations import DEFAULT_PATH

OPENAPI_PATH = "/v2/openapi.json"
FEED_OPENAPI_PATH = "/feed/openapi.json"
V1_OPENAPI_PATH = "/v1/openapi.json"
DEFAULT_SEED = 42
DEFAULT_MAX_EXAMPLES = 10
FULL_MAX_EXAMPLES = 40
DEFAULT_STATEFUL_STEPS = 6
FULL_STATEFUL_STEPS = 10
STATEFUL_FACTOR = 3  # stateful scenarios per run = max_examples * this
# The operations whose 200s need the most luck (served pair, exactly one amount, a size the
# taker can fund) get more fuzzing draws than the rest.
RICH_OPERATIONS = ("rfqPreview", "rfqRequest")
RICH_FACTOR = 3
FULL_MIN_REQUESTS = 1000  # the bar for a full run
MAX_RESPONSE_TIME_S = 15.0  # a hang, not the reply budget (conformance tests judge that)
ALL_PHASES = ("examples", "coverage", "fuzzing", "stateful")
RFQ_CHAIN = ("rfqRequest", "rfqGet", "rfqCancel", "rfqSubmit")
KEYLESS_OPERATIONS = ("rfqLevels", "rfqPreview", *RFQ_CHAIN)
ENV_SEED = "RFQSIM_SCHEMATHESIS_SEED"
ENV_MAX_EXAMPLES = "RFQSIM_SCHEMATHESIS_MAX_EXAMPLES"
ENV_FULL = "RFQSIM_SCHEMATHESIS_FULL"
ENV_RATE_LIMIT = "RFQSIM_SCHEMATHESIS_RATE_LIMIT"
ENV_DEFAULT_LIMITS = "RFQSIM_SCHEMATHESIS_DEFAULT_LIMITS"


@dataclass(frozen=True)
class RunSettings:
    seed: int = DEFAULT_SEED
    max_examples: int = DEFAULT_MAX_EXAMPLES  # per operation and phase (stateful: x3)
    stateful_steps: int = DEFAULT_STATEFUL_STEPS  # max steps of one stateful scenario
    full: bool = False  # the >= FULL_MIN_REQUESTS run
    keyless: bool = True  # run the keyless pass too
    rate_limit: str | None = None  # schemathesis rate limit, e.g. "5/s" (other deployments)
    # Simulator targets: keep its configured limits and use a default-tier key, so 429s (the
    # per-IP backstop, the per-key limiter) come up and are judged against the document.
    default_limits: bool = False
    request_timeout: float = 30.0
    deviations_path: Path = DEFAULT_PATH
    junit_path: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> RunSettings:
        """Defaults, then ``RFQSIM_SCHEMATHESIS_*`` variables, then ``overrides``."""
        env = os.environ if environ is None else environ
        full = env.get(ENV_FULL, "").strip().lower() in ("1", "true", "yes", "on")
        values: dict[str, Any] = {
            "full": full,
            "max_examples": FULL_MAX_EXAMPLES if full else DEFAULT_MAX_EXAMPLES,
            "stateful_steps": FULL_STATEFUL_STEPS if full else DEFAULT_STATEFUL_STEPS,
        }
        if env.get(ENV_SEED, "").strip():
            values["seed"] = int(env[ENV_SEED])
        if env.get(ENV_MAX_EXAMPLES, "").strip():
            values["max_examples"] = int(env[ENV_MAX_EXAMPLES])
        if env.get(ENV_RATE_LIMIT, "").strip():
            values["rate_limit"] = env[ENV_RATE_LIMIT].strip()
        if env.get(ENV_DEFAULT_LIMITS, "").strip().lower() in ("1", "true", "yes", "on"):
            values["default_limits"] = True
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        if settings.max_examples < 1 or settings.stateful_steps < 2:
            raise ValueError("max_examples must be >= 1 and stateful_steps >= 2")
        return settings


@dataclass(frozen=True)
class PassPlan:
    """One engine run: which caller, which operations, which phases."""

    name: str
    caller: str  # keyed | keyless
    operations: tuple[str, ...] | None  # operationIds (None: every operation)
    phases: tuple[str, ...]
    document: str = OPENAPI_PATH  # the document the pass loads


# Why three passes: schemathesis starts stateful scenarios only from operations it rates as
# "reliable roots", and its dependency heuristics read `chainId` as a foreign key to a resource
# no operation produces, which demotes POST /v2/rfq/request while POST /v1/webhooks qualifies.
# The full keyed pass therefore chains webhooks; a stateful-only keyed pass over the RFQ
# operations (where the request is the only root) chains request -> status/cancel/submit.
PASSES = (
    PassPlan("keyed", "keyed", None, ALL_PHASES),
    PassPlan("keyed-rfq-stateful", "keyed", RFQ_CHAIN, ("stateful",)),
    PassPlan("keyless", "keyless", KEYLESS_OPERATIONS, ALL_PHASES),
    # The feed declares no links: nothing for a stateful phase to chain.
    PassPlan("feed", "keyless", None, ("examples", "coverage", "fuzzing"), FEED_OPENAPI_PATH),
    # The closed v1 API with the same key (it holds every v1 scope); its stateful phase chains
    # whatever links the document declares.
    PassPlan("v1", "keyed", None, ALL_PHASES, V1_OPENAPI_PATH),
)
