"""API keys for a test: made on the spot through ``/_sim/keys`` on a simulator (revoked when the
test ends), else chosen among the keys the QA team gave (:class:`KeySource`).

A request names an environment and scopes. A given key matches when it is of that environment
and holds every scope; with ``exact=True`` (a test about a missing scope) it must also lack the
other taker scopes. ``same_partner_as=X`` asks for another key of key X's partner,
``other_partner_than=X`` for a key of a different partner: on a simulator they are made so, among
given keys they are told apart by their ``partner`` labels (conformance.wire.inputs). What only the
control API can make (a key of a named partner, of another rate tier, a key to suspend or
revoke) skips the test, naming the input. A maker credential
(:meth:`KeySource.maker`) is made through ``/_sim/keys`` for a fresh wallet, else is the one the
QA team gave (``--maker-key``).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from eth_account import Account

from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
from conformance.wire.inputs import GivenKey
from conformance.wire.needs import skip_message

TAKER_SCOPE_SET = frozenset({"trades:write", "trades:read", "webhooks:manage", "rfq:aggregator"})
_ONLY_WITH_CONTROL = ("partner", "tier", "maker_wallet")


class KeySource:
    """``make(environment, scopes, exact=False, **extra)`` -> a key record with ``key`` and
    ``partner`` (the partner's name; among given keys its label, None when unlabelled)."""

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
        same_partner_as: Mapping[str, Any] | None = None,
        other_partner_than: Mapping[str, Any] | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        wanted = frozenset(scopes)
        if self.target.controllable:
            partner = self.partner
            if same_partner_as is not None:
                partner = str(same_partner_as["partner"])
            elif other_partner_than is not None:
                partner = f"{self.partner}-other-{secrets.token_hex(3)}"
            record: dict[str, Any] = self.target.sim().create_key(
                extra.pop("partner", partner), environment, sorted(wanted), **extra
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
            if not _partner_fits(key, same_partner_as, other_partner_than):
                continue
            return {
                "key": key.key,
                "scopes": sorted(key.scopes),
                "environment": environment,
                "partner": key.partner,
            }
        need = (
            "key:live"
            if environment == "live"
            else "key:aggregator"
            if "rfq:aggregator" in wanted
            else "key:trades"
        )
        scopes_text = ",".join(sorted(wanted)) + (" (and no other taker scope)" if exact else "")
        if same_partner_as is None and other_partner_than is None:
            detail = f"--api-key KEY={scopes_text} (a tx_{environment}_ key)"
        else:
            detail = _partner_input(environment, scopes_text, same_partner_as, other_partner_than)
        pytest.skip(skip_message(need, detail))

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


def _partner_fits(
    key: GivenKey, same: Mapping[str, Any] | None, other: Mapping[str, Any] | None
) -> bool:
    """Whether a given key is of ``same``'s partner (and not ``same`` itself), or of a partner
    other than ``other``'s: known only from the keys' partner labels."""
    if same is not None:
        label = same.get("partner")
        return label is not None and key.partner == label and key.key != same["key"]
    if other is not None:
        label = other.get("partner")
        return label is not None and key.partner is not None and key.partner != label
    return True


def _partner_input(
    environment: str,
    scopes: str,
    same: Mapping[str, Any] | None,
    other: Mapping[str, Any] | None,
) -> str:
    """The input that would give the key: partner labels are given in the config file only."""
    known = same if same is not None else other
    assert known is not None
    public, label = str(known["key"]).split(".", 1)[0] + "…", known.get("partner")
    entry = f"--config api_keys: [{{key: KEY, scopes: [...], partner: NAME}}] with {scopes}"
    if same is not None:
        whose = f"another tx_{environment}_ key of the partner of {public}"
        label_it = f"NAME {label}" if label else f"NAME also on {public}"
    else:
        whose = f"a tx_{environment}_ key of a partner other than that of {public}"
        label_it = f"NAME not {label}" if label else f"{public} labelled with another NAME"
    return f"{whose}: {entry}, {label_it}"
