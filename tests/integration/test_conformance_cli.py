"""`rfqsim conformance` as QA runs it against a deployment: one clear line for each set-up
mistake, and a real run of an area against a running simulator."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account

from conformance.deployment import run_cost
from conformance.deployment.preflight import funds_check
from conformance.wire.chain import Chain
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_data
from rfqkit.wallets import Wallet
from tests.integration.serve_process import RFQSIM, Served, serve

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


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
    one_line_failure(bad_key, "key tx_test_000000000000… (flag) is refused (401)")
    assert "a" * 43 not in bad_key.stdout + bad_key.stderr, "the secret was printed"
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


def test_a_funding_wallet_short_of_what_the_areas_lend_stops_the_run_naming_the_token(
    served: Served, tmp_path: Path
) -> None:
    """The last taker wallet funds fresh makers and takers: the pre-run check reads its balances
    and stops a run whose areas lend more of a token than it holds (never a test failure)."""
    chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
    demo = served.info["demo_wallets"][-1]
    poor = Wallet.create()  # gas, and no token at all
    Chain(chain["rpc_url"], 97).transact(
        Wallet(str(demo["address"]), str(demo["private_key"])), poor.address, value=10**18
    )
    key = str(served.info["demo_keys"][1]["key"])
    inputs = ("--base-url", served.api_url, "--rpc-url", f"97={chain['rpc_url']}")
    lends = run_cost.needed(["feed"])[97]
    assert lends.get("NGNS"), "the feed area lends NGNS (conformance/deployment/run_cost.py LENT)"
    short = conformance(
        *inputs, "--api-key", key, "--taker-key", poor.private_key, "--only", "feed", cwd=tmp_path
    )
    one_line_failure(
        short,
        f"funds of {poor.address} on chain 97 holds NGNS 0 (lends up to "
        f"{run_cost.amounts_text({'NGNS': lends['NGNS']})})",
    )
    assert "fund it first" in short.stderr
    # The demo wallet holds enough: its line says how much, what the areas lend, runs left.
    rich = conformance(
        *inputs,
        "--api-key",
        key,
        "--taker-key",
        str(demo["private_key"]),
        "--only",
        "feed",
        "--",
        "-k",
        "no_test_is_named_like_this",
        cwd=tmp_path,
    )
    line = next(x for x in rich.stdout.splitlines() if "funds of" in x)
    assert line.startswith(f"  ok    funds of {demo['address']} on chain 97: holds "), line
    assert f"the selected areas lend up to {run_cost.amounts_text(lends)} at once" in line


def test_the_funds_check_waits_out_a_key_window_a_run_before_spent(served: Served) -> None:
    """A run started right after another can find the key's window spent: the pre-run funds
    check waits out the 429 (Retry-After) and still reads the funding wallet's balances."""
    chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
    demo = served.info["demo_wallets"][-1]
    made = Client(served.api_url).post(
        "/_sim/keys", json={"partner": "demo", "environment": "test", "scopes": ["trades:read"]}
    )
    key = str(made.json()["data"]["key"])
    spender = Client(served.api_url, headers={"X-API-Key": key})
    for _ in range(200):  # the default tier's 60 a minute, and then some
        if spender.get("/v2/rfq/levels", params={"chainId": 97}).status == 429:
            break
    else:
        raise AssertionError("the key's window was never spent")
    check = funds_check(
        served.api_url, key, str(demo["address"]), 97, str(chain["rpc_url"]), ["feed"]
    )
    assert check.problem is None, check.problem
    assert check.detail.startswith("holds "), check.detail


def test_a_maker_credential_is_checked_as_one(served: Served, tmp_path: Path) -> None:
    base = ("--base-url", served.api_url)
    taker = str(served.info["demo_keys"][1]["key"])
    as_maker = conformance(*base, "--maker-key", taker, cwd=tmp_path)
    one_line_failure(as_maker, f"maker credential {taker.split('.')[0]}… (flag)")
    assert "a maker credential gets 403 on taker paths" in as_maker.stderr
    made = assert_data(
        Client(served.api_url).post(
            "/_sim/keys",
            json={
                "partner": "qa-cli",
                "environment": "test",
                "scopes": ["maker:stream"],
                "maker_wallet": Account.create().address,
            },
        ),
        201,
    )
    maker = str(made["key"])
    # A good maker credential gets its ok line; a refused key beside it stops the run.
    result = conformance(
        *base, "--maker-key", maker, "--api-key", "tx_test_000000000000." + "a" * 43, cwd=tmp_path
    )
    one_line_failure(result, "is refused (401)")
    ok = f"  ok    maker credential {maker.split('.')[0]}… (flag): authenticates; a taker path"
    assert any(line.startswith(ok) for line in result.stdout.splitlines()), result.stdout
    assert maker.split(".", 1)[1] not in result.stdout + result.stderr, "the secret was printed"


