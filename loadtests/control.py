"""Setup calls the master makes outside the measured traffic: the simulator's control API
(``/_sim/*``), key and webhook registration, and the test chain's JSON-RPC.

Plain ``urllib`` (cooperative under locust's gevent monkey-patching), so none of these calls
shows up in locust's statistics or in the SLO counts."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from loadtests.common import ensure_loopback
from rfqkit.json_rpc import rpc

TIMEOUT_S = 30.0


class SimControlError(RuntimeError):
    def __init__(self, method: str, url: str, status: int, body: str) -> None:
        super().__init__(f"{method} {url} answered {status}: {body[:300]}")
        self.status = status


class Control:
    """JSON calls to one simulator (loopback only)."""

    def __init__(self, base_url: str, timeout: float = TIMEOUT_S) -> None:
        self.base_url = ensure_loopback(base_url).rstrip("/")
        self.timeout = timeout

    def call(
        self, method: str, path: str, body: Any = None, *, key: str | None = None
    ) -> dict[str, Any]:
        """The answer's JSON object; ControlError on anything but 2xx."""
        url = self.base_url + path
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise SimControlError(
                method, url, exc.code, exc.read().decode(errors="replace")
            ) from exc
        answer = json.loads(raw) if raw else {}
        if not isinstance(answer, dict):
            raise SimControlError(method, url, 200, f"not a JSON object: {raw[:100]!r}")
        return answer

    def data(
        self, method: str, path: str, body: Any = None, *, key: str | None = None
    ) -> dict[str, Any]:
        """``answer["data"]`` as an object."""
        value = self.call(method, path, body, key=key).get("data")
        if not isinstance(value, dict):
            raise SimControlError(method, self.base_url + path, 200, f"no data object: {value!r}")
        return value

    def info(self) -> dict[str, Any]:
        return self.data("GET", "/_sim/info")

    def clock_offset_s(self) -> float:
        return float(self.data("GET", "/_sim/clock")["offset_seconds"])

    def limits(self) -> dict[str, Any]:
        return self.data("GET", "/_sim/limits")

    def put_limits(self, change: dict[str, Any]) -> dict[str, Any]:
        return self.data("PUT", "/_sim/limits", change)

    def create_key(
        self, partner: str, scopes: list[str], tier: str = "unlimited"
    ) -> dict[str, Any]:
        body = {
            "partner": partner,
            "name": f"{partner} (loadtests)",
            "environment": "test",
            "scopes": scopes,
            "tier": tier,
        }
        return self.data("POST", "/_sim/keys", body)

    def revoke_key(self, key_id: str) -> None:
        self.data("POST", f"/_sim/keys/{key_id}/revoke")

    def fleet(self) -> list[dict[str, Any]]:
        fleet = self.data("GET", "/_sim/makers")["fleet"]
        return [dict(m) for m in fleet]

    def change_maker(self, name: str, change: dict[str, Any]) -> None:
        self.data("PATCH", f"/_sim/makers/{name}", change)


def deal_erc20(rpc_url: str, token: str, holder: str, amount: int) -> None:
    """Set ``holder``'s balance of ``token`` on an Anvil chain (``anvil_dealERC20``).

    The load takers are fresh wallets: funding them this way keeps the simulator's own demo
    wallets and makers untouched, and gives every taker more than any run can reserve, so proof
    of funds never turns load into 400 insufficient_funds.
    """
    rpc(
        ensure_loopback(rpc_url), "anvil_dealERC20", [holder, token, hex(amount)], timeout=TIMEOUT_S
    )
