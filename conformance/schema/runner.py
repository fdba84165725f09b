"""Run schemathesis against a target's ``/v2/openapi.json`` and ``/feed/openapi.json`` and
collect a verdict.

One run is four passes (:data:`PASSES`), each loading its document by URL (schemathesis 4 has no
in-process aiohttp loader) with the explicit links of ``links.py`` added; three go over the v2
document:

* ``keyed``: every operation, every phase, authenticated with the run's API key (the document's
  ``bearerKey`` and ``apiKeyHeader`` schemes both get it); its stateful phase chains webhooks;
* ``keyed-rfq-stateful``: the stateful phase alone over the RFQ operations, chaining
  request -> status / cancel / submit with the key and the claim token;
* ``keyless``: the operations a wallet app calls without a key (ladder, preview, firm request,
  and status / cancel / submit through the claim token the request returned), with fresh
  ``takerProof`` signatures (``hooks.ProofSigner``);

and one over the rates feed's own document: ``feed``, every operation without credentials, with
a share of the generated ``ticker_id``/``base``/``target`` values drawn from the target's pairs
(``GET /pairs``) so that 200s are reached, not only 404s.

Every phase runs (examples, coverage, fuzzing, stateful), with positive and negative data and
every check schemathesis has, plus ``rfqsim_request_id`` (``checks.py``). Failures matched by a
reviewed entry of ``conformance/schema_deviations.yaml`` are accepted and counted; everything
else is a failure of the run.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import schemathesis
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import Status, events, from_schema
from schemathesis.specs.openapi.stateful import collect_transitions

from conformance.client import Client
from conformance.schema.auth import Caller, redact, scrub
from conformance.schema.checks import REQUEST_ID_CHECK
from conformance.schema.deviations import DEFAULT_PATH, DeviationSet, Observed
from conformance.schema.hooks import (
    CorridorSteering,
    DeviationFilter,
    ProofSigner,
    WebhookJanitor,
)
from conformance.schema.links import LINKS, add_links, operation_labels

OPENAPI_PATH = "/v2/openapi.json"
FEED_OPENAPI_PATH = "/feed/openapi.json"
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
FULL_MIN_REQUESTS = 1000  # the issue's bar for a full run
MAX_RESPONSE_TIME_S = 15.0  # a hang, not the reply budget (conformance tests judge that)
ALL_PHASES = ("examples", "coverage", "fuzzing", "stateful")
RFQ_CHAIN = ("rfqRequest", "rfqGet", "rfqCancel", "rfqSubmit")
KEYLESS_OPERATIONS = ("rfqLevels", "rfqPreview", *RFQ_CHAIN)
ENV_SEED = "RFQSIM_SCHEMATHESIS_SEED"
ENV_MAX_EXAMPLES = "RFQSIM_SCHEMATHESIS_MAX_EXAMPLES"
ENV_FULL = "RFQSIM_SCHEMATHESIS_FULL"
ENV_RATE_LIMIT = "RFQSIM_SCHEMATHESIS_RATE_LIMIT"
_SNIPPET = 600


class RunError(RuntimeError):
    """Schemathesis could not run at all (schema not loadable, engine crash)."""


@dataclass(frozen=True)
class RunSettings:
    seed: int = DEFAULT_SEED
    max_examples: int = DEFAULT_MAX_EXAMPLES  # per operation and phase (stateful: x3)
    stateful_steps: int = DEFAULT_STATEFUL_STEPS  # max steps of one stateful scenario
    full: bool = False  # the >= FULL_MIN_REQUESTS run
    keyless: bool = True  # run the keyless pass too
    rate_limit: str | None = None  # schemathesis rate limit, e.g. "5/s" (other deployments)
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
)


@dataclass
class FailureRecord:
    """One distinct failure nobody accepted (repeats counted, not listed)."""

    pass_name: str
    phase: str
    operation: str  # schemathesis label, "POST /v2/rfq/request"
    checks: tuple[str, ...]
    title: str
    message: str
    request: str  # method, URL, headers (credentials redacted), body
    status: int | None
    response: str  # body snippet
    count: int = 1

    def describe(self) -> str:
        checks = ", ".join(self.checks) or "check error"
        where = f"[{self.pass_name}/{self.phase}] {self.operation}"
        return (
            f"{where}: {self.title} ({checks}; x{self.count})"
            f"\n  {self.message.strip()[:_SNIPPET]}\n  request: {self.request}"
            f"\n  response: {self.status} {self.response}"
        )


@dataclass
class OperationStats:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)  # "400 invalid_request/reason"
    phases: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    elapsed: float = 0.0


@dataclass
class PassResult:
    name: str
    caller: str  # keyed | keyless
    operations: dict[str, OperationStats] = field(default_factory=dict)
    failures: dict[tuple[str, ...], FailureRecord] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # engine errors (non-fatal)
    transitions: Counter[str] = field(default_factory=Counter)  # applied links by name
    transition_statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    proofs_signed: int = 0
    steered: int = 0  # positive cases whose token pair was steered to a served direction
    webhooks_created: int = 0
    elapsed: float = 0.0

    @property
    def requests(self) -> int:
        return sum(stats.requests for stats in self.operations.values())


@dataclass
class RunResult:
    base_url: str
    settings: RunSettings
    deviations: DeviationSet
    links: list[str]
    operation_ids: dict[str, str]  # label -> operationId
    check_names: list[str]
    passes: list[PassResult] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.passes)

    def failures(self, checks: Iterable[str] | None = None) -> list[FailureRecord]:
        """Unaccepted failures, optionally only those reported by one of ``checks``."""
        wanted = None if checks is None else set(checks)
        return [
            f
            for p in self.passes
            for f in p.failures.values()
            if wanted is None or wanted.intersection(f.checks)
        ]

    def errors(self) -> list[str]:
        return [f"[{p.name}] {e}" for p in self.passes for e in p.errors]

    def transitions(self, caller: str | None = None) -> Counter[str]:
        """Applied links by name, over every pass (or those of one caller)."""
        total: Counter[str] = Counter()
        for p in self.passes:
            if caller is None or p.caller == caller:
                total.update(p.transitions)
        return total

    def transition_statuses(self, caller: str | None = None) -> Counter[tuple[str, int]]:
        total: Counter[tuple[str, int]] = Counter()
        for p in self.passes:
            if caller is None or p.caller == caller:
                total.update(p.transition_statuses)
        return total

    def summary(self) -> str:
        lines = [
            f"schemathesis against {self.base_url}: {self.requests} requests "
            f"(seed {self.settings.seed}, max-examples {self.settings.max_examples}, "
            f"{'full' if self.settings.full else 'default'} run)"
        ]
        for p in self.passes:
            lines.append(
                f"  {p.name}: {p.requests} requests in {p.elapsed:.1f}s, "
                f"{len(p.failures)} distinct failures, {len(p.errors)} engine errors, "
                f"links followed {dict(sorted(p.transitions.items()))}"
            )
        used = self.deviations.usage
        lines.append(
            "  accepted deviations: "
            + (", ".join(f"{k} x{v.hits}" for k, v in sorted(used.items())) or "none")
        )
        unused = [d.id for d in self.deviations.unused()]
        if unused:
            lines.append(f"  deviations not seen in this run: {', '.join(unused)}")
        return "\n".join(lines)


def check_names() -> list[str]:
    """Every check the run enables: the built-in ones and ours (registered on import)."""
    load_all_checks()
    names = sorted({*CHECKS.get_all_names(), "max_response_time"})
    if REQUEST_ID_CHECK not in names:
        raise RunError(f"the {REQUEST_ID_CHECK} check is not registered")
    return names


def _dictionaries(
    caller: Caller, pairs: list[Mapping[str, str]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """schemathesis dictionaries and parameter bindings steering a share of generated values to
    ones the service serves: its chains, corridor tokens, the run's taker, sane sizes, and the
    feed's ticker ids and symbols."""
    values: dict[str, list[Any]] = {
        "chains": list(caller.chain_ids),
        "tokens": caller.tokens(),
        "takers": [caller.taker.address],
        "amounts": caller.amounts(),
        "webhook_urls": [caller.webhook_url],
        "ticker_ids": [p["ticker_id"] for p in pairs],
        "bases": sorted({p["base"] for p in pairs}),
        "targets": sorted({p["target"] for p in pairs}),
    }
    # Probabilities: most draws reach real paths, the rest stay arbitrary (and meet the
    # service's own 400s, which the deviations file accounts for).
    bindings = {
        "query.chainId": ("chains", 0.9),
        "body.chainId": ("chains", 0.9),
        "body.sellToken": ("tokens", 0.9),
        "body.buyToken": ("tokens", 0.9),
        "body.taker": ("takers", 0.9),
        "body.sellAmount": ("amounts", 0.8),
        "body.buyAmount": ("amounts", 0.8),
        "body.url": ("webhook_urls", 0.8),
        "query.ticker_id": ("ticker_ids", 0.8),
        "query.base": ("bases", 0.6),
        "query.target": ("targets", 0.6),
    }
    dictionaries = {name: {"values": v} for name, v in values.items() if v}
    parameters = {
        key: {"dictionary": name, "probability": p}
        for key, (name, p) in bindings.items()
        if name in dictionaries
    }
    return dictionaries, parameters


