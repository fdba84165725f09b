"""A profile's wiring into locust's events, the same in local, master and worker processes.

- ``init``: options checked (loopback target, caps on users and time); workers register the
  custom messages.
- ``test_start`` (master or local process only): the setup, outside the measured traffic: limits
  raised for load, keys created, fresh taker wallets funded on the test chain, plus what the
  profile needs. The result ("shared setup") goes to every worker as the custom message
  ``rfqsim_setup`` before the first spawn message, and again to a worker connecting later.
- ``request`` (every process): exact counts into the node's :class:`~loadtests.slo.Tally`.
- ``report_to_master`` / ``worker_report``: workers ship their counts with each stats report.
- ``test_stop`` (master or local): workers are told to stop their users and flush their counts
  (``rfqsim_stop`` → ``rfqsim_stopped``), so no load request meets the restored limits; then the
  profile finishes (e.g. waits for webhooks), its changes are undone and limits restored.
- ``quitting`` (master or local): the profile's registrations and the run's keys released, the
  verdict on the merged counts, the JSON summary and the run's page (``report.html``,
  loadtests/report_page.py), and ``environment.process_exit_code`` (0 passed, 1 an SLO
  threshold violated, 2 could not run).
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from locust import events
from locust.env import Environment
from locust.exception import StopUser
from locust.runners import MasterRunner, Runner, WorkerRunner

from loadtests.common import (
    DEFAULT_RUN_TIME_S,
    DEFAULT_USERS,
    PROGRESS_FILE,
    NotLoopback,
    add_options,
    check_bounds,
    ensure_loopback,
)
from loadtests.control import Control
from loadtests.machine import RunWatch
from loadtests.market import build_market, reply_budget_ms
from loadtests.provision import LOAD_LIMITS, RunSetup, fund_takers, limits_to_restore
from loadtests.report_page import write_page
from loadtests.sim_added import DEFAULT_WARN_MS
from loadtests.slo import SloCheck, Tally, Thresholds, dumps, progress, standard_checks
from loadtests.summary import build_summary, summary_path

log = logging.getLogger("loadtests")

SETUP_MESSAGE = "rfqsim_setup"
STOP_MESSAGE = "rfqsim_stop"
STOPPED_MESSAGE = "rfqsim_stopped"
TALLY_KEY = "rfqsim_tally"
SETUP_WAIT_S = 60.0
WORKER_STOP_WAIT_S = 15.0
PROGRESS_EVERY_S = 2.0
EXIT_PASSED, EXIT_VIOLATED, EXIT_NOT_RUN = 0, 1, 2

_options_registered = threading.Event()  # locust has one global parser hook; add ours once


def role(runner: Runner | None) -> str:
    if isinstance(runner, MasterRunner):
        return "master"
    if isinstance(runner, WorkerRunner):
        return "worker"
    return "local"


class Harness:
    """Subclass per profile; override the hooks at the bottom."""

    key_scopes: tuple[str, ...] = ("trades:write", "trades:read")
    quotes_expected = True  # judged answers carry data.status (the no_quote check applies)
    needs_takers = True  # fund fresh taker wallets for firm requests

    def __init__(self, profile: str, *, judged: set[str], statused: set[str]) -> None:
        self.profile = profile
        self.judged = frozenset(judged)  # request names held to the budget
        self.statused = frozenset(statused)  # request names whose 200 body has data.status
        self.environment: Environment | None = None
        self.tally: Tally | None = None
        self.setup: RunSetup | None = None
        self.setup_error: str | None = None
        self.setup_facts: dict[str, Any] = {}  # non-secret, for the summary
        self.cleanup_log: list[str] = []
        self.started_at: float | None = None
        self.stopped_at: float | None = None
        self._setup_ready = threading.Event()
        self._control: Control | None = None
        self._watch: RunWatch | None = None  # the simulator's process and the machine
        self._saved_limits: dict[str, Any] | None = None
        self._key_ids: list[str] = []
        self.workers_seen = 0  # workers connected when the test stopped (master)
        self.measured: dict[str, Any] = {}  # loadtests.machine figures of the run
        self._progress_due = 0.0  # monotonic: when progress.json is next written
        self._finished = False
        self._restored = False
        self._released = False
        self._shared: dict[str, Any] | None = None  # the setup as sent to workers
        self._stopped_workers: set[str] = set()

    # -- wiring ------------------------------------------------------------------------

    def install(self) -> None:
        if not _options_registered.is_set():
            _options_registered.set()
            _listen(events.init_command_line_parser, add_options)
        _listen(events.init, self._on_init)
        _listen(events.test_start, self._on_test_start)
        _listen(events.test_stop, self._on_test_stop)
        _listen(events.request, self._on_request)
        _listen(events.report_to_master, self._on_report_to_master)
        _listen(events.worker_report, self._on_worker_report)
        _listen(events.worker_connect, self._on_worker_connect)
        _listen(events.quitting, self._on_quitting)

    @property
    def options(self) -> Any:
        assert self.environment is not None
        return self.environment.parsed_options

    def _on_init(self, environment: Environment, **_: Any) -> None:
        self.environment = environment
        options: Any = environment.parsed_options
        limits = Thresholds.from_options(options)
        self.tally = Tally(limits.budget_ms, limits.threshold_ms)
        runner = environment.runner
        if isinstance(runner, WorkerRunner):
            runner.register_message(SETUP_MESSAGE, self._on_setup_message)
            runner.register_message(STOP_MESSAGE, self._on_stop_message)
            return
        try:
            ensure_loopback(environment.host)
            if options.num_users is None:
                options.num_users = DEFAULT_USERS
            if options.spawn_rate is None:
                options.spawn_rate = max(1.0, options.num_users / 5)
            if options.headless and not options.run_time:
                options.run_time = DEFAULT_RUN_TIME_S
            check_bounds(
                options.num_users, options.spawn_rate, options.run_time, int(options.takers)
            )
            self.configure(options)
        except (NotLoopback, ValueError) as exc:
            log.error("%s", exc)
            raise SystemExit(EXIT_NOT_RUN) from exc
        if isinstance(runner, MasterRunner):
            runner.register_message(STOPPED_MESSAGE, self._on_worker_stopped)

    # -- setup -------------------------------------------------------------------------

    def _on_test_start(self, environment: Environment, **_: Any) -> None:
        # Counts start from zero with the thresholds in force: a worker has only now received
        # the master's options (with its spawn message), so its init-time tally may be stale.
        limits = Thresholds.from_options(environment.parsed_options)
        self.tally = Tally(limits.budget_ms, limits.threshold_ms)
        if isinstance(environment.runner, WorkerRunner):
            return
        # A new test (the web UI can run several in one process) starts from scratch.
        self.started_at, self.stopped_at = time.time(), None
        self.setup, self.setup_error, self._shared = None, None, None
        self._finished = self._restored = self._released = False
        self._setup_ready.clear()
        try:
            shared = self._prepare()
        except Exception as exc:
            self.setup_error = f"{type(exc).__name__}: {exc}"
            log.error("setup failed, stopping: %s", self.setup_error)
            if isinstance(environment.runner, MasterRunner):
                environment.runner.send_message(SETUP_MESSAGE, {"error": self.setup_error})
            self._setup_ready.set()
            runner = environment.runner
            if runner is not None:
                threading.Timer(0.1, runner.quit).start()
            return
        self.setup = RunSetup.from_json(shared)
        self._shared = shared
        self._setup_ready.set()
        if isinstance(environment.runner, MasterRunner):
            environment.runner.send_message(SETUP_MESSAGE, shared)

    def _prepare(self) -> dict[str, Any]:
        control = self._control = Control(str(self.environment.host if self.environment else ""))
        options = self.options
        info = control.info()
        self._watch = RunWatch.start(info)
        levels = control.data("GET", f"/v2/rfq/levels?chainId={options.chain_id}")
        market = build_market(info, levels, options.chain_id)
        self._saved_limits = control.limits()
        control.put_limits(LOAD_LIMITS)
        partner = f"loadtests-{self.profile}-{secrets.token_hex(3)}"
        created = control.create_key(partner, list(self.key_scopes))
        self._key_ids.append(str(created["key_id"]))
        takers = fund_takers(info, market, int(options.takers) if self.needs_takers else 0)
        self.setup_facts = {
            "chain_id": market.chain_id,
            "partner": partner,
            "key_id": created["key_id"],
            "key_scopes": list(self.key_scopes),
            "takers": len(takers),
            "usd_prices": {k: round(v, 8) for k, v in market.usd.items()},
            "corridor_reply_budgets_ms": reply_budget_ms(info, market.chain_id),
            "limits_during_run": {k: v for k, v in LOAD_LIMITS.items() if k != "reset_windows"},
        }
        setup = {
            "market": market.to_json(),
            "api_key": created["key"],
            "takers": [list(t) for t in takers],
            "clock_offset_s": control.clock_offset_s(),
        }
        setup["extra"] = self.prepare(control, info, setup)
        return setup

    def _on_setup_message(self, environment: Environment, msg: Any, **_: Any) -> None:
        data = dict(msg.data)
        if "error" in data:
            self.setup_error = str(data["error"])
        else:
            self.setup = RunSetup.from_json(data)
        self._setup_ready.set()

    def _on_worker_connect(self, client_id: str, **_: Any) -> None:
        runner = self.environment.runner if self.environment else None
        if isinstance(runner, MasterRunner) and self._shared is not None:
            runner.send_message(SETUP_MESSAGE, self._shared, client_id=client_id)

    def wait_setup(self) -> RunSetup:
        """For users' on_start: the shared setup (StopUser when there is none)."""
        if not self._setup_ready.wait(SETUP_WAIT_S) or self.setup is None:
            raise StopUser()
        return self.setup

    # -- counting ----------------------------------------------------------------------

    def _on_request(
        self,
        request_type: str,
        name: str,
        response_time: float,
        response: Any = None,
        exception: BaseException | None = None,
        **_: Any,
    ) -> None:
        if self.tally is None:
            return
        status_code = int(getattr(response, "status_code", 0) or 0)
        body: Any = None
        if response is not None and (exception is not None or name in self.statused):
            try:
                body = json.loads(response.content or b"null")
            except (ValueError, TypeError, AttributeError):
                body = None
        error = None
        if exception is not None:
            code = body.get("error", {}).get("code") if isinstance(body, dict) else None
            error = f"{status_code} {code}" if code else f"{status_code} {type(exception).__name__}"
        status = reason = None
        if exception is None and name in self.statused and isinstance(body, dict):
            data = body.get("data")
            if isinstance(data, dict) and isinstance(data.get("status"), str):
                status = str(data["status"])
                reason = data.get("reason") or data.get("noQuoteReason")
        self.tally.sim_added.record(name, _server_timing(response), float(response_time))
        self.tally.record(
            name,
            float(response_time),
            judged=name in self.judged,
            error=error,
            status=status,
            no_quote_reason=str(reason) if reason else None,
        )
        if self.environment is not None and role(self.environment.runner) == "local":
            self._write_progress()

    def _on_report_to_master(self, client_id: str, data: dict[str, Any], **_: Any) -> None:
        if self.tally is not None:
            data[TALLY_KEY] = self.tally.drain()

    def _on_worker_report(self, client_id: str, data: dict[str, Any], **_: Any) -> None:
        if self.tally is not None and TALLY_KEY in data:
            self.tally.merge(data[TALLY_KEY])
            self._write_progress()

    def _write_progress(self, *, final: bool = False) -> None:
        """At most every PROGRESS_EVERY_S (and once more, `final`, with the summary), the
        master's (or a local run's) figures so far into progress.json next to slo.json (only
        where that place is fixed: --slo-summary or --csv), replaced whole so a reader never
        sees half a file."""
        now = time.monotonic()
        if (
            self.tally is None
            or self.environment is None
            or (now < self._progress_due and not final)
        ):
            return
        self._progress_due = now + PROGRESS_EVERY_S
        options = self.options
        if not (options.slo_summary or options.csv_prefix):
            return
        path = summary_path(options, self.profile).parent / PROGRESS_FILE
        limits = Thresholds.from_options(options)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(".partial")
            partial.write_text(json.dumps(progress(self.tally, limits, self.judged)))
            partial.replace(path)
        except OSError as exc:
            log.warning("could not write %s: %s", path, exc)

    # -- stop and clean up -------------------------------------------------------------

    def _on_stop_message(self, environment: Environment, msg: Any, **_: Any) -> None:
        """Worker: stop the users now and hand over the counts, before the master restores."""
        runner = environment.runner
        assert isinstance(runner, WorkerRunner)
        runner.stop()
        runner.send_message(STOPPED_MESSAGE, self.tally.drain() if self.tally else {})

    def _on_worker_stopped(self, environment: Environment, msg: Any, **_: Any) -> None:
        if self.tally is not None and msg.data:
            self.tally.merge(dict(msg.data))
        self._stopped_workers.add(str(msg.node_id))

    def _on_test_stop(self, environment: Environment, **_: Any) -> None:
        runner = environment.runner
        if isinstance(runner, WorkerRunner):
            return
        self.stopped_at = time.time()
        if self._watch is not None:  # before the drain and the clean-up: the load's own figures
            self.measured = self._watch.figures()
        if isinstance(runner, MasterRunner):
            workers = {w.id for w in runner.clients.all}
            self.workers_seen = max(self.workers_seen, len(workers))
            self._stopped_workers.clear()
            runner.send_message(STOP_MESSAGE, {})
            deadline = time.monotonic() + WORKER_STOP_WAIT_S
            while not workers <= self._stopped_workers and time.monotonic() < deadline:
                time.sleep(0.05)
            missing = workers - self._stopped_workers
            if missing:
                log.warning("%d worker(s) did not confirm stopping", len(missing))
        self._finish()
        self._restore()

    def _finish(self) -> None:
        """The profile's last word once every user stopped (before locust writes reports)."""
        if self._finished or self.setup is None or self.tally is None:
            return
        self._finished = True
        try:
            self.finish(self.tally)
        except Exception as exc:
            log.error("%s finish failed: %s", self.profile, exc)
            self.tally.count("finish_errors")

    def _restore(self) -> None:
        """Master or local, at test_stop: limits back, the profile's changes undone."""
        if self._restored or self._control is None:
            return
        self._restored = True
        control = self._control
        self._attempt("profile changes undone", lambda: self.restore(control))
        saved = self._saved_limits
        if saved is not None:
            self._attempt("limits restored", lambda: control.put_limits(limits_to_restore(saved)))

    def _release(self) -> None:
        """Master or local, at quitting: what the profile registered, then the run's keys."""
        if self._released or self._control is None:
            return
        self._released = True
        control = self._control
        self._attempt("profile registrations released", lambda: self.release(control))
        for key_id in self._key_ids:
            self._attempt(f"key {key_id} revoked", partial(control.revoke_key, key_id))

    def _attempt(self, what: str, step: Callable[[], object]) -> None:
        try:
            step()
            self.cleanup_log.append(what)
        except Exception as exc:
            self.cleanup_log.append(f"FAILED: {what}: {exc}")
            log.error("cleanup step failed (%s): %s", what, exc)

    # -- verdict -----------------------------------------------------------------------

    def _on_quitting(self, environment: Environment, **_: Any) -> None:
        if isinstance(environment.runner, WorkerRunner) or self.tally is None:
            return
        self._finish()
        self._restore()
        self._release()
        limits = Thresholds.from_options(self.options)
        checks = [
            SloCheck(
                name="setup",
                passed=self.setup_error is None and self.setup is not None,
                observed=self.setup_error or ("ok" if self.setup else "never started"),
                limit="ok",
                detail="limits raised, keys created, takers funded",
            )
        ]
        checks += standard_checks(self.tally, limits, quotes_expected=self.quotes_expected)
        exceptions = len(environment.runner.exceptions) if environment.runner else 0
        checks.append(
            SloCheck(
                name="user_exceptions",
                passed=exceptions == 0,
                observed=exceptions,
                limit=0,
                detail=f"{exceptions} unhandled exception(s) in the profile's user code "
                "(0 allowed)",
            )
        )
        checks += self.extra_checks(self.tally)
        passed = all(c.passed for c in checks)
        code = EXIT_PASSED if passed else EXIT_VIOLATED
        if not checks[0].passed:
            code = EXIT_NOT_RUN
        environment.process_exit_code = code
        summary = build_summary(
            profile=self.profile,
            environment=environment,
            mode=role(environment.runner),
            limits=limits,
            judged=self.judged,
            quotes_expected=self.quotes_expected,
            checks=checks,
            code=code,
            tally=self.tally,
            times=(self.started_at, self.stopped_at),
            workers=self.workers_seen,
            profile_figures=self.extra_summary(),
            setup_facts=self.setup_facts,
            cleanup=self.cleanup_log,
        )
        added, added_lines, warn = self.tally.sim_added.report(
            float(getattr(self.options, "sim_added_warn_ms", DEFAULT_WARN_MS)), self.measured
        )
        summary["simulator_added"] = added
        self._write_progress(final=True)
        path = summary_path(self.options, self.profile)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(summary), encoding="utf-8")
        write_page(path.parent / "report.html", summary)
        for line in added_lines:
            (log.warning if warn and line.startswith("WARNING") else log.info)("%s", line)
        verdict = "PASSED" if passed else "FAILED"
        failed = ", ".join(c.name for c in checks if not c.passed) or "none"
        log.info("SLO %s (failed: %s); summary %s", verdict, failed, path)
        for check in checks:
            log.info("  %s %s: %s", "ok  " if check.passed else "FAIL", check.name, check.detail)

    # -- profile hooks -----------------------------------------------------------------

    def configure(self, options: Any) -> None:
        """Master or local process, at init: apply profile options (e.g. user weights)."""

    def prepare(
        self, control: Control, info: dict[str, Any], setup: dict[str, Any]
    ) -> dict[str, Any]:
        """Master or local process, at test_start: extra setup; returns ``RunSetup.extra``."""
        return {}

    def restore(self, control: Control) -> None:
        """Master or local process, at test_stop: undo what ``prepare`` changed."""

    def release(self, control: Control) -> None:
        """Master or local process, at quitting: drop what ``prepare`` registered."""

    def finish(self, tally: Tally) -> None:
        """Master or local process, at test_stop once all users stopped (before ``restore``)."""

    def extra_checks(self, tally: Tally) -> list[SloCheck]:
        return []

    def extra_summary(self) -> dict[str, Any]:
        return {}


def _server_timing(response: Any) -> str | None:
    headers = getattr(response, "headers", None)
    value = headers.get("Server-Timing") if headers is not None else None
    return str(value) if value else None


def _listen(hook: Any, handler: Callable[..., Any]) -> None:
    """``hook.add_listener(handler)`` (locust's EventHook is not annotated)."""
    hook.add_listener(handler)
