"""The v1 API called the way an existing v1 integrator's code calls it: its own API keys (issued
through ``/_sim/keys`` with exactly the scopes a test needs, revoked when it ends; the given keys
without control), a client IP of
its own on loopback, the corridor list and the webhook registry, and a request whose body is
still uploading (an Idempotency-Key request that is in flight for as long as the test wants).
Nothing here imports the simulator.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

from conformance.calls.webhooks import NOWHERE
from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
from conformance.wire.client import (
    Client,
    Headers,
    Response,
    fresh_loopback_address,
    is_loopback_url,
)
from conformance.wire.needs import skip_message

ALL_V1_SCOPES = ("quotes:read", "trades:write", "trades:read", "webhooks:manage")
KEY_SHAPE = r"^tx_(live|test)_[0-9a-z]+\.[A-Za-z0-9_-]+$"


class V1Keys:
    """API keys of one partner record of the test's own, each one revoked by ``close``, on a
    simulator with its control API; elsewhere the keys the QA team gave (``exact``: one holding
    no other v1 scope). What only /_sim can do (another partner or tier, revoking, suspending)
    skips the test, naming ``sim_control``."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.sim = target.sim() if target.controllable else None
        self.partner = f"conformance-v1-{secrets.token_hex(6)}"
        self.issued: list[str] = []

    def key(
        self,
        *scopes: str,
        environment: str = "test",
        tier: str = "default",
        partner: str | None = None,
        exact: bool = False,
    ) -> dict[str, Any]:
        """A key with ``scopes`` (exactly those when made here); the record has the full
        ``key``."""
        if self.sim is None:
            if tier != "default" or partner is not None:
                made = "partner" if partner is not None else "rate tier"
                pytest.skip(skip_message("sim_control", f"a key of another {made}: /_sim/keys"))
            return self._given(frozenset(scopes), environment, exact)
        record = self.sim.create_key(
            partner or self.partner, environment, scopes, tier=tier, name="v1-integrator"
        )
        self.issued.append(str(record["key_id"]))
        return record

    def _given(self, wanted: frozenset[str], environment: str, exact: bool) -> dict[str, Any]:
        for given in resolved_inputs(self.target).shared_keys:
            if given.environment != environment or given.scopes is None:
                continue
            if not wanted <= given.scopes:
                continue
            if exact and (given.scopes & frozenset(ALL_V1_SCOPES)) - wanted:
                continue
            return {"key": given.key, "scopes": sorted(given.scopes), "environment": environment}
        need = "key:live" if environment == "live" else "key:v1"
        only = " and no other v1 scope" if exact else ""
        detail = f"--api-key KEY={','.join(sorted(wanted))} (a tx_{environment}_ key{only})"
        pytest.skip(skip_message(need, detail))

    def lacking(self, *missing: str, environment: str = "test") -> dict[str, Any]:
        """A key without any of ``missing``: made here with every other v1 scope; elsewhere any
        given key of the environment whose scopes leave them out (a ``key:read`` serves)."""
        if self.sim is not None:
            others = [s for s in ALL_V1_SCOPES if s not in missing]
            return self.key(*others, environment=environment)
        for given in resolved_inputs(self.target).shared_keys:
            scopes = given.scopes
            if given.environment == environment and scopes and not scopes & frozenset(missing):
                return {"key": given.key, "scopes": sorted(scopes), "environment": environment}
        need = "key:live" if environment == "live" else "key:read"
        without = ", ".join(missing)
        detail = f"a tx_{environment}_ key without {without} (e.g. --api-key KEY=trades:read)"
        pytest.skip(skip_message(need, detail))

    def revoke(self, key: Mapping[str, Any]) -> None:
        if self.sim is None:
            pytest.skip(skip_message("sim_control", "revoking a key: /_sim/keys"))
        self.sim.call("POST", f"keys/{key['key_id']}/revoke")

    def close(self) -> None:
        for key_id in self.issued:
            with contextlib.suppress(AssertionError):
                self.target.sim().call("POST", f"keys/{key_id}/revoke")


@contextlib.contextmanager
def v1_keys(target: Target) -> Iterator[V1Keys]:
    keys = V1Keys(target)
    try:
        yield keys
    finally:
        keys.close()


def bearer(key: Mapping[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def api_key_header(key: Mapping[str, Any]) -> dict[str, str]:
    return {"X-API-Key": str(key["key"])}


def own_address_client(target: Target, http: Client) -> Client:
    """A client the service sees as a client IP no other test uses (on a loopback target)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


def webhook_body(label: str = "", event_types: Iterable[str] = ("swap.filled",)) -> dict[str, Any]:
    """A webhook registration for an https URL no delivery can reach (conformance.calls.webhooks
    NOWHERE): with a given key of a shared partner, its events may fire meanwhile."""
    path = label or secrets.token_hex(6)
    return {"url": f"{NOWHERE}/v1/{path}", "eventTypes": list(event_types)}


def chains_without_contracts(target: Target, environment: str) -> list[int]:
    """Chain ids the simulator lists as known but without a settlement contract."""
    listed = (target.info or {}).get("chains_without_contracts") or []
    return [
        int(c["chain_id"])
        for c in listed
        if isinstance(c, Mapping) and c.get("environment") == environment
    ]


class UploadingRequest:
    """A POST whose headers and first body bytes are sent, the rest held back until
    ``finish``: from the service's side the request is in flight all that time."""

    def __init__(
        self,
        client: Client,
        path: str,
        body: Any,
        headers: Mapping[str, str],
        *,
        held_back: int = 8,
    ) -> None:
        parts = urlsplit(client.url(path))
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"needs a plain http target: {parts}")
        self.raw = json.dumps(body).encode()
        assert len(self.raw) > held_back
        self.held_back = held_back
        self.connection = http.client.HTTPConnection(
            parts.hostname,
            parts.port,
            timeout=client.timeout,
            source_address=client.source_address,
        )
        self.connection.putrequest("POST", parts.path, skip_accept_encoding=True)
        all_headers = {
            **client.headers,
            **headers,
            "Content-Type": "application/json",
            "Content-Length": str(len(self.raw)),
            "Accept": "application/json",
        }
        for name, value in all_headers.items():
            self.connection.putheader(name, value)
        self.connection.endheaders()
        self.connection.send(self.raw[: -self.held_back])
        self.url = client.url(path)

    def finish(self) -> Response:
        try:
            self.connection.send(self.raw[-self.held_back :])
            reply = self.connection.getresponse()
            raw = reply.read()
            status, header_items = reply.status, reply.getheaders()
        finally:
            self.connection.close()
        body = json.loads(raw) if raw.strip() else None
        return Response(
            method="POST",
            url=self.url,
            status=status,
            headers=Headers(header_items),
            raw=raw,
            body=body,
            is_json=body is not None,
            elapsed=0.0,
        )

    def abandon(self) -> None:
        self.connection.close()