def build_config(
    base_url: str,
    caller: Caller,
    settings: RunSettings,
    *,
    keyed: bool,
    phases: tuple[str, ...] = ALL_PHASES,
    operations: tuple[str, ...] | None = None,
    pairs: list[Mapping[str, str]] | None = None,
) -> SchemathesisConfig:
    """The schemathesis configuration of one pass (``operations``: operationIds to test, all
    when None; ``pairs``: the feed's pairs, to steer its query parameters)."""
    dictionaries, parameters = _dictionaries(caller, pairs or [])
    selection: list[dict[str, Any]] = [
        {
            "include-operation-id": list(RICH_OPERATIONS),
            "generation": {"max-examples": settings.max_examples * RICH_FACTOR},
        }
    ]
    if operations is not None:
        # Deselect the rest through the config: an `[[operations]]` entry plus
        # `schema.include()` would select everything (schemathesis ORs the two).
        selection.append({"exclude-operation-id": list(operations), "enabled": False})
    project: dict[str, Any] = {
        "seed": settings.seed,
        "base-url": base_url,
        "workers": 1,
        "continue-on-failure": True,
        "request-timeout": settings.request_timeout,
        "cache": {"enabled": False},
        "generation": {
            "mode": "all",
            "max-examples": settings.max_examples,
            "database": "none",
            # Keyless: no generated Authorization / X-API-Key / X-Rfq-Claim headers; a
            # wallet app sends none (the claim token comes from the links).
            "with-security-parameters": keyed,
        },
        "checks": {
            "enabled": True,
            "max_response_time": MAX_RESPONSE_TIME_S,
        },
        "phases": {
            "examples": {"enabled": "examples" in phases},
            "coverage": {"enabled": "coverage" in phases},
            "fuzzing": {"enabled": "fuzzing" in phases},
            "stateful": {
                "enabled": "stateful" in phases,
                "max-steps": settings.stateful_steps,
                # Scenarios are what reach the chained operations: give them more draws.
                "generation": {"max-examples": settings.max_examples * STATEFUL_FACTOR},
                # Only the explicit links of links.py: inferred ones would make
                # POST /v2/rfq/{id}/submit a root and spend the budget on random ids.
                "inference": {"algorithms": []},
            },
        },
        "operations": selection,
        # An unconstrained string path parameter (`{rfq_id}`) with no security parameters to
        # mutate leaves negative generation almost nothing to draw: hypothesis' filter_too_much
        # health check is about the generator, not about the service.
        "suppress-health-check": ["filter_too_much"],
        "warnings": False,
    }
    if dictionaries:
        project["dictionaries"] = dictionaries
        project["parameters"] = parameters
    if settings.rate_limit:
        project["rate-limit"] = settings.rate_limit
    if keyed and caller.api_key:
        project["auth"] = {
            "openapi": {
                "bearerKey": {"bearer": caller.api_key},
                "apiKeyHeader": {"api_key": caller.api_key},
            }
        }
    return SchemathesisConfig.from_dict(project)


