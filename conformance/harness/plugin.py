"""pytest plugin of the conformance harness (entry point ``rfqsim_conformance``).

It is loaded for every pytest run of the repository, so it stays inert unless asked:

* options and markers are registered, nothing else happens at start-up;
* ``spec`` ids are validated only on items that carry the marker;
* the target (a given ``--base-url``, or an ``rfqsim serve`` the plugin starts) is resolved
  lazily, the first time a test requests the ``target`` fixture (or a ``sim_only`` test runs);
* the report is written only when at least one ``spec``-marked test ran, and only by the
  controller process under xdist.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.deployment import loans
from conformance.deployment.service_clock import ServiceClock
from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target, TargetError, TargetManager, parse_rpc_urls
from conformance.deployment.target_inputs import given_inputs, unmet_need
from conformance.harness.plugin_options import add_options
from conformance.report import (
    BASE_URL_PROPERTY,
    INHERENT_PROPERTY,
    RULES_PROPERTY,
    ResultCollector,
    build_matrix,
    control_free_share,
    headline,
    uncovered,
)
from conformance.report.files import write_report
from conformance.rules import Rule, load_rules
from conformance.rules.index import SPEC_MARKER, WORKER_KEY, RuleIndex, spec_rule_ids
from conformance.wire.client import Client
from conformance.wire.inputs import InputError, Inputs
from conformance.wire.needs import INHERENT, InputProblem, control_skip_message, inherent_reason
from conformance.wire.needs import MARKER as NEEDS_MARKER
from conformance.wire.needs import known as known_need
from conformance.wire.proxy_process import findings_of, verdict
from conformance.wire.timing import TimingTolerances
from conformance.wire.timing import from_config as timing_from_config

DOCUMENTS = ("rfq", "ramp", "v1")
SIM_ONLY_MARKER = "sim_only"


@dataclass
class _State:
    manager: TargetManager
    collector: ResultCollector = field(default_factory=ResultCollector)
    index: RuleIndex = field(default_factory=RuleIndex)  # every test's rules, selected or not
    index_error: str | None = None
    matrix: dict[str, Any] | None = None
    report_paths: tuple[Path, Path, Path] | None = None
    proxy_findings: list[dict[str, Any]] = field(
        default_factory=list
    )  # per proxy (--through-proxy)
    lender: loans.RunLender | None = None  # with --base-url, on the controller
    repaid: list[str] = field(default_factory=list)  # what went back, for the summary


_STATE = pytest.StashKey[_State]()
PROXY_KEY = "rfqsim_conformance_proxy"  # a worker's proxy findings, in its workeroutput
LOANS_KEY = "rfqsim_conformance_loans"  # the run's loans directory, in a worker's workerinput
LOANS_FILE = "loans.json"  # in the report directory: what each funded wallet gave back


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{SPEC_MARKER}(*rule_ids): the spec rule(s) this test checks "
        "(ids from `python -m conformance.rules`)",
    )
    config.addinivalue_line(
        "markers",
        f"{SIM_ONLY_MARKER}(because=None): needs the simulator's /_sim control API; "
        "skipped against any other target; `because` says why a real deployment cannot "
        f"offer it ({', '.join(INHERENT)}), none when the test could be written without it",
    )
    # pytest-xdist registers it when installed; a QA install without xdist must know it too.
    config.addinivalue_line(
        "markers", "xdist_group(name): under `-n N --dist loadgroup`, run on one worker"
    )
    config.addinivalue_line(
        "markers",
        f"{NEEDS_MARKER}(*inputs): what the test needs (sim_control, key:trades, key:read, "
        "key:webhooks, key:aggregator, key:v1, key:live, taker_wallet, webhook_url, rpc, "
        "loopback, time<=Ns); "
        "skipped, naming the input, when it is missing",
    )
    try:
        rpc_urls = parse_rpc_urls(config.getoption("--rpc-url"))
        inputs = given_inputs(config, rpc_urls)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc
    timing_from_config(config)  # a negative tolerance is a usage error at start-up
    proxy_report = config.getoption("--through-proxy")
    if proxy_report is not None and not config.getoption("--no-control"):
        raise pytest.UsageError("--through-proxy goes with --no-control")
    manager = TargetManager(
        base_url=config.getoption("--base-url"),
        rpc_urls=rpc_urls,
        rfqsim_bin=config.getoption("--rfqsim-bin"),
        rootdir=config.rootpath,
        start_timeout=config.getoption("--rfqsim-start-timeout"),
        inputs=inputs,
        no_control=config.getoption("--no-control"),
        proxy_report=None if proxy_report is None else _proxy_dir(config, Path(proxy_report)),
        serve_args=config.getoption("--rfqsim-serve-arg"),
    )
    state = config.stash[_STATE] = _State(manager=manager)
    config.add_cleanup(manager.stop)
    if not _is_worker(config):
        # Under xdist the controller sees every worker's reports; workers write nothing.
        config.pluginmanager.register(_Reporter(config, state), "rfqsim-conformance-reporter")
    _start_lending(config, state, inputs)


def _start_lending(config: pytest.Config, state: _State, inputs: Inputs) -> None:
    """Against a given deployment (--base-url) the wallets tests fund from the QA team's
    wallet are loans, given back at the end (conformance/deployment/loans.py): the controller opens
    the run's ledger directory, workers write theirs in it. A simulator the harness starts takes
    its chains (and what was lent there) with it when it stops."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        if workerinput.get(LOANS_KEY):
            loans.open_ledger(Path(workerinput[LOANS_KEY]), str(workerinput["workerid"]))
        return
    if config.getoption("--base-url") is None or config.option.collectonly:
        return
    state.lender, earlier = loans.RunLender.start(inputs.taker_wallets)
    state.repaid += loans.summary(earlier, earlier=True)


