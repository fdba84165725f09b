"""`rfqsim conformance` as QA runs it against a deployment: one clear line for each set-up
mistake, and a real run of an area against a running simulator."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.serve_process import RFQSIM, Served, serve

pytestmark = pytest.mark.integration


def conformance(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RFQSIM), "conformance", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_failure(result: subprocess.CompletedProcess[str], expected: str) -> None:
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("conf"), "--no-makers") as running:
        yield running


def test_unreachable_target(tmp_path: Path) -> None:
    one_line_failure(conformance("--base-url", "http://127.0.0.1:9", cwd=tmp_path), "unreachable")


def test_wrong_rpc_and_bad_key(served: Served, tmp_path: Path) -> None:
    chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
    wrong = conformance(
        "--base-url", served.api_url, "--rpc-url", f"56={chain['rpc_url']}", cwd=tmp_path
    )
    one_line_failure(wrong, "is chain 97, not 56")
    bad_key = conformance(
        "--base-url", served.api_url, "--api-key", "tx_test_000000000000." + "a" * 43, cwd=tmp_path
    )
    one_line_failure(bad_key, "--api-key is refused (401)")
    unfunded = conformance(
        "--base-url",
        served.api_url,
        "--rpc-url",
        f"97={chain['rpc_url']}",
        "--taker-key",
        "0x" + "11" * 32,
        cwd=tmp_path,
    )
    one_line_failure(unfunded, "has no gas on chain 97")


def test_an_area_runs_against_a_deployment_and_writes_the_matrix(
    served: Served, tmp_path: Path
) -> None:
    report = tmp_path / "report"
    result = conformance(
        "--base-url", served.api_url, "--only", "conventions", "--report", str(report), cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "passed" in result.stdout
    assert (report / "matrix.md").exists()
    assert (report / "matrix.json").exists()