def test_an_area_runs_against_a_deployment_and_writes_the_matrix(
    served: Served, tmp_path: Path
) -> None:
    report = tmp_path / "report"
    result = conformance(
        "--base-url", served.api_url, "--only", "conventions", "--report", str(report), cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout[-3000:]
    # The headline judges the selected rules only; the rest are not selected, not missing.
    matrix = json.loads((report / "matrix.json").read_text())
    totals = matrix["totals"]
    headline = f"conventions: {totals['passed']} of {totals['selected']} rules passed, 0 failed"
    assert headline in result.stdout, result.stdout[-3000:]
    assert totals["not_covered"] == 0
    assert totals["not_selected"] == totals["rules"] - totals["selected"] > 0
    assert f"{totals['not_selected']} rules not selected" in result.stdout
    assert (report / "matrix.md").exists()
    assert (report / "matrix.html").exists()
    # docs/conformance.md shows what this command prints: each line of its sample, figures
    # aside, is a line of the real output.
    printed = [line.strip() for line in result.stdout.splitlines()]
    for shape in sample_shapes("$ rfqsim conformance --config ready.json --only conventions"):
        assert any(shape.fullmatch(line) for line in printed), (shape.pattern, printed[-8:])


def sample_shapes(command: str) -> list[re.Pattern[str]]:
    """The summary lines docs/conformance.md shows after `command` (those after its `...`, up
    to the next blank line), each as a pattern in which every figure may differ."""
    lines = DOCS.read_text().splitlines()
    start = lines.index("...", next(i for i, x in enumerate(lines) if x.startswith(command)))
    shown = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        shown.append(line.strip())
    assert shown, f"docs/conformance.md shows no output after {command!r}"
    figure = re.compile(r"\d+(?:[.,]\d+)*")
    return [
        re.compile(figure.pattern.join(re.escape(part) for part in figure.split(x))) for x in shown
    ]


def test_a_broken_key_in_the_config_file_stops_the_run_before_any_test(
    served: Served, tmp_path: Path
) -> None:
    chain = next(c for c in served.info["chains"] if c["chain_id"] == 97)
    good = str(served.info["demo_keys"][1]["key"])
    corrupted = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    config = tmp_path / "staging.yaml"
    config.write_text(
        f"base_url: {served.api_url}\n"
        f"chains:\n  - {{chain_id: 97, rpc_url: {chain['rpc_url']}, environment: test}}\n"
        f"api_keys:\n  - {{key: {good}, scopes: [trades:write, trades:read]}}\n"
        f"  - {corrupted}\n"
    )
    report = tmp_path / "report"
    result = conformance("--config", str(config), "--report", str(report), cwd=tmp_path)
    prefix = corrupted.split(".", 1)[0]
    one_line_failure(result, f"key {prefix}… (config {config}) is refused (401)")
    # One line per check, the good inputs too; the secret never appears.
    lines = result.stdout.splitlines()
    assert lines[0] == "rfqsim conformance: checking the inputs", lines
    assert f"  ok    target {served.api_url}: answers GET /v2/health" in lines
    assert f"  ok    RPC URL 97={chain['rpc_url']}: chain 97" in lines
    assert any(line.startswith(f"  ok    key {good.split('.')[0]}… (config") for line in lines)
    assert any(line.startswith(f"  FAIL  key {prefix}… (config") for line in lines)
    secret = corrupted.split(".", 1)[1]
    assert secret not in result.stdout + result.stderr
    assert not report.exists(), "no test ran"


def test_webhook_local_lets_a_loopback_deployments_webhooks_reach_the_suite(
    tmp_path: Path,
) -> None:
    """`--webhook-local` against `rfqsim serve --no-control-api` on this machine: the suite's
    receiver listens on loopback with a certificate of the deployment's local CA, so the
    webhook rules run with no public URL; without the flag the same test is skipped, naming
    the flag."""
    state = tmp_path / "state"
    test = "test_a_takers_swap_is_delivered_as_filled_with_the_settled_amounts"
    env = {**os.environ, "RFQSIM_STATE_DIR": str(state)}
    with serve(tmp_path, "--no-control-api", env=env) as foreign:
        ready = tmp_path / "ready.json"
        given = ["--base-url", foreign.api_url, "--config", str(ready)]
        given += [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in foreign.info["chains"]]

        def outcome(*flags: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
            report = tmp_path / f"report{len(flags)}"
            result = conformance(
                *given,
                *flags,
                "--only",
                "webhooks",
                "--report",
                str(report),
                "--",
                "-k",
                test,
                cwd=tmp_path,
            )
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
            tests = json.loads((report / "matrix.json").read_text())["tests"]
            (only,) = [t for t in tests if t["nodeid"].endswith(test)]
            return result, only

        _, skipped = outcome()
        assert skipped["outcome"] == "skipped"
        assert "--webhook-local" in skipped["reason"], skipped["reason"]
        result, passed = outcome("--webhook-local", str(state))
        assert passed["outcome"] == "passed", passed
        assert (
            "ok    webhook receiver (--webhook-local): https on a free loopback port; state:"
            in (result.stdout)
        )
