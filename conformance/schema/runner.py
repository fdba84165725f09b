"""Run schemathesis against a target's ``/v2/openapi.json``, ``/feed/openapi.json`` and
``/v1/openapi.json`` and collect a verdict: :func:`run` loads the documents once (by URL, as
schemathesis 4 has no in-process aiohttp loader, with the explicit links of ``links.py`` added),
checks the deviations file against their operations and checks, then runs each pass of
:data:`conformance.schema.settings.PASSES` (``keyed``: every v2 operation and phase with the run's
API key; ``keyed-rfq-stateful``: request -> status / cancel / submit; ``keyless``: the wallet app's
operations with fresh ``takerProof`` signatures; ``feed``; ``v1``) with the harness' hooks
registered (deviation filter, corridor steering, proof signer, webhook janitor). Every phase runs,
with positive and negative data and every check schemathesis has plus ``rfqsim_request_id``
(``checks.py``); each scenario the engine reports is recorded into a
:class:`~conformance.schema.results.PassResult`, and failures matched by a reviewed entry of
``conformance/schema_deviations.yaml`` are accepted and counted while everything else is a failure
of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from schemathesis.engine import Status, events, from_schema

from conformance.schema.auth import RunCredentials, redact, scrub
from conformance.schema.config import (
    build_config,
    check_names,
    explicit_links_resolved,
    load_schema,
)
from conformance.schema.deviations import DeviationSet, Observed
from conformance.schema.hooks import (
    CorridorSteering,
    DeviationFilter,
    ProofSigner,
    WebhookJanitor,
)
from conformance.schema.links import operation_labels
from conformance.schema.results import (
    SNIPPET,
    FailureRecord,
    OperationStats,
    PassResult,
    RunError,
    RunResult,
)
from conformance.schema.settings import (
    FEED_OPENAPI_PATH,
    PASSES,
    V1_OPENAPI_PATH,
    PassPlan,
    RunSettings,
)
from conformance.wire.client import Client


def _request_text(interaction: Any) -> str:
    request = interaction.request
    body = (request.body or b"")[:SNIPPET].decode("utf-8", "replace")
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
                response=scrub((response.content or b"")[:SNIPPET].decode("utf-8", "replace"))
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
    caller: RunCredentials,
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
    """The target's published pairs (``GET /pairs``), to steer the feed pass' queries. A 429
    (the per-IP backstop, which the passes before may have used up when a run keeps the
    target's own limits) is waited out once, as its Retry-After says."""
    resp = Client(base_url).get("/pairs")
    retry_after = resp.headers.get("Retry-After")
    if resp.status == 429 and retry_after is not None and retry_after.isdigit():
        time.sleep(min(int(retry_after), 60) + 0.5)
        resp = Client(base_url).get("/pairs")
    if resp.status != 200 or not isinstance(resp.body, list):
        raise RunError(f"cannot read {base_url}/pairs: {resp.describe()}")
    return [p for p in resp.body if isinstance(p, dict)]


def run(
    base_url: str,
    caller: RunCredentials,
    settings: RunSettings,
    deviations: DeviationSet,
    *,
    write_junit: Callable[[RunResult], None] | None = None,
) -> RunResult:
    """Every pass against ``base_url``; writes the JUnit report through ``write_junit``."""
    base_url = base_url.rstrip("/")
    probe_config = build_config(base_url, caller, settings, keyed=False)
    probe = load_schema(base_url, probe_config)
    labels = {
        **operation_labels(probe.raw_schema),
        **operation_labels(load_schema(base_url, probe_config, FEED_OPENAPI_PATH).raw_schema),
        **operation_labels(load_schema(base_url, probe_config, V1_OPENAPI_PATH).raw_schema),
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