def _proxy_dir(config: pytest.Config, given: Path) -> Path:
    """One report directory per process that starts a target: each xdist worker has its own."""
    base = given if given.is_absolute() else config.invocation_params.dir / given
    worker = getattr(config, "workerinput", {}).get("workerid")
    return base / worker if worker else base


def _state(config: pytest.Config) -> _State:
    return config.stash[_STATE]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- collection: validate spec ids, attach them to the item --------------------------------


def _check_spec_marks(item: pytest.Item, known: dict[str, Rule]) -> None:
    problems: list[str] = []
    for mark in item.iter_markers(SPEC_MARKER):
        if mark.kwargs:
            problems.append(f"spec() takes rule ids only, got keywords {sorted(mark.kwargs)}")
        if not mark.args:
            problems.append("spec() needs at least one rule id")
        for arg in mark.args:
            if not isinstance(arg, str):
                problems.append(f"rule id must be a string, got {arg!r}")
            elif arg not in known:
                problems.append(f"unknown spec rule id {arg!r}")
    sim_only = item.get_closest_marker(SIM_ONLY_MARKER)
    if sim_only is not None:
        try:
            inherent_reason(sim_only.args, sim_only.kwargs)
        except ValueError as exc:
            problems.append(str(exc))
    for mark in item.iter_markers(NEEDS_MARKER):
        for need in mark.args:
            if not (isinstance(need, str) and known_need(need)):
                problems.append(f"unknown need {need!r} (see conformance/wire/needs.py)")
    if problems:
        raise pytest.Collector.CollectError(
            f"{item.nodeid}: " + "; ".join(problems) + " (list ids: python -m conformance.rules)"
        )


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, Any]:
    result = yield
    items = result if isinstance(result, list) else [result]
    marked = [i for i in items if isinstance(i, pytest.Item) and i.get_closest_marker(SPEC_MARKER)]
    if marked:
        known = {rule.id: rule for rule in load_rules()}
        for item in marked:
            # Raised inside the module's collect(): pytest reports a collection error.
            _check_spec_marks(item, known)
    return result


