"""`rfqsim serve --provider-url URL` with the provider sandbox started on its own, as
docs/provider-sandbox.md describes: `python -m provider_sandbox serve --from-ready-file` reads
the simulator's chains from its ready file. The simulator then serves the ramp (providers,
banks) and its /_sim/ramp controls from that sandbox over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from rfqkit.free_ports import unclaimed_port
from tests.integration.serve_process import REPO, serve, stop, wait_ready

pytestmark = pytest.mark.integration


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_the_simulator_uses_a_sandbox_started_elsewhere(tmp_path: Path) -> None:
    port = unclaimed_port()
    provider_url = f"http://127.0.0.1:{port}"
    with serve(tmp_path, "--no-makers", "--provider-url", provider_url) as served:
        # Before the sandbox runs, nobody can run the corridor (RA26): an empty list.
        assert get(f"{served.api_url}/v2/ramp/providers") == {"providers": []}
        ready = tmp_path / "sandbox-ready.json"
        sandbox = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "provider_sandbox",
                "serve",
                "--port",
                str(port),
                "--ready-file",
                str(ready),
                "--from-ready-file",
                str(tmp_path / "ready.json"),
                "--webhook-url",
                f"{served.api_url}/_provider/ngnramp/webhooks",
            ],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            info = wait_ready(sandbox, ready)
            assert info["url"] == provider_url
            listed = get(f"{served.api_url}/v2/ramp/providers")["providers"]
            assert [p["provider"] for p in listed] == ["ngnramp"]
            assert listed[0]["chainIds"] == [56, 97]
            banks = get(f"{served.api_url}/v2/ramp/banks?provider=ngnramp")["banks"]
            assert banks
            assert {"code", "name"} == set(banks[0])
            # The control API reaches the same sandbox.
            state = get(f"{served.api_url}/_sim/ramp/state")["data"]
            assert state["calls"]["GET /api/v1/banks"] == 1
        finally:
            code = stop(sandbox)
            if sandbox.stderr is not None:
                sandbox.stderr.close()
        assert code == 0, "the standalone sandbox did not stop cleanly"
