"""Per-route policy lives on the route table only (api/http/routes.py `Operation`): which
operations the journal leaves out, which run outside the state gate, which are API traffic;
and what a request no operation matches takes (the declaration at its path, else its
document's defaults)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from aiohttp import web

from simulator.api.http.middleware import render_error
from simulator.api.http.routes import Operation, RouteTable
from simulator.api.ramp.schemas import KycState
from simulator.errors import KycRequired
from simulator.runtime.app import build_routes
from simulator.services.ramp.customers import KycView
from tests.unit.services.fake_provider import default_capabilities

UNJOURNALED = {"simListRequests", "simClearRequests", "simListMakerMessages", "simStream"}
UNJOURNALED |= {"simConsole", "simConsoleAsset"}
# one instance of a venue to another: not a client's request
UNJOURNALED |= {"simVenueEvents", "simVenueConfiguration", "simVenueJournal"}
UNJOURNALED |= {"simVenueJournalFlush", "simVenueChanges"}
UNGATED = {"simListRequests", "simClearRequests", "simListMakerMessages", "makerStream"}
UNGATED |= {"simReset", "simCreateSnapshot", "simListSnapshots", "simRestoreSnapshot"}
UNGATED |= {"simDeleteSnapshot"}
UNGATED |= {"simVenueConfiguration"}  # asked by an instance that may hold this one's gate
UNGATED |= {"simVenueJournal", "simVenueJournalFlush"}  # the journal's, as its reads


def test_the_journal_and_the_state_gate_leave_out_exactly_the_declared_operations() -> None:
    operations = build_routes().operations
    assert {op.operation_id for op in operations if not op.journaled} == UNJOURNALED
    assert {op.operation_id for op in operations if not op.gated} == UNGATED


def test_what_its_records_owner_serves_names_the_record_in_its_path() -> None:
    """Of several instances, an operation placed at the owner of a record finds it by a path
    parameter; one repeated at every instance is a control."""
    operations = build_routes().operations
    owned = {op.operation_id for op in operations if op.placement == "owner"}
    assert owned == {
        "rfqGet", "rfqCancel", "rfqSubmit", "simGetRfq", "simExpireRfq", "simGiveUpRfq",
        "simReleaseRfq",
    }  # fmt: skip
    for op in operations:
        if op.placement == "owner":
            assert op.record_param is not None, op.operation_id
            assert f"{{{op.record_param}}}" in op.path, op.operation_id
        if op.placement == "every":
            assert op.path.startswith("/_sim/"), op.operation_id
            assert op.method != "GET", op.operation_id


def test_a_venue_without_the_control_api_still_hands_events_between_instances() -> None:
    """--no-control-api takes /_sim away, not what one instance of a venue sends another."""
    kept = {op.operation_id for op in build_routes(control_api=False).operations}
    assert {"simVenueEvents", "simVenueConfiguration", "simVenueJournal"} <= kept
    assert "simVenueJournalFlush" in kept
    assert not any(op.startswith("simList") for op in kept)


def test_the_control_api_and_the_providers_webhooks_are_not_api_traffic() -> None:
    """Neither is the control API's index page at the root, nor what one instance of a venue
    hands another."""
    for op in build_routes().operations:
        outside = op.path.startswith(("/_sim", "/_provider", "/_venue")) or op.path == "/"
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


def test_an_error_member_that_holds_a_service_object_needs_its_wire_model() -> None:
    async def handler(request: web.Request) -> web.Response:
        raise AssertionError("never called")

    declared: dict[str, Any] = {
        "method": "POST",
        "path": "/v2/ramp/elsewhere",
        "handler": handler,
        "operation_id": "elsewhere",
        "summary": "",
        "document": "v2",
        "errors": (KycRequired,),
    }
    with pytest.raises(ValueError, match="kyc_required carries `kyc`"):
        RouteTable().add(Operation(**declared))
    RouteTable().add(Operation(**declared, error_members={"kyc": KycState}))


def test_error_kyc_is_written_by_the_model_of_the_kyc_reads() -> None:
    view = KycView.without_profile(default_capabilities())
    create = build_routes().by_name()["rampCreateTransfer"]
    response = render_error(KycRequired(view), "req_1", create)
    error = json.loads(cast(bytes, response.body))["error"]
    assert error["code"] == "kyc_required"
    assert error["kyc"] == KycState.model_validate(view).model_dump(mode="json", by_alias=True)
    assert error["kyc"]["maxBuy"] == {"amount": "5000000", "currency": "NGN"}
    assert error["kyc"]["providerStatus"] == "no_profile"