def load_schema(base_url: str, config: SchemathesisConfig, document: str = OPENAPI_PATH) -> Any:
    """The target's document, loaded by URL without credentials, with the harness' links (the
    v2 document's: the feed's has nothing to chain)."""
    try:
        schema = schemathesis.openapi.from_url(f"{base_url}{document}", config=config)
    except Exception as exc:
        raise RunError(f"cannot load {base_url}{document}: {exc}") from exc
    if document == OPENAPI_PATH:
        add_links(schema.raw_schema)
    return schema


def explicit_links_resolved(schema: Any) -> list[str]:
    """Names of the harness' links schemathesis resolved into transitions (raises if invalid)."""
    operations = [result.ok() for result in schema.get_all_operations()]
    transitions = collect_transitions(operations)
    ours = {link.name for link in LINKS}
    return sorted(
        {
            link.name
            for entry in transitions.operations.values()
            for link in entry.outgoing
            if link.name in ours
        }
    )


def _request_text(interaction: Any) -> str:
    request = interaction.request
    body = (request.body or b"")[:_SNIPPET].decode("utf-8", "replace")
    return scrub(f"{request.method} {request.uri} {redact(request.headers)} {body}")


def _record_failures(result: PassResult, phase: str, recorder: Any) -> None:
    for case_id, nodes in recorder.checks.items():
        for node in nodes:
            if node.status == Status.SUCCESS:
                continue
            if node.failure_info is None:  # the check itself crashed
                checks: tuple[str, ...] = (node.name,)
                title, message, failure_case = f"check {node.name} crashed", "", case_id
            else:
                failure = node.failure_info.failure
                checks = tuple(type(failure).checks) or (node.name,)
                title, message = str(failure.title), str(failure.message)
                failure_case = failure.case_id or case_id
            interaction = recorder.interactions.get(failure_case)
            node_case = recorder.cases.get(failure_case)
            operation = str(node_case.value.operation.label) if node_case else recorder.label
            response = interaction.response if interaction is not None else None
            key = (phase, operation, *checks, title, message[:200])
            if key in result.failures:
                result.failures[key].count += 1
                continue
            result.failures[key] = FailureRecord(
                pass_name=result.name,
                phase=phase,
                operation=operation,
                checks=checks,
                title=title,
                message=scrub(message),
                request=_request_text(interaction) if interaction is not None else "",
                status=response.status_code if response is not None else None,
                response=scrub((response.content or b"")[:_SNIPPET].decode("utf-8", "replace"))
                if response is not None
                else "",
            )


