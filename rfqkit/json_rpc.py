"""JSON-RPC 2.0 to a chain node: the one place requests are built and answers read.

`AnvilChain` (rfqkit/chain.py) posts these requests on its keep-alive session, with batches, for
the simulator and the makers. `rpc` is the small synchronous face for scripts, the command line
and the test suites: one call, one `result`, over the standard library only (no event loop, fast
to import), so an integrator's script can use it as it is."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class RpcError(Exception):
    """A JSON-RPC error object, or (`reachable` False) no usable answer from the node."""

    def __init__(self, method: str, error: Any, *, reachable: bool = True) -> None:
        super().__init__(f"{method}: {error!r}" if reachable else f"{method}: {error}")
        self.method = method
        self.error = error  # the error object as the node sent it, or what went wrong
        self.reachable = reachable

    @property
    def message(self) -> str:
        """The node's own sentence for an error object, else what went wrong."""
        if isinstance(self.error, dict) and isinstance(self.error.get("message"), str):
            return str(self.error["message"])
        return str(self.error)


def request(method: str, params: list[Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or []}


def result(method: str, answer: Any) -> Any:
    """The `result` of one answer; RpcError for an error object or a malformed answer."""
    if not isinstance(answer, dict):
        raise RpcError(method, "malformed answer", reachable=False)
    if answer.get("error") is not None:
        raise RpcError(method, answer["error"])
    return answer.get("result")


def rpc(url: str, method: str, params: list[Any] | None = None, *, timeout: float = 30.0) -> Any:
    """Call one method on the node at `url` and return its `result`."""
    body = json.dumps(request(method, params)).encode()
    outgoing = urllib.request.Request(
        url, body, {"Content-Type": "application/json", "Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(outgoing, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        raise RpcError(method, f"HTTP {exc.code} from {url}", reachable=False) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RpcError(method, f"{url} unreachable: {reason}", reachable=False) from exc
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise RpcError(
            method, f"{url} answered something that is not JSON", reachable=False
        ) from exc
    return result(method, answer)


def hex_to_int(value: Any) -> int:
    """A `0x` quantity as an int."""
    if not isinstance(value, str) or not value.startswith("0x"):
        raise ValueError(f"not a hex quantity: {value!r}")
    return int(value, 16)
