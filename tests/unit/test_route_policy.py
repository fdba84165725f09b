"""Per-route policy lives on the route table only (api/http/routes.py `Operation`): which
operations the journal leaves out, which run outside the state gate, which are API traffic;
and what a request no operation matches takes (the declaration at its path, else its
document's defaults)."""

from __future__ import annotations

from simulator.runtime.app import build_routes

UNJOURNALED = {"simListRequests", "simClearRequests", "simListMakerMessages", "simStream"}
UNJOURNALED |= {"simConsole", "simConsoleAsset"}
UNGATED = {"simListRequests", "simClearRequests", "simListMakerMessages", "makerStream"}
UNGATED |= {"simReset", "simCreateSnapshot", "simListSnapshots", "simRestoreSnapshot"}
UNGATED |= {"simDeleteSnapshot"}


def test_the_journal_and_the_state_gate_leave_out_exactly_the_declared_operations() -> None:
    operations = build_routes().operations
    assert {op.operation_id for op in operations if not op.journaled} == UNJOURNALED
    assert {op.operation_id for op in operations if not op.gated} == UNGATED


def test_the_control_api_and_the_providers_webhooks_are_not_api_traffic() -> None:
    """Neither is the control API's index page at the root."""
    for op in build_routes().operations:
        outside = op.path.startswith(("/_sim", "/_provider")) or op.path == "/"
        assert op.api_traffic is not outside, op.operation_id


def test_an_undeclared_path_takes_the_document_of_its_first_segment() -> None:
    table = build_routes()
    assert table.document_at("/_sim/nothing/here") == "sim"
    assert table.document_at("/_provider") == "sim"
    assert table.document_at("/v2/nothing") == "v2"
    assert table.document_at("/v1/nothing") == "v1"
    assert table.document_at("/nowhere") is None
    reset = table.declared_at("/_sim/reset")
    assert reset is not None
    assert (reset.operation_id, reset.gated) == ("simReset", False)
    assert table.declared_at("/v2/rfq/{rfq_id}") is None  # templated paths are not looked up
