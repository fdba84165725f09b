"""`rfqsim trigger EVENT` against a real simulator with a demo key: each flow reaches the status
whose event it sends (expired, failed not_landed, filled after expired: the late correction,
filled), the event reaches the key's partner's https endpoint, and nothing else moves: the
service clock stays where it was and the user's own live quote keeps its status and expiresAt
(the flows move their own RFQ's time only, docs/decisions.md TT3). The trigger's expired and
failed RFQs give back their outstanding slot, so the key's cap is still free afterwards. It says
where the event went, and a bad key is one line and exit 1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.rfq_world import Api, partner_events
from tests.integration.serve_process import RFQSIM, serve

pytestmark = pytest.mark.integration

OUTSTANDING_CAP = 4  # per key (spec 1-rfq-v2 "Limits")


def trigger(api_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RFQSIM), "trigger", *args, "--url", api_url],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


def run_json(api: Api, event: str, key: str) -> dict[str, Any]:
    done = trigger(api.url, event, "--api-key", key, "--json")
    assert done.returncode == 0, done.stderr
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def test_each_event_runs_its_real_flow_and_disturbs_nothing_else(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        api = Api(served.api_url, served.info)
        key = api.demo_key()
        # The user's own live quote, with the same key and wallet as the trigger.
        mine = api.quote(key, api.demo_wallet(0))

        def untouched() -> None:
            assert api.data("GET", "/_sim/clock")["offset_seconds"] == 0
            now, record = api.now(), api.record(mine["rfqId"], key)
            assert record["expiresAt"] == mine["quote"]["expiresAt"], record
            if now < record["expiresAt"]:
                assert record["status"] == "quoted", record

        with partner_events(api, key) as events:
            expired = run_json(api, "rfq.expired", key)
            assert expired["status"] == "expired"
            got = events.wait("rfq.expired", expired["rfqId"])
            assert got["data"]["rfq"]["failReason"] is None
            untouched()

            failed = run_json(api, "rfq.failed", key)
            assert (failed["status"], failed["failReason"]) == ("failed", "not_landed")
            got = events.wait("rfq.failed", failed["rfqId"])
            assert got["data"]["rfq"]["failReason"] == "not_landed"
            untouched()

            late = run_json(api, "rfq.filled.late", key)
            assert late["status"] == "filled"
            # The fill landed after the quote had lapsed: the late correction of rfq.expired.
            assert str(late["filledAt"]) >= str(late["expiresAt"]), late
            body = events.wait("rfq.filled", late["rfqId"])["data"]["rfq"]
            assert (body["late"], body["supersedes"]) == (True, "rfq.expired")
            assert [e["type"] for e in events.of(late["rfqId"])] == ["rfq.expired", "rfq.filled"]
            untouched()

            filled = run_json(api, "rfq.filled", key)
            assert filled["status"] == "filled"
            body = events.wait("rfq.filled", filled["rfqId"])["data"]["rfq"]
            assert (body["late"], body["txHash"]) == (False, filled["txHash"])
            untouched()
            for event in events.of(mine["rfqId"]):  # it lapses at its own time, never earlier
                assert event["created"] >= mine["quote"]["expiresAt"], event

        plain = trigger(api.url, "rfq.expired", "--api-key", key)
        assert plain.returncode == 0, plain.stderr
        assert "has no endpoint subscribed to rfq.expired" in plain.stdout
        # None of the trigger's RFQs holds a slot: the user's quote has the only one.
        for _ in range(OUTSTANDING_CAP - 1):
            api.quote(key, api.demo_wallet(0))
        bad = trigger(api.url, "rfq.filled", "--api-key", "tx_test_000000000000.nope")
        assert bad.returncode == 1
        last = bad.stderr.strip().splitlines()[-1]
        assert last.startswith("rfqsim trigger: POST /v2/rfq/request answered 401"), last
        assert "(request_id req_" in last, last
        assert "Traceback" not in bad.stderr
