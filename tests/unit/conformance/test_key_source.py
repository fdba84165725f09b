"""Choosing among the QA team's keys without the control API (conformance.deployment.key_source):
scopes, exact scopes and partner labels; a key that no given one fits skips naming the input."""

from __future__ import annotations

import pytest

from conformance.deployment.key_source import KeySource
from conformance.deployment.target import Target
from conformance.wire.inputs import GivenKey, Inputs
from conformance.wire.needs import MISSING_INPUT, needs_in, skip_kind

TRADES = frozenset({"trades:write", "trades:read"})
EVERY = TRADES | {"webhooks:manage", "quotes:read"}


def source(*keys: GivenKey) -> KeySource:
    # Every scope declared: nothing is probed, no request leaves.
    target = Target("http://127.0.0.1:9", is_simulator=False, info=None, inputs=Inputs(keys=keys))
    return KeySource(target, "unit")


def skip_reason(make: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(pytest.skip.Exception) as skipped:
        make(*args, **kwargs)  # type: ignore[operator]
    return str(skipped.value.msg)


def test_exact_scopes_and_partners_are_chosen_by_label() -> None:
    keys = source(
        GivenKey("tx_test_a1.s", EVERY, "acme"),
        GivenKey("tx_test_a2.s", frozenset({"trades:write"}), "acme"),
        GivenKey("tx_test_g1.s", frozenset({"trades:read"}), "globex"),
        GivenKey("tx_test_a3.s", frozenset({"trades:read"}), "acme"),
    )
    writer = keys.make("test", ["trades:write"], exact=True)
    assert (writer["key"], writer["partner"]) == ("tx_test_a2.s", "acme")
    # Another key of the same partner: not the key itself, not a key of another partner.
    colleague = keys.make("test", ["trades:read"], same_partner_as=writer)
    assert colleague["key"] == "tx_test_a1.s"
    colleague = keys.make("test", ["trades:read"], exact=True, same_partner_as=writer)
    assert colleague["key"] == "tx_test_a3.s"
    outsider = keys.make("test", ["trades:read"], other_partner_than=writer)
    assert (outsider["key"], outsider["partner"]) == ("tx_test_g1.s", "globex")
    # The key itself is no colleague of its own.
    reason = skip_reason(keys.make, "test", ["trades:write"], exact=True, same_partner_as=writer)
    assert "another tx_test_ key of the partner of tx_test_a2…" in reason, reason
    assert "partner: NAME}] with trades:write (and no other taker scope), NAME acme" in reason


def test_without_labels_a_partner_question_skips_as_a_missing_input() -> None:
    keys = source(GivenKey("tx_test_u1.s", TRADES), GivenKey("tx_test_u2.s", TRADES))
    creator = keys.make("test", sorted(TRADES))
    assert creator["partner"] is None
    for wanted in ({"same_partner_as": creator}, {"other_partner_than": creator}):
        reason = skip_reason(keys.make, "test", ["trades:read"], **wanted)
        assert needs_in([reason]) == ["key:trades"], reason
        assert skip_kind(reason, None) == MISSING_INPUT
        assert "--config api_keys: [{key: KEY, scopes: [...], partner: NAME}]" in reason, reason
        assert "tx_test_u1…" in reason, reason
        assert "tx_test_u1.s" not in reason, reason  # the public prefix, never the secret
    reason = skip_reason(keys.make, "test", ["trades:write"], exact=True)
    assert "--api-key KEY=trades:write (and no other taker scope)" in reason, reason
    # An aggregator key nobody gave is asked for as one.
    reason = skip_reason(keys.make, "test", ["rfq:aggregator", "trades:write"])
    assert needs_in([reason]) == ["key:aggregator"], reason
