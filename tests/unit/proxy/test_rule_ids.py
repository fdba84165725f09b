"""Every rule id the proxy names is a rule of the spec as the conformance suite parses it (the
ids of conformance-report/matrix.md), so a finding always points at a line of the spec."""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

from conformance.rules import rules_by_id
from rfqsim.proxy import conventions, proofs, requests, resources, spec, state

RULE_ID = re.compile(r"^(rfq|ramp|v1)/[a-z0-9_/.-]+$")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, (tuple, list, frozenset, set)):
        return [s for item in value for s in _strings(item)]
    return []


def _rule_ids(module: ModuleType) -> set[str]:
    found: set[str] = set()
    for name, value in vars(module).items():
        if name.isupper():
            found |= {s for s in _strings(value) if RULE_ID.match(s)}
    return found


def test_every_rule_id_the_proxy_names_is_a_rule_of_the_spec() -> None:
    known = rules_by_id()
    named = set().union(
        *(_rule_ids(m) for m in (conventions, proofs, requests, resources, state)),
        {operation.rule for operation in spec.OPERATIONS},
    )
    assert len(named) > 100
    assert sorted(named - set(known)) == []


def test_the_error_tables_come_from_the_spec() -> None:
    assert spec.error_table("rfq")[404] == {"not_found": "rfq/errors/404-not_found"}
    assert set(spec.error_table("ramp")[409]) == {"ramp_customer_required", "quote_drift"}
    assert 502 not in spec.error_table("v1")
