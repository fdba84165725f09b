"""API keys for a test: made on the spot through ``/_sim/keys`` on a simulator (revoked when the
test ends), else chosen among the keys the QA team gave (:class:`KeySource`).

A request names an environment and scopes. A given key matches when it is of that environment
and holds every scope; with ``exact=True`` (a test about a missing scope) it must also lack the
other taker scopes. What only the control API can make (a key of a second partner, of another
rate tier, a key to suspend or revoke) skips the test, naming the input. A maker credential
(:meth:`KeySource.maker`) is made through ``/_sim/keys`` for a fresh wallet, else is the one the
QA team gave (``--maker-key``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

import pytest
from eth_account import Account

from conformance.needs import skip_message
from conformance.target import Target
from conformance.target_inputs import resolved_inputs

TAKER_SCOPE_SET = frozenset({"trades:write", "trades:read", "webhooks:manage", "rfq:aggregator"})
_ONLY_WITH_CONTROL = ("partner", "tier", "maker_wallet")


class KeySource:
    """``make(environment, scopes, exact=False, **extra)`` -> a key record with ``key``."""

    def __init__(self, target: Target, label: str) -> None:
        self.target = target
        self.partner = f"conformance-{label}-{secrets.token_hex(6)}"
        self.issued: list[str] = []  # key ids made through /_sim, revoked by close()

    def make(
        self,
        environment: str = "test",
        scopes: Iterable[str] = ("trades:write", "trades:read"),
        *,
        exact: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        wanted = frozenset(scopes)
        if self.target.controllable:
            extra.setdefault("partner", self.partner)
            record: dict[str, Any] = self.target.sim().create_key(
                extra.pop("partner"), environment, sorted(wanted), **extra
            )
            self.issued.append(str(record["key_id"]))
            return record
        for name in _ONLY_WITH_CONTROL:
            if name in extra:
                pytest.skip(
                    skip_message(
                        "sim_control", f"a key with its own {name} is made through /_sim/keys"
                    )
                )
        for key in resolved_inputs(self.target).shared_keys:
            if key.environment != environment or key.scopes is None:
                continue
            if not wanted <= key.scopes:
                continue
            if exact and (key.scopes & TAKER_SCOPE_SET) - wanted:
                continue
            return {"key": key.key, "scopes": sorted(key.scopes), "environment": environment}
        need = "key:live" if environment == "live" else "key:trades"
        scopes_text = ",".join(sorted(wanted)) + (" (and no other taker scope)" if exact else "")
        pytest.skip(skip_message(need, f"--api-key KEY={scopes_text} (a tx_{environment}_ key)"))

    def maker(self, environment: str = "test") -> dict[str, Any]:
        """A maker credential (only the scope ``maker:stream``) of ``environment``: made for a
        fresh funding wallet of its own on a simulator, else the given one (``--maker-key``)."""
        if self.target.controllable:
            record: dict[str, Any] = self.target.sim().create_key(
                self.partner, environment, ["maker:stream"], maker_wallet=Account.create().address
            )
            self.issued.append(str(record["key_id"]))
            return record
        given = self.target.inputs.maker_key(environment)
        if given is None:
            pytest.skip(skip_message("key:maker"))
        return {"key": given.key, "environment": environment}

    def close(self) -> None:
        for key_id in self.issued:
            self.target.sim().call("POST", f"keys/{key_id}/revoke")
        self.issued.clear()
