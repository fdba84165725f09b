"""Chain JSON-RPC over the same plain HTTP as the service's calls: :func:`rpc` calls one
method on a node and returns its ``result``, raising :class:`RpcError` for an error object or a
transport failure, and :func:`hex_to_int` reads a ``0x`` quantity. Standard library only, so it
serves the suite and an integrator's scripts alike; :mod:`conformance.chain` builds balances,
signed transactions and receipts on top of it.
"""

from __future__ import annotations

from typing import Any

from conformance.client import request


class RpcError(Exception):
    """A JSON-RPC error object, or a transport failure talking to the node."""

    def __init__(self, method: str, error: Any) -> None:
        super().__init__(f"{method}: {error!r}")
        self.method = method
        self.error = error


def rpc(url: str, method: str, params: list[Any] | None = None, *, timeout: float = 30.0) -> Any:
    """Call one JSON-RPC method on a chain node and return ``result``."""
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}
    resp = request("POST", url, json=payload, timeout=timeout)
    if resp.status != 200 or not resp.is_json or not isinstance(resp.body, dict):
        raise RpcError(method, f"HTTP {resp.status}: {resp.raw[:300]!r}")
    if resp.body.get("error") is not None:
        raise RpcError(method, resp.body["error"])
    return resp.body.get("result")


def hex_to_int(value: Any) -> int:
    assert isinstance(value, str), f"not a hex quantity: {value!r}"
    assert value.startswith("0x"), f"not a hex quantity: {value!r}"
    return int(value, 16)
