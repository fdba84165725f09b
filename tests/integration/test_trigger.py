"""`rfqsim trigger EVENT` against a real simulator with a demo key: each flow reaches the status
whose event it sends (expired, failed not_landed, filled after expired: the late correction),
says where the event went, and a bad key is one line and exit 1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.integration.serve_process import RFQSIM, serve

pytestmark = pytest.mark.integration


def trigger(api_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RFQSIM), "trigger", *args, "--url", api_url],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def test_each_event_runs_its_real_flow(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        key = next(k["key"] for k in served.info["demo_keys"] if k["label"] == "taker-test")
        seen: dict[str, dict[str, object]] = {}
        for event in ("rfq.expired", "rfq.failed", "rfq.filled.late"):
            done = trigger(served.api_url, event, "--api-key", key, "--json")
            assert done.returncode == 0, done.stderr
            seen[event] = json.loads(done.stdout)
        assert seen["rfq.expired"]["status"] == "expired"
        assert (seen["rfq.failed"]["status"], seen["rfq.failed"]["failReason"]) == (
            "failed",
            "not_landed",
        )
        late = seen["rfq.filled.late"]
        assert late["status"] == "filled"
        # The fill landed after the quote had lapsed: the late correction of rfq.expired.
        assert str(late["filledAt"]) > str(late["expiresAt"]), late
        plain = trigger(served.api_url, "rfq.expired", "--api-key", key)
        assert plain.returncode == 0, plain.stderr
        assert "has no endpoint subscribed to rfq.expired" in plain.stdout
        bad = trigger(served.api_url, "rfq.filled", "--api-key", "tx_test_000000000000.nope")
        assert bad.returncode == 1
        assert bad.stderr.strip().splitlines()[-1].startswith("rfqsim trigger: POST /v2/rfq")
        assert "Traceback" not in bad.stderr
