"""The conformance suite's control-free tests through `rfqsim proxy`, the way a QA team runs them
against a staging deployment behind it: `rfqsim serve --no-control-api` (a "foreign deployment",
trusting the proxy's X-Forwarded-For), the operator's inputs from its ready file, the suite
pointed at the proxy. The suite passes, the proxy finds no fault of the service, and the faults
it finds on the client's side are the suite's own deliberate ones: each one the service refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.proxy_process import proxy, service_violations, summary
from tests.integration.serve_process import REPO, serve

SUITE_TIMEOUT_S = 2400  # the whole control-free suite: about 10 minutes on 2 idle cores
# The test is one run of the suite, so it may last as long as the suite does (as
# conformance/tests/test_schemathesis.py, which is one schemathesis run).
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.timeout(SUITE_TIMEOUT_S + 300),
]


def test_the_control_free_suite_through_the_proxy_finds_no_fault_of_the_service(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "RFQSIM_TRUSTED_PROXY": "true"}
    with serve(tmp_path, "--no-control-api", env=env) as served:
        config = tmp_path / "operator-inputs.json"
        config.write_text(json.dumps(served.info))
        rpc = [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in served.info["chains"]]
        with proxy(served.api_url, tmp_path / "report") as running:
            # The suite under this test's own xdist: its workers number themselves afresh.
            suite_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "conformance/tests",
                    "-n",
                    "2",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--base-url",
                    running.url,
                    "--conformance-config",
                    str(config),
                    *rpc,
                    "--deselect",
                    "conformance/tests/test_schemathesis.py",
                    "--conformance-report",
                    str(tmp_path / "conformance-report"),
                ],
                cwd=REPO,
                env=suite_env,
                capture_output=True,
                text=True,
                timeout=SUITE_TIMEOUT_S,
                check=False,
            )
            assert running.stop() == 0
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    report = running.report()
    assert service_violations(report) == [], summary(service_violations(report))
    accepted = [v for v in report["violations"] if v["status"] < 400]
    assert accepted == [], summary(accepted)
    assert report["exchanges"] > 500, report["exchanges"]
    assert len(report["rules_exercised"]) > 100, len(report["rules_exercised"])
