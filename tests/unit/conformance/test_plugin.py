"""The pytest plugin end to end: pytest runs in a subprocess against fakes (no simulator).

A fake ``rfqsim`` executable (a Python script) writes a ready file and serves /_sim/info,
/v2/health and 404s with the standard library; a second fake target is not a simulator.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# The project's own options: the plugins it leaves out are left out here too.
ADDOPTS = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())["tool"][
    "pytest"
]["ini_options"]["addopts"]
INI = f"[pytest]\naddopts = {ADDOPTS}\nasyncio_default_fixture_loop_scope = function\n"

FAKE_RFQSIM = textwrap.dedent(
    """\
    #!{python}
    import json, os, signal, sys, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    args = sys.argv[1:]
    assert args[0] == "serve", args
    ready = args[args.index("--ready-file") + 1]
    record = os.environ.get("FAKE_RFQSIM_RECORD")
    if os.environ.get("FAKE_RFQSIM_FAIL"):
        sys.stderr.write("boom: cannot start the chains\\n")
        sys.exit(3)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/_sim/info":
                status, body = 200, {{"data": INFO}}
            elif self.path == "/v2/health":
                status, body = 200, {{"data": {{"status": "ok"}}}}
            else:
                status, body = 404, {{"error": {{"code": "not_found"}}}}
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    url = "http://127.0.0.1:%d" % server.server_address[1]
    INFO = {{"simulator": "rfqsim", "version": "0", "api_url": url, "pid": os.getpid(),
            "seed": 1, "environment": "staging", "chains": [], "demo_wallets": []}}

    def stop(signum, frame):
        if record:
            with open(record, "a") as f:
                f.write("stopped %d\\n" % os.getpid())
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    if record:
        with open(record, "a") as f:
            f.write("started %d\\n" % os.getpid())
    with open(ready + ".tmp", "w") as f:
        json.dump(INFO, f)
    os.replace(ready + ".tmp", ready)
    server.serve_forever()
    """
)

TESTS = textwrap.dedent(
    """\
    import pytest

    @pytest.mark.spec("rfq/errors/404-not_found")
    def test_pass(http):
        assert http.get("/nope").status == 404

    @pytest.mark.spec("rfq/errors/404-not_found", "rfq/errors/envelope")
    def test_fail(http):
        assert http.get("/v2/health").status == 500, "deliberate"

    @pytest.mark.spec("rfq/errors/403-forbidden")
    def test_skip():
        pytest.skip("not today")

    @pytest.mark.sim_only
    @pytest.mark.spec("rfq/errors/409-conflict")
    def test_sim(sim, target):
        assert sim.info()["simulator"] == "rfqsim"
        assert target.is_simulator

    def test_unmarked():
        pass
    """
)


class _NotASimulator(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        raw = b'{"error": {"code": "not_found"}}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def plain_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotASimulator)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text(INI)
    fake = tmp_path / "fake-rfqsim"
    fake.write_text(FAKE_RFQSIM.format(python=sys.executable))
    fake.chmod(0o755)
    return tmp_path


def _run(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _matrix(project: Path, directory: str = "conformance-report") -> dict[str, Any]:
    data = json.loads((project / directory / "matrix.json").read_text())
    assert isinstance(data, dict)
    return data


def _statuses(matrix: dict[str, Any]) -> dict[str, str]:
    return {rule["id"]: rule["status"] for rule in matrix["rules"]}


def _assert_gone(pid: int) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    pytest.fail(f"process {pid} still running after the session")


def test_starts_simulator_lazily_and_writes_the_report(project: Path) -> None:
    (project / "test_suite.py").write_text(TESTS)
    record = project / "record.txt"
    code, out = _run(
        project,
        "--rfqsim-bin",
        str(project / "fake-rfqsim"),
        "--list-uncovered",
        env={"FAKE_RFQSIM_RECORD": str(record)},
    )
    assert code == 1, out  # one deliberate failure
    assert "1 failed, 3 passed, 1 skipped" in out, out
    events = record.read_text().split()
    assert events[0::2] == ["started", "stopped"], events  # one start, one stop
    _assert_gone(int(events[1]))

    matrix = _matrix(project)
    statuses = _statuses(matrix)
    assert statuses["rfq/errors/404-not_found"] == "failed"  # one pass + one fail
    assert statuses["rfq/errors/envelope"] == "failed"
    assert statuses["rfq/errors/403-forbidden"] == "skipped"
    assert statuses["rfq/errors/409-conflict"] == "passed"
    assert statuses["rfq/errors/401-unauthorized"] == "not_covered"
    totals = matrix["totals"]
    assert totals["rules"] == len(matrix["rules"])
    assert (totals["passed"], totals["failed"], totals["skipped"]) == (1, 2, 1)
    assert totals["not_covered"] == totals["rules"] - 4
    assert matrix["base_url"].startswith("rfqsim serve started by the harness (http://127.0.0.1:")

    rule = next(r for r in matrix["rules"] if r["id"] == "rfq/errors/404-not_found")
    tests = {t["nodeid"]: t for t in rule["tests"]}
    assert tests["test_suite.py::test_pass"]["outcome"] == "passed"
    assert tests["test_suite.py::test_fail"]["outcome"] == "failed"
    assert "deliberate" in tests["test_suite.py::test_fail"]["reason"]
    skipped = next(r for r in matrix["rules"] if r["id"] == "rfq/errors/403-forbidden")
    assert skipped["tests"][0]["reason"] == "not today"

    markdown = (project / "conformance-report" / "matrix.md").read_text()
    assert markdown.startswith("# Conformance matrix")
    assert "## rfq (1-rfq-v2.md)" in markdown
    assert "| `rfq/errors/409-conflict` | passed |" in markdown
    assert "uncovered rules (" in out
    assert "\n  rfq/errors/401-unauthorized\n" in out


def test_base_url_that_is_not_a_simulator_skips_sim_only(project: Path, plain_server: str) -> None:
    (project / "test_suite.py").write_text(TESTS)
    code, out = _run(project, "--base-url", plain_server, "--conformance-report", "out")
    assert code == 1, out
    assert "needs sim_control: not ported yet" in out, out
    matrix = _matrix(project, "out")
    assert matrix["base_url"] == plain_server
    assert _statuses(matrix)["rfq/errors/409-conflict"] == "skipped"


def test_xdist_workers_report_to_the_controller(project: Path) -> None:
    (project / "test_suite.py").write_text(TESTS)
    record = project / "record.txt"
    code, out = _run(
        project,
        "-n",
        "2",
        "--rfqsim-bin",
        str(project / "fake-rfqsim"),
        env={"FAKE_RFQSIM_RECORD": str(record)},
    )
    assert code == 1, out
    statuses = _statuses(_matrix(project))
    assert statuses["rfq/errors/404-not_found"] == "failed"
    assert statuses["rfq/errors/403-forbidden"] == "skipped"
    assert statuses["rfq/errors/409-conflict"] == "passed"
    events = record.read_text().split()
    starts = events[0::2].count("started")
    assert starts == events[0::2].count("stopped")
    assert 1 <= starts <= 2  # at most one simulator per worker
    for pid in events[1::2]:
        _assert_gone(int(pid))


def test_unmarked_tests_start_nothing_and_write_no_report(project: Path) -> None:
    (project / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    record = project / "record.txt"
    code, out = _run(
        project,
        "--rfqsim-bin",
        str(project / "fake-rfqsim"),
        env={"FAKE_RFQSIM_RECORD": str(record)},
    )
    assert code == 0, out
    assert not record.exists()
    assert not (project / "conformance-report").exists()


def test_unknown_rule_id_is_a_collection_error(project: Path) -> None:
    (project / "test_bad.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.spec('rfq/errors/999-nope')\n"
        "def test_bad():\n    pass\n\n"
        "@pytest.mark.spec()\n"
        "def test_empty():\n    pass\n"
    )
    code, out = _run(project)
    assert code == 2, out  # interrupted: errors during collection
    assert "ERROR collecting test_bad.py" in out, out
    assert "unknown spec rule id 'rfq/errors/999-nope'" in out, out
    assert not (project / "conformance-report").exists()


def test_simulator_that_exits_fails_with_its_stderr(project: Path) -> None:
    (project / "test_suite.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.spec('rfq/errors/404-not_found')\n"
        "def test_one(target):\n    pass\n\n"
        "@pytest.mark.spec('rfq/errors/404-not_found')\n"
        "def test_two(http):\n    pass\n"
    )
    code, out = _run(
        project, "--rfqsim-bin", str(project / "fake-rfqsim"), env={"FAKE_RFQSIM_FAIL": "1"}
    )
    assert code == 1, out
    assert "exited with status 3 before it was ready" in out, out
    assert "boom: cannot start the chains" in out, out
    assert "2 errors" in out, out
    assert _statuses(_matrix(project))["rfq/errors/404-not_found"] == "failed"


def test_bad_rpc_url_option_is_a_usage_error(project: Path) -> None:
    (project / "test_plain.py").write_text("def test_plain():\n    pass\n")
    code, out = _run(project, "--rpc-url", "not-a-chain")
    assert code == 4, out
    assert "--rpc-url expects CHAIN=URL" in out


def test_through_proxy_without_no_control_is_a_usage_error(project: Path) -> None:
    (project / "test_plain.py").write_text("def test_plain():\n    pass\n")
    code, out = _run(project, "--through-proxy", "proxy-report")
    assert code == 4, out
    assert "--through-proxy goes with --no-control" in out


def test_collect_only_lists_the_rules_no_collected_test_marks(project: Path) -> None:
    (project / "test_suite.py").write_text(TESTS)
    record = project / "record.txt"
    code, out = _run(
        project,
        "--collect-only",
        "--list-uncovered",
        "--rfqsim-bin",
        str(project / "fake-rfqsim"),
        env={"FAKE_RFQSIM_RECORD": str(record)},
    )
    assert code == 0, out
    assert not record.exists(), "nothing is started to list coverage"
    assert not (project / "conformance-report").exists()
    assert "collected tests only; nothing ran" in out, out
    assert "rules: 4 marked by a test" in out, out
    assert "\n  rfq/errors/401-unauthorized\n" in out, out
    assert "\n  rfq/errors/409-conflict\n" not in out, out
    assert "uncovered rules (" in out, out
    assert "; rfq " in out, out


def test_timing_tolerances_are_options_and_must_not_be_negative(project: Path) -> None:
    (project / "test_timing.py").write_text(
        "def test_tolerances(tolerances):\n"
        "    assert tolerances.budget_ms == 45\n"
        "    assert tolerances.head_start_ms == 20\n"
        "    assert tolerances.grant_s == 60\n"
    )
    code, out = _run(project, "--budget-tolerance-ms", "45", "--grant-tolerance-s", "60")
    assert code == 0, out
    code, out = _run(project, "--budget-tolerance-ms", "-1")
    assert code == 4, out
    assert "--budget-tolerance-ms must not be negative" in out, out


SHARE_TESTS = textwrap.dedent(
    """\
    import pytest

    @pytest.mark.spec("rfq/errors/404-not_found")
    def test_pass(http):
        assert http.get("/nope").status == 404

    @pytest.mark.sim_only(because="faults")
    @pytest.mark.spec("rfq/errors/500-internal")
    def test_fault(sim):
        pass

    @pytest.mark.sim_only
    @pytest.mark.spec("rfq/errors/409-conflict")
    def test_could_be_ported(sim):
        pass
    """
)


def test_the_control_free_share_and_its_minimum(project: Path, plain_server: str) -> None:
    (project / "test_suite.py").write_text(SHARE_TESTS)
    code, out = _run(project, "--base-url", plain_server, "--min-control-free", "60")
    assert "2 skipped" in out, out  # both sim_only tests: the target is not a simulator
    assert code == 1, out  # every test passed or skipped: the minimum failed the run
    matrix = _matrix(project)
    by_id = {r["id"]: r for r in matrix["rules"]}
    assert by_id["rfq/errors/500-internal"]["inherent_control"] == ["faults"]
    assert by_id["rfq/errors/500-internal"]["skip_kind"] == "inherent_control"
    assert "inherent_control" not in by_id["rfq/errors/409-conflict"]
    assert by_id["rfq/errors/409-conflict"]["skip_kind"] == "not_ported"
    # The share is over the selected rules but the faulted one: one passed, the unported one
    # did not; the rules no test checks are not selected by any run.
    free = matrix["control_free"]
    assert free == {"rules": 2, "passed": 1}
    assert "control-free: 1 of 2 selected rules" in out, out
    assert "minimum 60 %: NOT MET" in out, out

    code, out = _run(project, "--base-url", plain_server, "--min-control-free", "50")
    assert code == 0, out
    assert "minimum 50 %: met" in out, out


def test_an_unknown_sim_only_reason_is_a_collection_error(project: Path) -> None:
    (project / "test_suite.py").write_text(
        textwrap.dedent(
            """\
            import pytest

            @pytest.mark.sim_only(because="laziness")
            @pytest.mark.spec("rfq/errors/409-conflict")
            def test_x():
                pass
            """
        )
    )
    code, out = _run(project, "--collect-only")
    assert code != 0, out
    assert "unknown sim_only reason 'laziness'" in out, out


HANGING = textwrap.dedent(
    """\
    import time

    import pytest

    @pytest.mark.spec("rfq/errors/404-not_found")
    def test_hangs(http):
        assert http.get("/nope").status == 404
        time.sleep(120)
    """
)


def test_a_killed_session_takes_its_simulator_with_it(project: Path) -> None:
    """A session killed outright (a CI job's timeout) cannot stop its simulator in order: the
    simulator ends with it all the same (PR_SET_PDEATHSIG), and no process is left behind."""
    (project / "test_suite.py").write_text(HANGING)
    record = project / "record.txt"
    session = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "--rfqsim-bin", str(project / "fake-rfqsim")],
        cwd=project,
        env={**os.environ, "FAKE_RFQSIM_RECORD": str(record)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (record.exists() and record.read_text().startswith("started")):
            assert session.poll() is None, "the session ended before its simulator started"
            assert time.monotonic() < deadline, "the simulator never started"
            time.sleep(0.05)
        session.kill()  # SIGKILL: no teardown runs
        session.wait(10)
        pid = int(record.read_text().split()[1])
        _assert_gone(pid)
        assert record.read_text().split()[2:] == ["stopped", str(pid)], "ended by its SIGTERM"
    finally:
        if session.poll() is None:
            session.kill()
            session.wait(10)


INPUT_TESTS = textwrap.dedent(
    """\
    import pytest

    from conformance.wire.needs import InputProblem

    @pytest.mark.spec("rfq/errors/404-not_found")
    def test_pass(http):
        assert http.get("/nope").status == 404

    @pytest.mark.spec("rfq/errors/409-conflict")
    def test_needs_a_second_wallet(http):
        raise InputProblem("taker_wallet", "2 taker wallets (--taker-key HEX, repeated); 1 given")

    @pytest.fixture
    def contract():
        raise InputProblem("contracts", "the reactor exposes no feeRecipient()")

    @pytest.mark.spec("rfq/errors/403-forbidden")
    def test_in_a_fixture(contract):
        pass

    @pytest.mark.spec("rfq/errors/envelope")
    def test_left_out_by_k(http):
        assert http.get("/nope").status == 404
    """
)
OTHER_AREA = textwrap.dedent(
    """\
    import pytest

    @pytest.mark.spec("rfq/errors/401-unauthorized")
    def test_elsewhere(http):
        pass
    """
)


def test_an_input_problem_skips_naming_the_input_and_unselected_rules_are_not_selected(
    project: Path, plain_server: str
) -> None:
    (project / "test_suite.py").write_text(INPUT_TESTS)
    (project / "test_other.py").write_text(OTHER_AREA)  # not on the command line
    code, out = _run(project, "test_suite.py", "-k", "not left_out", "--base-url", plain_server)
    assert code == 0, out  # an input problem is no failure
    assert "needs taker_wallet: 2 taker wallets" in out, out
    matrix = _matrix(project)
    by_id = {r["id"]: r for r in matrix["rules"]}
    assert by_id["rfq/errors/409-conflict"]["status"] == "skipped"
    assert by_id["rfq/errors/409-conflict"]["skip_kind"] == "missing_input"
    assert by_id["rfq/errors/409-conflict"]["needs"] == ["taker_wallet"]
    assert by_id["rfq/errors/403-forbidden"]["skip_kind"] == "missing_input"  # raised in setup
    # Deselected by -k, and in a module this run did not collect: tested elsewhere, not missing.
    assert by_id["rfq/errors/envelope"]["status"] == "not_selected"
    assert by_id["rfq/errors/401-unauthorized"]["status"] == "not_selected"
    assert by_id["rfq/errors/401-unauthorized"]["not_selected_tests"] == [
        "test_other.py::test_elsewhere"
    ]
    assert by_id["rfq/errors/500-internal"]["status"] == "not_covered"
    totals = matrix["totals"]
    assert (totals["selected"], totals["not_selected"]) == (3, 2)
    assert "1 of 3 rules passed, 0 failed, 2 skipped" in out, out
    assert (project / "conformance-report" / "matrix.html").exists()