def pytest_deselected(items: list[pytest.Item]) -> None:
    # Tests a -k, -m or --deselect left out still tell which rules the suite covers.
    if items:
        _state(items[0].config).index.record(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    index = _state(session.config).index
    index.record(session.items)
    index.record_arguments(session.config.args, session.config.invocation_params.dir)


@pytest.hookimpl(tryfirst=True)  # before the reporter judges the run
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    state = _state(config)
    report = state.manager.stop_proxy()  # the suite is done: the proxy writes its report
    findings = None if report is None else findings_of(report)
    if _is_worker(config):  # the controller builds the report; hand it this worker's index
        config.workeroutput[WORKER_KEY] = state.index.to_json()  # type: ignore[attr-defined]
        if findings is not None:
            config.workeroutput[PROXY_KEY] = findings  # type: ignore[attr-defined]
    elif findings is not None:
        state.proxy_findings.append(findings)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        ids = spec_rule_ids(item)
        if ids and RULES_PROPERTY not in {p[0] for p in item.user_properties}:
            item.user_properties.append((RULES_PROPERTY, " ".join(ids)))
        sim_only = item.get_closest_marker(SIM_ONLY_MARKER)
        reason = inherent_reason(sim_only.args, sim_only.kwargs) if sim_only else None
        if ids and reason and INHERENT_PROPERTY not in {p[0] for p in item.user_properties}:
            item.user_properties.append((INHERENT_PROPERTY, reason))


# -- running -----------------------------------------------------------------------------


def _get_target(config: pytest.Config) -> Target:
    try:
        return _state(config).manager.get()
    except TargetError as exc:
        pytest.fail(f"conformance target unavailable: {exc}", pytrace=False)


def _inherent(item: pytest.Item) -> str | None:
    """The item's ``sim_only(because=...)`` reason, None without one (or without sim_only)."""
    sim_only = item.get_closest_marker(SIM_ONLY_MARKER)
    return inherent_reason(sim_only.args, sim_only.kwargs) if sim_only else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    wanted = [str(need) for mark in item.iter_markers(NEEDS_MARKER) for need in mark.args]
    sim_only = item.get_closest_marker(SIM_ONLY_MARKER) is not None
    if not wanted and not sim_only:
        return
    target = _get_target(item.config)
    if sim_only and not target.controllable:
        pytest.skip(control_skip_message(target.base_url, _inherent(item)))
    for need in dict.fromkeys(wanted):
        try:
            message = unmet_need(item.config, target, need)
        except InputError as exc:  # a given key's scopes could not be probed
            pytest.fail(f"conformance inputs unusable: {exc}", pytrace=False)
        if message is not None:
            pytest.skip(message)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """The target's base URL travels with the report (xdist workers start their own); a test
    that met an input problem (:class:`InputProblem`) is reported as skipped with the input it
    lacked, never as failed."""
    target = _state(item.config).manager.current
    known = {p[0] for p in item.user_properties}
    if target is not None and spec_rule_ids(item) and BASE_URL_PROPERTY not in known:
        item.user_properties.append((BASE_URL_PROPERTY, target.base_url))
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance(InputProblem):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {call.excinfo.value}")
    return report


def _write_uncovered(terminalreporter: Any, missing: list[str]) -> None:
    by_document = {doc: 0 for doc in DOCUMENTS}
    for rule_id in missing:
        document = rule_id.split("/", 1)[0]
        by_document[document] = by_document.get(document, 0) + 1
    counts = ", ".join(f"{doc} {count}" for doc, count in by_document.items())
    terminalreporter.write_line(f"uncovered rules ({len(missing)}; {counts}):")
    for rule_id in missing:
        terminalreporter.write_line(f"  {rule_id}")


class _Reporter:
    """Collects spec-marked results and writes the report; registered on the controller only."""

    def __init__(self, config: pytest.Config, state: _State) -> None:
        self.config = config
        self.state = state
        self.marked: set[str] | None = None  # rule ids of the collected tests (--collect-only)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # With --collect-only nothing runs and no matrix is built; --list-uncovered then lists
        # the rules that no collected test marks, without a target (static coverage).
        if self.config.option.collectonly and self.config.getoption("--list-uncovered"):
            self.marked = {rule for item in session.items for rule in spec_rule_ids(item)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """(xdist) Where a worker writes the loans it makes."""
        if self.state.lender is not None:
            node.workerinput[LOANS_KEY] = str(self.state.lender.run.directory)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """(xdist) A worker's index of the tests it collected, selected or not."""
        output = getattr(node, "workeroutput", {})
        data = output.get(WORKER_KEY)
        if data:
            self.state.index.merge(data)
        if PROXY_KEY in output:
            self.state.proxy_findings.append(output[PROXY_KEY])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.state.collector.add(
            nodeid=report.nodeid,
            when=report.when or "call",
            outcome=report.outcome,
            properties=report.user_properties,
            longrepr=report.longrepr,
            longreprtext=report.longreprtext if report.failed else "",
            wasxfail=getattr(report, "wasxfail", None),
            duration=float(getattr(report, "duration", 0.0) or 0.0),
        )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state, config = self.state, self.config
        directory = Path(config.getoption("--conformance-report"))
        if not directory.is_absolute():
            directory = config.invocation_params.dir / directory
        if state.lender is not None:  # every worker is done: nothing is lent any more
            lent, repaid = state.lender.finish()
            state.lender = None
            loans.write_json(directory / LOANS_FILE, lent, repaid)
            state.repaid += loans.summary(repaid)
        if not state.collector:
            return
        given = config.getoption("--base-url")
        seen = ", ".join(sorted(state.collector.base_urls)) or "not started"
        base_url = given or f"rfqsim serve started by the harness ({seen})"
        # Rules whose tests sit in modules this run did not collect are not_selected, not
        # not_covered: those modules are indexed statically (seconds, only for a partial run).
        state.index_error = state.index.complete(config.rootpath)
        state.matrix = build_matrix(
            load_rules(),
            state.collector.results.values(),
            base_url=base_url,
            suite=state.index.tests,
        )
        state.report_paths = write_report(directory, state.matrix)
        minimum = config.getoption("--min-control-free")
        if minimum is not None and control_free_share(state.matrix) < minimum:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if state.proxy_findings and not verdict(state.proxy_findings)[0]:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        matrix = self.state.matrix
        if matrix is None:
            if self.marked is not None:
                rules = load_rules()
                terminalreporter.section("conformance (collected tests only; nothing ran)")
                covered = sum(1 for rule in rules if rule.id in self.marked)
                terminalreporter.write_line(f"{len(rules)} rules: {covered} marked by a test")
                _write_uncovered(
                    terminalreporter, [rule.id for rule in rules if rule.id not in self.marked]
                )
            return
        terminalreporter.section("conformance")
        if self.state.report_paths:
            terminalreporter.write_line(
                f"report: {self.state.report_paths[1]} (+ matrix.html, matrix.json, junit.xml)"
            )
        lines = headline(matrix)
        share = control_free_share(matrix)
        minimum = self.config.getoption("--min-control-free")
        if minimum is not None:
            lines[-1] += f"; minimum {minimum:g} %: " + ("met" if share >= minimum else "NOT MET")
        for line in lines:
            terminalreporter.write_line(line)
        if self.state.index_error:
            terminalreporter.write_line(
                f"(tests outside this run could not be indexed: {self.state.index_error}; "
                "rules only they check count as not covered)"
            )
        if self.state.proxy_findings:
            for line in verdict(self.state.proxy_findings)[1]:
                terminalreporter.write_line(line)
        if self.config.getoption("--list-uncovered"):
            _write_uncovered(terminalreporter, uncovered(matrix))
        for line in self.state.repaid:
            terminalreporter.write_line(line)


# -- fixtures ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Target:
    """The service under test; starts `rfqsim serve` on first use when no --base-url."""
    return _get_target(request.config)


@pytest.fixture
def http(target: Target) -> Client:
    """A plain HTTP client for the target's base URL (no credentials)."""
    return target.client()


@pytest.fixture(scope="session")
def tolerances(request: pytest.FixtureRequest) -> TimingTolerances:
    """The timing-budget tolerances (``--budget-tolerance-ms`` and friends)."""
    return timing_from_config(request.config)


@pytest.fixture
def sim(request: pytest.FixtureRequest, target: Target) -> SimControl:
    """The simulator's /_sim control API; skips the test against other targets."""
    if not target.is_simulator:
        pytest.skip(control_skip_message(target.base_url, _inherent(request.node)))
    return target.sim()


@pytest.fixture(scope="session")
def clock(target: Target) -> ServiceClock:
    """The service's clock: read through /_sim on a simulator, else measured once from its
    answers (see conformance.deployment.service_clock)."""
    return ServiceClock(target.client(), target.sim() if target.controllable else None)


@pytest.fixture(scope="session")
def inputs(target: Target) -> Inputs:
    """What the QA team gave: keys (scopes probed where not declared), taker wallets, the
    webhook URL."""
    return target.inputs
