"""No false failure whatever subset of the QA inputs is given: `rfqsim conformance` against a
faithful deployment (`rfqsim serve --no-control-api`) with one key whose scopes are probed, the
same key with its scopes written out, one taker wallet and no key, no wallet, and no RPC URL.
Every run must end with 0 failures; what an input would have run is skipped as missing_input,
naming it.

Each subset runs the same selection of tests, the ones whose inputs come from discovery (the
settlement contracts found from a firm quote, with the key or keyless with the wallet's proof,
the signature-transfer contract of a prepared v1 order), a second taker wallet, a probed key's
scopes and the chain's tokens read on chain: seconds per test, so the five runs stay within a
few minutes on a loaded machine. The whole suite with the first subset's inputs was run by hand
(docs/conformance.md, "Inputs and what they run").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.deployment import loans
from conformance.wire.chain import Chain, wait_for
from conformance.wire.inputs import parse_wallet
from rfqkit.json_rpc import hex_to_int
from tests.integration.serve_process import RFQSIM, Served, serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("conformance-inputs")]

SELECTION = " or ".join(
    (
        "test_exact_input_single_maker_settles_keyless",  # the reactor, from discovery
        "test_nonce_reused_with_other_contents_is_replayed",  # a second wallet for one variant
        "test_key_is_accepted_as_bearer_or_x_api_key",  # a key whose scopes are probed
        "test_a_signed_order_rests_active_with_exactly_its_terms",  # v1: signature transfer
        "test_ladder_lists_every_pair_both_ways_with_increasing_points",  # tokens on chain
    )
)
SETTLES = "test_rfq_settlement_single_maker.py::test_exact_input_single_maker_settles_keyless"
OTHER_TAKER = "test_nonce_reused_with_other_contents_is_replayed[other-taker]"
BEARER = "test_key_is_accepted_as_bearer_or_x_api_key[bearer]"
V1_ORDER = "test_a_signed_order_rests_active_with_exactly_its_terms"
LADDER = "test_ladder_lists_every_pair_both_ways_with_increasing_points[97]"


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("foreign"), "--no-control-api") as running:
        GAS_PRICE_AT_START.update({c["chain_id"]: gas_price(c) for c in running.info["chains"]})
        yield running


GAS_PRICE_AT_START: dict[int, int] = {}  # each chain's eth_gasPrice before any run


def gas_price(chain: dict[str, Any]) -> int:
    return hex_to_int(Chain(chain["rpc_url"], chain["chain_id"]).rpc("eth_gasPrice"))


def inputs(served: Served, subset: str) -> list[str]:
    """The flags of one subset, as docs/conformance.md shows them."""
    info = served.info
    key = next(k for k in info["api_keys"] if str(k["key"]).startswith("tx_test_"))
    wallet = ["--taker-key", str(info["taker_wallets"][0])]
    rpc = [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in info["chains"]]
    probed = ["--api-key", str(key["key"])]
    return {
        "one key probed": [*probed, *wallet, *rpc],
        "one key with scopes": [
            "--api-key",
            f"{key['key']}={','.join(key['scopes'])}",
            *wallet,
            *rpc,
        ],
        "one wallet, no key": [*wallet, *rpc],
        "no wallet": [*probed, *rpc],
        "no RPC URL": [*probed, *wallet],
    }[subset]


def run(served: Served, subset: str, report: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    done = subprocess.run(
        [
            str(RFQSIM),
            "conformance",
            "--base-url",
            served.api_url,
            *inputs(served, subset),
            "--report",
            str(report),
            "--",
            "-k",
            SELECTION,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=report.parent,
        check=False,
    )
    matrix = json.loads((report / "matrix.json").read_text()) if report.exists() else None
    return done, matrix


def outcomes(matrix: Any) -> dict[str, tuple[str, str]]:
    """test name (module-less for the suite's own) -> (outcome, reason)."""
    found = {}
    for test in matrix["tests"]:
        name = test["nodeid"].split("::", 1)[1]
        found[name] = (test["outcome"], test.get("reason", ""))
        found[test["nodeid"].rsplit("/", 1)[-1]] = found[name]
    return found


@pytest.mark.parametrize(
    ("subset", "passed", "skipped"),
    [
        ("one key probed", [SETTLES, BEARER, V1_ORDER, LADDER], {OTHER_TAKER: "taker_wallet"}),
        ("one key with scopes", [SETTLES, BEARER, V1_ORDER, LADDER], {OTHER_TAKER: "taker_wallet"}),
        (
            "one wallet, no key",
            [SETTLES],
            {
                OTHER_TAKER: "taker_wallet",
                BEARER: "key:trades",
                V1_ORDER: "key:v1",
                LADDER: "key:trades",  # the ladder is read by a keyed client there
            },
        ),
        ("no wallet", [LADDER], {SETTLES: "taker_wallet", BEARER: "taker_wallet"}),
        ("no RPC URL", [], {SETTLES: "rpc", LADDER: "rpc", V1_ORDER: "rpc"}),
    ],
)
def test_a_faithful_deployment_has_no_failure_whatever_inputs_are_given(
    foreign: Served,
    tmp_path: Path,
    subset: str,
    passed: list[str],
    skipped: dict[str, str],
) -> None:
    done, matrix = run(foreign, subset, tmp_path / "report")
    output = done.stdout[-4000:] + done.stderr[-2000:]
    assert done.returncode == 0, f"{subset}: {output}"
    assert matrix is not None, output
    assert matrix["totals"]["failed"] == 0, output
    assert "Traceback" not in done.stderr
    assert "KeyError" not in json.dumps(matrix)
    found = outcomes(matrix)
    for name in passed:
        assert found[name][0] == "passed", (subset, name, found[name])
    for name, need in skipped.items():
        outcome, reason = found[name]
        assert outcome == "skipped", (subset, name, found[name])
        assert reason.startswith(f"needs {need}:"), (subset, name, reason)
    kinds = {t.get("skip_kind") for t in matrix["tests"] if t["outcome"] == "skipped"}
    assert kinds <= {"missing_input", "inherent_control"}, (subset, kinds)
    # The pre-run check said, one line each, what it checked.
    assert "rfqsim conformance: checking the inputs" in done.stdout
    assert f"  ok    target {foreign.api_url}" in done.stdout
    assert_loans_given_back(foreign, subset, tmp_path / "report", done.stdout)


def assert_loans_given_back(served: Served, subset: str, report: Path, stdout: str) -> None:
    """Every wallet the run funded from the given taker wallet holds nothing at the end: its
    tokens and coin went back to that wallet (conformance/deployment/loans.py)."""
    written = json.loads((report / "loans.json").read_text())
    repaid = written["given_back"]
    assert len(written["lent"]) >= len(repaid), written  # a wallet may be funded twice
    lender = parse_wallet(str(served.info["taker_wallets"][0])).address
    if subset in ("no wallet", "no RPC URL"):
        assert repaid == [], (subset, repaid)
        return
    assert repaid, f"{subset}: the settling test funds a taker from the given wallet"
    assert all(r["error"] is None and r["lender"] == lender for r in repaid), repaid
    chains = {c["chain_id"]: c for c in served.info["chains"]}
    for r in repaid:
        chain = chains[r["chain_id"]]
        node = Chain(chain["rpc_url"], r["chain_id"])
        assert r["tokens"], r  # every token of the chain, read before paying back
        for token in r["tokens"].values():
            assert node.balance_of(token["address"], r["borrower"]) == 0, r
        assert node.native_balance(r["borrower"]) == 0, r
        # Paying back never outbids the node: a price above its suggestion raises the next one
        # for every sender of the chain (tips feed the suggestion), run after run.
        assert gas_price(chain) <= 2 * GAS_PRICE_AT_START[r["chain_id"]], r
    assert f" gave back to {lender}: " in stdout, stdout[-3000:]


def test_a_run_stopped_by_ctrl_c_or_killed_still_gives_back_what_it_lent(
    foreign: Served, tmp_path: Path
) -> None:
    """Ctrl-C: the run pays back before it exits. Killed: its ledger stays, and the next run pays
    it back before it starts."""
    ledgers = tmp_path / "tmp"  # the runs' $TMPDIR: their ledgers and nothing else's
    ledgers.mkdir()
    env = {**os.environ, "TMPDIR": str(ledgers)}

    def start(report: Path, selection: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                str(RFQSIM),
                "conformance",
                "--base-url",
                foreign.api_url,
                *inputs(foreign, "one key probed"),
                "--report",
                str(report),
                "--",
                "-p",
                "no:randomly",
                "-k",
                selection,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=tmp_path,
            env=env,
        )

    def first_loan() -> Path:
        """The run's ledger once it notes a wallet's loan (a whole line, written before the
        first transfer). The file exists a moment before its first line: a Ctrl-C then finds
        nothing lent (run L27 went red on that window)."""

        def noted() -> Path | None:
            for ledger in ledgers.glob(f"{loans.ROOT_NAME}/*/main.jsonl"):
                text = ledger.read_text()
                if text.endswith("\n") and text.strip():
                    return ledger
            return None

        found: Path = wait_for(noted, timeout=180, interval=0.2, what="the run's first loan")
        return found

    # Ctrl-C
    run = start(tmp_path / "interrupted", "test_exact_input_single_maker_settles_keyless")
    ledger = first_loan()
    run.send_signal(signal.SIGINT)
    output, _ = run.communicate(timeout=120)
    assert_loans_given_back(foreign, "one key probed", tmp_path / "interrupted", output)
    assert not ledger.parent.exists(), output[-2000:]  # paid back: nothing left for later

    # Killed: the ledger stays; the next run (which funds nothing) pays it back first.
    run = start(tmp_path / "killed", "test_exact_input_single_maker_settles_keyless")
    ledger = first_loan()
    borrowers = [json.loads(line) for line in ledger.read_text().splitlines()]
    run.kill()
    run.communicate(timeout=60)
    next_run = start(tmp_path / "next", LADDER.split("[")[0])
    output, _ = next_run.communicate(timeout=300)
    assert next_run.returncode == 0, output[-3000:]
    assert f"an earlier run's loans: 1 wallet(s) gave back to {borrowers[0]['lender']}" in output
    assert not ledger.parent.exists()
    chain = next(c for c in foreign.info["chains"] if c["chain_id"] == borrowers[0]["chain_id"])
    node = Chain(chain["rpc_url"], borrowers[0]["chain_id"])
    taker = parse_wallet(borrowers[0]["borrower_key"]).address
    for token in borrowers[0]["tokens"]:
        assert node.balance_of(token["address"], taker) == 0
