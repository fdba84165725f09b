"""schemathesis over the target's ``/v2/openapi.json`` (docs/schemathesis.md).

One run per session (``schemathesis_run``): a keyed pass over every operation, a stateful keyed
pass over the RFQ chain and a keyless pass with fresh proofs of control; every phase, positive
and negative data, every check. The tests below split its verdict by check, so a failure shows
up next to the spec rules it breaks; failures the reviewed deviations file accepts are counted,
not raised. JUnit XML goes to ``<--conformance-report>/schemathesis-junit.xml``.

Environment (pytest options cannot be added outside the plugin):

* ``RFQSIM_SCHEMATHESIS_SEED`` (default 42), ``RFQSIM_SCHEMATHESIS_MAX_EXAMPLES``;
* ``RFQSIM_SCHEMATHESIS_FULL=1``: the long run, which must reach 1,000 requests;
* ``RFQSIM_API_KEY`` (required against a target that is not a simulator), ``RFQSIM_TAKER_KEY``;
* ``RFQSIM_SCHEMATHESIS_RATE_LIMIT``, e.g. ``5/s`` against a shared deployment;
* ``RFQSIM_SCHEMATHESIS_DEFAULT_LIMITS=1``: a simulator's own limits and a default-tier key, so
  the run meets 429s and judges them against the document.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
from conformance.schema import junit
from conformance.schema.auth import external_caller, simulator_caller
from conformance.schema.config import build_config, explicit_links_resolved, load_schema
from conformance.schema.deviations import DeviationFileError, Observed, load, parse
from conformance.schema.links import LINKS, LinkError, add_links
from conformance.schema.results import FailureRecord, RunResult
from conformance.schema.runner import run
from conformance.schema.settings import ENV_MAX_EXAMPLES, FULL_MIN_REQUESTS, RunSettings
from conformance.wire.inputs import TAKER_SCOPES, GivenKey
from conformance.wire.needs import skip_message

# The timeout covers a full run (about 3 minutes here) on a slower machine, and a default run
# paced at 55 requests a minute against a target whose limits cannot be raised (more than 30
# minutes: docs/conformance.md).
pytestmark = [pytest.mark.timeout(5400), pytest.mark.xdist_group("schemathesis")]

JUNIT_NAME = "schemathesis-junit.xml"
PACED_RATE = "55/m"  # under the spec's default tier (60 requests per minute)
PACED_MAX_EXAMPLES = 2  # per operation and phase in a paced run (the default run has 10)


SERVER_CHECKS = ("not_a_server_error", "max_response_time")
DOCUMENT_CHECKS = (
    "response_schema_conformance",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
)
INPUT_CHECKS = (
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
)
AUTH_CHECKS = ("ignored_auth", "object_level_authorization")
STATEFUL_CHECKS = ("use_after_free", "ensure_resource_availability")
REQUEST_ID_CHECKS = ("rfqsim_request_id",)
GROUPED = {
    *SERVER_CHECKS,
    *DOCUMENT_CHECKS,
    *INPUT_CHECKS,
    *AUTH_CHECKS,
    *STATEFUL_CHECKS,
    *REQUEST_ID_CHECKS,
}


def _report_dir(config: pytest.Config) -> Path:
    directory = Path(config.getoption("--conformance-report"))
    return directory if directory.is_absolute() else config.invocation_params.dir / directory


def _explain(failures: Iterable[FailureRecord], result: RunResult) -> str:
    listed = "\n\n".join(f.describe() for f in failures)
    return (
        f"{listed}\n\n{result.summary()}\n"
        "Fix the service or its document, or (after review) add a narrowly scoped entry to "
        "conformance/schema_deviations.yaml."
    )


# Session scope: one run per worker even when other modules' tests run between these on the
# same worker (a module-scoped run would be torn down and started again). The module is one
# xdist group, so under `-n N --dist loadgroup` one worker runs the engine, once (the
# repository's tests/xdist_groups.py makes loadgroup group under pytest 9).
@pytest.fixture(scope="session")
def schemathesis_run(request: pytest.FixtureRequest, target: Target) -> RunResult:
    junit_path = _report_dir(request.config) / JUNIT_NAME
    settings = RunSettings.from_env(junit_path=junit_path)
    deviations = load(settings.deviations_path)

    def write_junit(result: RunResult) -> None:
        junit.write(result, junit_path)

    if target.is_simulator:
        with simulator_caller(target, raise_limits=not settings.default_limits) as caller:
            return run(target.base_url, caller, settings, deviations, write_junit=write_junit)
    inputs = resolved_inputs(target)
    given = inputs.key(TAKER_SCOPES, "test") or inputs.key(TAKER_SCOPES)
    api_key = given.key if given else os.environ.get("RFQSIM_API_KEY", "").strip()
    if not api_key:
        pytest.skip(skip_message("key:trades"))
    wallets = inputs.taker_wallets
    environment = GivenKey(api_key, None).environment
    caller = external_caller(
        target,
        api_key=api_key,
        taker_private_key=wallets[0].private_key if wallets else None,
        chain_ids=[c for c in target.rpc_urls if inputs.environment(c) == environment],
    )
    if settings.rate_limit is None:
        # Limits the suite cannot raise: stay under the spec's default 60/min per key and per
        # client IP, so the run meets no 429 of its own making; fewer examples per operation
        # (unless set) keep the paced run to minutes (docs/conformance.md).
        examples = settings.max_examples
        if not settings.full and not os.environ.get(ENV_MAX_EXAMPLES, "").strip():
            examples = PACED_MAX_EXAMPLES
        settings = replace(settings, rate_limit=PACED_RATE, max_examples=examples)
    return run(target.base_url, caller, settings, deviations, write_junit=write_junit)


def test_deviations_file_is_reviewed_and_narrow() -> None:
    """Loading validates every entry: one check, named operations, a non-empty ``when``, a
    kind, a written reason, and for defects the fix that retires the entry."""
    deviations = load()
    assert deviations.deviations, "the deviations file is empty; remove this test's premise"
    for deviation in deviations.deviations:
        assert deviation.operations
        assert deviation.check
        assert deviation.kind != "defect" or deviation.defect


def _entry(**changes: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": "example",
        "operations": ["rfqRequest"],
        "check": "positive_data_acceptance",
        "kind": "by-design",
        "when": {"status": 400, "error_reason": "corridor_unavailable"},
        "reason": "A reason long enough for a reviewer to judge it against the spec.",
    }
    entry.update(changes)
    return entry


def _seen(**changes: object) -> Observed:
    values: dict[str, object] = {
        "operation": "rfqRequest",
        "checks": ("positive_data_acceptance",),
        "status": 400,
        "error_code": "invalid_request",
        "error_reason": "corridor_unavailable",
        "issues": (),
        "failure_title": "Schema-valid request rejected",
        "failure_message": "",
        "caller": "keyed",
    }
    values.update(changes)
    return Observed(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "entry",
    [
        _entry(when={}),
        _entry(when=None),
        _entry(operations=[]),
        _entry(check=""),
        _entry(reason="because"),
        _entry(kind="defect"),
        _entry(kind="whatever"),
        _entry(when={"status": 400, "path": "/v2"}),
        _entry(extra=True),
    ],
    ids=[
        "empty-when",
        "no-when",
        "no-operation",
        "no-check",
        "short-reason",
        "defect-without-fix",
        "unknown-kind",
        "unknown-when-key",
        "unknown-key",
    ],
)
def test_deviation_entries_are_never_wholesale(entry: dict[str, object]) -> None:
    with pytest.raises(DeviationFileError):
        parse({"deviations": [entry]})


def test_deviation_matches_only_what_it_names() -> None:
    (deviation,) = parse({"deviations": [_entry()]}).deviations
    assert deviation.matches(_seen())
    assert not deviation.matches(_seen(operation="rfqPreview"))
    assert not deviation.matches(_seen(checks=("negative_data_rejection",)))
    assert not deviation.matches(_seen(status=500))
    assert not deviation.matches(_seen(error_reason="insufficient_funds"))
    (by_issue,) = parse(
        {"deviations": [_entry(when={"issue_field": "url", "issue_contains": "Value error"})]}
    ).deviations
    assert by_issue.matches(_seen(issues=(("url", "Value error, must be absolute"),)))
    assert not by_issue.matches(_seen(issues=(("eventTypes", "Value error, x"),)))
    # The rates feed's errors are a bare string: matched by its text.
    (by_text,) = parse(
        {
            "deviations": [
                _entry(operations=["feedTickers"], when={"status": 400, "error_contains": "match"})
            ]
        }
    ).deviations
    feed_body = b'{"error":"base and target do not match ticker_id USDT_NGN"}'
    text = Observed.error_text_of(feed_body)
    assert text == "base and target do not match ticker_id USDT_NGN"
    assert by_text.matches(_seen(operation="feedTickers", error_text=text))
    assert not by_text.matches(_seen(operation="feedTickers", error_text="Unknown ticker_id X"))
    assert not by_text.matches(_seen(operation="feedTickers"))


def test_links_name_existing_operations() -> None:
    document: dict[str, object] = {"paths": {"/x": {"get": {"operationId": "rfqRequest"}}}}
    with pytest.raises(LinkError):
        add_links(document)


@pytest.mark.spec("rfq/versioning/item-4", "rfq/endpoints/get-v2-openapi-json")
def test_document_loads_without_credentials_and_links_resolve(target: Target) -> None:
    """schemathesis loads /v2/openapi.json by URL with no credential, accepts it as OpenAPI and
    resolves every explicit link the harness adds (operations and response codes exist)."""
    caller = external_caller(target, api_key=None)
    settings = RunSettings.from_env()
    schema = load_schema(
        target.base_url, build_config(target.base_url, caller, settings, keyed=False)
    )
    assert str(schema.raw_schema.get("openapi", "")).startswith("3.1"), schema.raw_schema.get(
        "openapi"
    )
    schema.validate()
    assert explicit_links_resolved(schema) == sorted(link.name for link in LINKS)


def test_no_server_errors(schemathesis_run: RunResult) -> None:
    """No 5xx and no hang on any generated request; the engine itself reported no error."""
    failures = schemathesis_run.failures(SERVER_CHECKS)
    errors = schemathesis_run.errors()
    assert not failures, _explain(failures, schemathesis_run)
    assert not errors, "\n".join(errors)


@pytest.mark.spec(
    "rfq/errors/envelope",
    "rfq/endpoints/all-bodies-json",
    "rfq/endpoints/success-bodies-wrapped-data",
    "rfq/errors/no-quote-200-branch-data-status",
)
def test_responses_match_the_document(schemathesis_run: RunResult) -> None:
    """Every response's status, content type, headers and body match the document (success
    bodies in `data`, quote | no_quote by `status`, errors in the envelope)."""
    failures = schemathesis_run.failures(DOCUMENT_CHECKS)
    assert not failures, _explain(failures, schemathesis_run)


@pytest.mark.spec("rfq/errors/400-invalid_request")
def test_invalid_input_rejected_valid_input_accepted(schemathesis_run: RunResult) -> None:
    """Schema-invalid requests are refused (400), schema-valid ones are not (except reviewed
    deviations), unsupported methods are 405 with an accurate Allow."""
    failures = schemathesis_run.failures(INPUT_CHECKS)
    assert not failures, _explain(failures, schemathesis_run)


@pytest.mark.spec(
    "rfq/auth/api-keys/revoked-suspended-unknown-malformed",
    "rfq/auth/claim-token/rfqid-never-sufficient",
    "rfq/errors/401-unauthorized",
)
def test_credentials_are_enforced(schemathesis_run: RunResult) -> None:
    """Stripping or corrupting the credentials of a successful call never succeeds."""
    failures = schemathesis_run.failures(AUTH_CHECKS)
    assert not failures, _explain(failures, schemathesis_run)


@pytest.mark.spec("rfq/endpoints/delete-v1-webhooks-id")
def test_stateful_links_are_followed(schemathesis_run: RunResult, target: Target) -> None:
    """The stateful phase chains request -> status / cancel / submit and webhook create ->
    delete, and the chains behave. Which RFQ links a seeded run happens to follow, and with
    which status, depends on whether the makers quoted each generated request (timing on a
    loaded machine), so only "at least one RFQ link and the webhook link" is required here; the
    claim-token and ownership rules are asserted deterministically in test_claims.py."""
    failures = schemathesis_run.failures(STATEFUL_CHECKS)
    assert not failures, _explain(failures, schemathesis_run)
    if not target.is_simulator:
        return  # another deployment may never quote the run's taker; nothing to chain from
    followed = schemathesis_run.transitions()
    rfq_links = [link.name for link in LINKS if link.name != "DeleteWebhook"]
    assert any(followed[name] for name in rfq_links), (
        f"no RFQ link followed\n{schemathesis_run.summary()}"
    )
    assert followed["DeleteWebhook"], f"webhook link never followed\n{schemathesis_run.summary()}"
    keyed = schemathesis_run.transition_statuses("keyed")
    assert keyed[("DeleteWebhook", 200)], schemathesis_run.summary()


@pytest.mark.spec(
    "rfq/overview/conventions/every-response-carries-x-request-id",
    "rfq/errors/request_id-equals-x-request-id-header",
)
def test_every_response_carries_its_request_id(schemathesis_run: RunResult) -> None:
    failures = schemathesis_run.failures(REQUEST_ID_CHECKS)
    assert not failures, _explain(failures, schemathesis_run)


def test_no_failure_outside_the_groups(schemathesis_run: RunResult) -> None:
    """A check none of the tests above names (a newer schemathesis may add some) still fails."""
    failures = [f for f in schemathesis_run.failures() if not GROUPED.intersection(f.checks)]
    assert not failures, _explain(failures, schemathesis_run)


def test_run_volume_and_report(schemathesis_run: RunResult, request: pytest.FixtureRequest) -> None:
    """The run generated requests in every pass (>= 1,000 for a full run) and wrote JUnit."""
    result = schemathesis_run
    print(result.summary())  # shown with -s / -rA; the JUnit file has the details
    assert all(p.requests for p in result.passes), result.summary()
    if result.settings.full:
        assert result.requests >= FULL_MIN_REQUESTS, result.summary()
    path = _report_dir(request.config) / JUNIT_NAME
    root = ET.parse(path).getroot()
    suites = {suite.get("name") for suite in root.findall("testsuite")}
    assert {f"schemathesis.{p.name}" for p in result.passes} <= suites, suites
    assert "schemathesis.deviations" in suites
