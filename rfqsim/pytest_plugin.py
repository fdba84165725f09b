"""The pytest plugin for integrators (entry point `rfqsim` in pyproject's `pytest11`): install
rfqsim, then ask for a fixture.

- `rfqsim_server` (session scope): one `rfqsim serve` on free ports (API, chains, provider)
  for the whole session (per xdist worker), stopped at the end with every Anvil it started.
  `--rfqsim-url URL` uses a simulator that is already running instead.
- `rfqsim` (function scope): the same simulator, reset to its start-up state before the test
  (POST /_sim/reset: well under a second, where a restart takes seconds and changes ports).

Both give an `RfqSim`: the base URL, RPC URLs, demo keys and wallets, and helpers for the
control API (clock, makers, faults, scenarios, snapshots, the request journal). The helpers
use the standard library only; the test's own client is whatever the integrator uses.
docs/testing-with-rfqsim.md has a complete example."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conformance.wire.server import SimulatorProcess, find_rfqsim_bin
from simulator.services.access.keys import demo_key_material

DEMO_KEY_ENVIRONMENTS = {"taker-live": "live", "taker-test": "test", "aggregator-live": "live"}


class RfqSimError(RuntimeError):
    """A control call failed: the status and the error envelope's code and message."""

    def __init__(self, status: int, body: Any) -> None:
        error = body.get("error", {}) if isinstance(body, dict) else {}
        super().__init__(f"{status} {error.get('code')}: {error.get('message')}")
        self.status = status
        self.body = body


@dataclass
class RfqSim:
    """A running simulator and its control API."""

    base_url: str  # http://127.0.0.1:PORT
    info: dict[str, Any]  # the ready file: everything the banner shows
    timeout_s: float = 30.0
    rpc_urls: dict[int, str] = field(init=False)  # chain id -> Anvil JSON-RPC URL
    demo_keys: dict[str, str] = field(init=False)  # label (taker-test, ...) -> full API key
    demo_wallets: list[dict[str, str]] = field(init=False)  # address, private_key

    def __post_init__(self) -> None:
        self.rpc_urls = {int(c["chain_id"]): str(c["rpc_url"]) for c in self.info["chains"]}
        self.demo_keys = {k["label"]: k["key"] for k in self.info.get("demo_keys", [])}
        if not self.demo_keys:  # attached by URL: /_sim/info has no keys, the seed makes them
            self.demo_keys = demo_keys_of(int(self.info["seed"]))
        self.demo_wallets = [
            {"address": w["address"], "private_key": w["private_key"]}
            for w in self.info.get("demo_wallets", [])
        ]

    def chain(self, chain_id: int) -> dict[str, Any]:
        """Contracts, tokens and corridors of one chain, as /_sim/info lists them."""
        return next(c for c in self.info["chains"] if c["chain_id"] == chain_id)

    def token(self, chain_id: int, symbol: str) -> str:
        return str(
            next(t for t in self.chain(chain_id)["tokens"] if t["symbol"] == symbol)["address"]
        )

    # The control API -----------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, Any] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        """One control call; returns its `data`; raises RfqSimError on an error status."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data: bytes | None = None
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload = json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = raw.decode(errors="replace")
            raise RfqSimError(exc.code, parsed) from None
        return payload.get("data", payload) if isinstance(payload, dict) else payload

    def reset(self, *, keep: tuple[str, ...] = ()) -> dict[str, Any]:
        """Back to the state right after start-up (keep: webhooks, keys, limits, faults, clock)."""
        return dict(self.call("POST", "/_sim/reset", {"keep": list(keep)}))

    def advance_clock(self, seconds: int) -> dict[str, Any]:
        """Move the service clock and every chain's block time forward together."""
        return dict(self.call("POST", "/_sim/clock/advance", {"seconds": seconds}))

    def set_maker(self, name: str, **changes: Any) -> dict[str, Any]:
        """Reconfigure a simulated maker: behaviour="silent", latency={...}, online=False, ..."""
        return dict(self.call("PATCH", f"/_sim/makers/{name}", changes))

    def set_faults(self, **switches: Any) -> dict[str, Any]:
        """venue_paused=True, chain_unreachable=[97], indexer_paused=[97], internal_errors=1"""
        return dict(self.call("POST", "/_sim/faults", switches))

    def start_scenario(self, scenario: str | Path) -> dict[str, Any]:
        """A scenario file's path or its YAML text."""
        text = scenario.read_text(encoding="utf-8") if isinstance(scenario, Path) else scenario
        return dict(self.call("POST", "/_sim/scenarios", text, content_type="application/yaml"))

    def snapshot(self, name: str) -> dict[str, Any]:
        return dict(self.call("POST", "/_sim/snapshots", {"name": name}))

    def restore(self, name: str) -> dict[str, Any]:
        return dict(self.call("POST", f"/_sim/snapshots/{name}/restore"))

    def requests(self, **filters: Any) -> list[dict[str, Any]]:
        """The request journal, newest first: path= (or prefix*), method=, status=, since=,
        request_id=, limit=."""
        return list(self.call("GET", "/_sim/requests", query=filters)["requests"])


def demo_keys_of(seed: int) -> dict[str, str]:
    """The demo keys `rfqsim serve --seed SEED` prints (derived from the seed)."""
    keys = {}
    for label, environment in DEMO_KEY_ENVIRONMENTS.items():
        prefix, secret = demo_key_material(seed, label)
        keys[label] = f"tx_{environment}_{prefix}.{secret}"
    return keys


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rfqsim", "rfqsim simulator fixtures")
    group.addoption(
        "--rfqsim-url",
        default=None,
        help="use the simulator running at this URL instead of starting one",
    )
    group.addoption("--rfqsim-seed", type=int, default=1, help="seed of the started simulator")
    group.addoption(
        "--rfqsim-serve-arg",
        action="append",
        default=[],
        help="extra `rfqsim serve` argument for the simulator the rfqsim fixture or the "
        "conformance suite starts (repeatable; --rfqsim-serve-arg=--instances "
        "--rfqsim-serve-arg=2)",
    )


def _info(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url.rstrip("/") + "/_sim/info", timeout=30) as response:
        return dict(json.loads(response.read())["data"])


@pytest.fixture(scope="session")
def rfqsim_server(pytestconfig: pytest.Config) -> Iterator[RfqSim]:
    """One simulator for the session (per xdist worker)."""
    url = pytestconfig.getoption("--rfqsim-url")
    if url:
        yield RfqSim(url.rstrip("/"), _info(url))
        return
    explicit = pytestconfig.getoption("--rfqsim-bin", None)
    process = SimulatorProcess(
        find_rfqsim_bin(explicit, Path(pytestconfig.rootpath)),
        seed=pytestconfig.getoption("--rfqsim-seed"),
        extra_args=pytestconfig.getoption("--rfqsim-serve-arg"),
    )
    info = process.start()
    try:
        yield RfqSim(str(info["api_url"]), info)
    finally:
        process.stop()


@pytest.fixture
def rfqsim(rfqsim_server: RfqSim) -> RfqSim:
    """The session's simulator, reset to its start-up state for this test."""
    rfqsim_server.reset()
    return rfqsim_server
