"""Bounded memory, seen from outside: an RFQ at rest leaves memory for the history database,
is readable through the 24 h correction window and the retention, and answers 404 once both
have passed (docs/decisions.md R20)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.integration.serve_process import serve

pytestmark = pytest.mark.integration

DAY_S = 24 * 3600


def call(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return int(error.code), json.loads(error.read())


def test_an_rfq_at_rest_is_forgotten_after_the_window_and_the_retention(tmp_path: Path) -> None:
    with serve(tmp_path) as served:
        api, info = served.api_url, served.info
        chain = next(c for c in info["chains"] if c["chain_id"] == 97)
        tokens = {t["symbol"]: t["address"] for t in chain["tokens"]}
        key = next(k["key"] for k in info["demo_keys"] if k["label"] == "taker-test")
        headers = {"Authorization": f"Bearer {key}"}
        body = {
            "chainId": 97,
            "sellToken": tokens["USDT"],
            "buyToken": tokens["NGNS"],
            "sellAmount": str(10**18),
            "taker": info["demo_wallets"][0]["address"],
        }
        status, answer = call(f"{api}/v2/rfq/request", body, headers)
        assert status == 200
        assert answer["data"]["status"] == "quoted"
        rfq_id = answer["data"]["rfqId"]
        assert call(f"{api}/v2/rfq/{rfq_id}/cancel", {}, headers)[0] == 200

        def read() -> tuple[int, Any]:
            return call(f"{api}/v2/rfq/{rfq_id}", None, headers)

        assert call(f"{api}/_sim/clock/advance", {"seconds": 120})[0] == 200  # it expires
        deadline = time.monotonic() + 10
        while read()[1].get("data", {}).get("status") != "expired":
            assert time.monotonic() < deadline, read()
            time.sleep(0.05)
        # A day later it could still be corrected by a late fill: kept, in the history
        # database (at rest longer than retention.rfq_in_memory_s, it left memory).
        assert call(f"{api}/_sim/clock/advance", {"seconds": DAY_S})[0] == 200
        deadline = time.monotonic() + 10
        while (store := call(f"{api}/_sim/runtime")[1]["data"]["store"])["rfqs_in_memory"]:
            assert time.monotonic() < deadline, store
            time.sleep(0.05)
        assert store["file_bytes"] > 0
        status, answer = read()
        assert (status, answer["data"]["status"], answer["data"]["rfqId"]) == (
            200,
            "expired",
            rfq_id,
        )
        assert call(f"{api}/_sim/runtime")[1]["data"]["store"]["rfqs_in_memory"] == 1  # read back
        # Past the window and the hour of retention: forgotten (the sweep runs on the advance).
        assert call(f"{api}/_sim/clock/advance", {"seconds": 3601})[0] == 200
        deadline = time.monotonic() + 10
        while (answer := read())[0] != 404:
            assert time.monotonic() < deadline, answer
            time.sleep(0.05)
        assert answer[1]["error"]["code"] == "not_found"