def link_name(transition_id: str) -> str:
    """``"POST /v2/rfq/request -> [200] GetRfq -> GET /v2/rfq/{rfq_id}"`` -> ``"GetRfq"``."""
    _, _, rest = transition_id.partition("] ")
    name, _, _ = rest.partition(" -> ")
    return name or transition_id


def _outcome(response: Any) -> str:
    """``"200"``, ``"400 invalid_request/corridor_unavailable"``: a status and its error code."""
    code, reason, issues = Observed.error_fields(response.content)
    if code is None:
        return str(response.status_code)
    detail = reason or ("issues" if issues else "")
    return f"{response.status_code} {code}" + (f"/{detail}" if detail else "")


def _record_scenario(result: PassResult, phase: str, event: Any) -> None:
    recorder = event.recorder
    for case_id, interaction in recorder.interactions.items():
        node = recorder.cases.get(case_id)
        label = str(node.value.operation.label) if node else recorder.label
        stats = result.operations.setdefault(label, OperationStats())
        stats.requests += 1
        stats.phases[phase] += 1
        if interaction.response is not None:
            stats.statuses[interaction.response.status_code] += 1
            stats.outcomes[_outcome(interaction.response)] += 1
        if node is not None and node.transition is not None and node.is_transition_applied:
            link = link_name(str(node.transition.id))
            result.transitions[link] += 1
            if interaction.response is not None:
                result.transition_statuses[(link, interaction.response.status_code)] += 1
    if event.status == Status.SKIP and event.label:
        stats = result.operations.setdefault(str(event.label), OperationStats())
        stats.skipped.append(f"{phase}: {event.skip_reason or 'skipped'}")
    if event.label and event.label in result.operations:
        result.operations[event.label].elapsed += event.elapsed_time
    _record_failures(result, phase, recorder)


