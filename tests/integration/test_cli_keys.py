"""`rfqsim keys` against a running simulator: create prints the key once, list shows only
prefixes, suspend/revoke take effect on the API at once."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.integration.serve_process import RFQSIM, serve

pytestmark = pytest.mark.integration


def keys(api: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RFQSIM), "keys", "--url", api, *args], capture_output=True, text=True, timeout=60
    )


def status_with(api: str, key: str) -> int:
    request = urllib.request.Request(f"{api}/v2/rfq/rfq_doesnotexist", headers={"X-API-Key": key})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        body = json.loads(error.read())
        if body["error"]["request_id"] != error.headers["X-Request-Id"]:
            raise AssertionError("error envelope request_id differs from X-Request-Id") from error
        return int(error.code)


def test_create_list_suspend_revoke(tmp_path: Path) -> None:
    with serve(tmp_path, "--no-makers") as served:
        api = served.api_url
        created = keys(api, "create", "--environment", "test", "--scope", "trades:read")
        assert created.returncode == 0, created.stderr
        full = created.stdout.strip()
        prefix, secret = full.split(".")
        assert prefix.startswith("tx_test_")
        assert status_with(api, full) == 404  # authenticated; the RFQ simply does not exist

        listed = keys(api, "list")
        assert prefix in listed.stdout
        assert secret not in listed.stdout

        assert keys(api, "suspend", prefix).stdout.strip() == f"{prefix} suspended"
        assert status_with(api, full) == 401
        assert keys(api, "activate", prefix).returncode == 0
        assert status_with(api, full) == 404
        assert keys(api, "revoke", prefix).stdout.strip() == f"{prefix} revoked"
        assert status_with(api, full) == 401
        refused = keys(api, "activate", prefix)
        assert refused.returncode != 0
        assert "400 invalid_request" in refused.stderr


def test_unreachable_simulator_is_one_clear_line() -> None:
    result = keys("http://127.0.0.1:9", "list")
    assert result.returncode != 0
    assert "cannot reach the simulator" in result.stderr
    assert "Traceback" not in result.stderr