def execute(schema: Any, result: PassResult) -> None:
    started = time.monotonic()
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            if event.is_test_scenario:
                _record_scenario(result, str(event.phase.value), event)
        elif isinstance(event, events.FuzzScenarioFinished):
            _record_scenario(result, "fuzz", event)
        elif isinstance(event, events.NonFatalError):
            result.errors.append(f"{event.label}: {event.info.format()}".strip())
        elif isinstance(event, events.FatalError):
            raise RunError(f"schemathesis engine error: {event.exception!r}") from event.exception
    result.elapsed = time.monotonic() - started


def run_pass(
    base_url: str,
    caller: Caller,
    settings: RunSettings,
    deviations: DeviationSet,
    plan: PassPlan,
) -> PassResult:
    keyed = plan.caller == "keyed"
    pairs = feed_pairs(base_url) if plan.document == FEED_OPENAPI_PATH else None
    config = build_config(
        base_url,
        caller,
        settings,
        keyed=keyed,
        phases=plan.phases,
        operations=plan.operations,
        pairs=pairs,
    )
    schema = load_schema(base_url, config, plan.document)
    labels = operation_labels(schema.raw_schema)
    result = PassResult(name=plan.name, caller=plan.caller)
    steering = CorridorSteering(caller)
    hooks: list[tuple[Callable[..., Any], str]] = [
        (DeviationFilter(deviations, labels, plan.caller), "filter_failure"),
        (steering, "map_case"),
    ]
    janitor = WebhookJanitor(Client(base_url), caller.api_key) if keyed and caller.api_key else None
    signer = None if keyed else ProofSigner(caller)
    if janitor is not None:
        hooks.append((janitor, "after_call"))
    if signer is not None:
        hooks.append((signer, "map_case"))
    for hook, hook_name in hooks:
        schema.hooks.register_hook_with_name(hook, hook_name)
    try:
        execute(schema, result)
    finally:
        if janitor is not None:
            janitor.cleanup()
            result.webhooks_created = janitor.created
    result.proofs_signed = signer.signed if signer is not None else 0
    result.steered = steering.steered
    return result


def feed_pairs(base_url: str) -> list[Mapping[str, str]]:
    """The target's published pairs (``GET /pairs``), to steer the feed pass' queries."""
    resp = Client(base_url).get("/pairs")
    if resp.status != 200 or not isinstance(resp.body, list):
        raise RunError(f"cannot read {base_url}/pairs: {resp.describe()}")
    return [p for p in resp.body if isinstance(p, dict)]


def run(
    base_url: str,
    caller: Caller,
    settings: RunSettings,
    deviations: DeviationSet,
    *,
    write_junit: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Every pass against ``base_url``; writes the JUnit report through ``write_junit``."""
    base_url = base_url.rstrip("/")
    probe_config = build_config(base_url, caller, settings, keyed=False)
    probe = load_schema(base_url, probe_config)
    feed_probe = load_schema(base_url, probe_config, FEED_OPENAPI_PATH)
    labels = {
        **operation_labels(probe.raw_schema),
        **operation_labels(feed_probe.raw_schema),
    }
    names = check_names()
    deviations.validate_against(labels.values(), names)
    result = RunResult(
        base_url=base_url,
        settings=settings,
        deviations=deviations,
        links=explicit_links_resolved(probe),
        operation_ids=labels,
        check_names=names,
    )
    for plan in PASSES:
        if (plan.caller == "keyed" and not caller.api_key) or (
            plan.name == "keyless" and not settings.keyless
        ):
            continue
        result.passes.append(run_pass(base_url, caller, settings, deviations, plan))
    if write_junit is not None:
        write_junit(result)
    return result
