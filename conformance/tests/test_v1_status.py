"""GET /v1/health and GET /v1/status (spec 3 "Endpoints"): public; /v1/status is 200
operational or degraded and 503 down when a critical dependency is unavailable, with the state
of each dependency in the body (our shape: ``{data: {status, checkedAt, checks: {<name>:
{status, critical, chainId, reason, blockNumber}}}}``). The faults come from ``/_sim/faults``:
an unreachable chain is critical, a paused fill index is not (docs/decisions.md V5)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.calls.control import faults
from conformance.calls.v1_calls import own_address_client
from conformance.deployment.sim_control import (
    SimControl,
)
from conformance.deployment.target import Target
from conformance.wire.chain import wait_for
from conformance.wire.client import (
    Client,
    Response,
)
from conformance.wire.response_checks import (
    assert_data,
    assert_json_content_type,
    assert_no_rate_limit_headers,
    parse_iso_utc,
)

STATUS = ("v1/endpoints/get-v1-status", "v1/auth/item-1")
CHECK_FIELDS = {"status", "critical", "chainId", "reason", "blockNumber"}
BAD_KEY = {"Authorization": "Bearer tx_test_0123456789ab." + "A" * 43}


@pytest.fixture
def caller(target: Target, http: Client) -> Client:
    return own_address_client(target, http)


def _status(caller: Client, **kwargs: Any) -> tuple[Response, dict[str, Any]]:
    resp = caller.get("/v1/status", **kwargs)
    assert resp.status in (200, 503), resp
    data = assert_data(resp, resp.status)
    assert_json_content_type(resp)
    assert isinstance(data, dict), data
    assert set(data) == {"status", "checkedAt", "checks"}, data
    parse_iso_utc(data["checkedAt"])
    expected = 503 if data["status"] == "down" else 200
    assert data["status"] in ("operational", "degraded", "down"), data
    assert resp.status == expected, f"{data['status']} answered {resp.status}"
    checks = data["checks"]
    assert isinstance(checks, dict), data
    assert checks, "no dependency is checked"
    for name, check in checks.items():
        assert set(check) == CHECK_FIELDS, (name, check)
        assert check["status"] in ("up", "down"), (name, check)
        assert isinstance(check["critical"], bool), (name, check)
        assert (check["reason"] is None) == (check["status"] == "up"), (name, check)
    down = [c for c in checks.values() if c["status"] == "down"]
    wanted = "down" if any(c["critical"] for c in down) else "degraded" if down else "operational"
    assert data["status"] == wanted, data
    return resp, data


@pytest.mark.spec("v1/endpoints/get-v1-health", "v1/auth/item-1")
def test_v1_health_is_public(caller: Client) -> None:
    for headers in ({}, BAD_KEY):
        resp = caller.get("/v1/health", headers=headers)
        data = assert_data(resp)
        assert data["status"] == "ok", data
        parse_iso_utc(data["time"])
        assert_no_rate_limit_headers(resp)  # outside the per-key limiter


@pytest.mark.spec(*STATUS)
def test_status_is_public_and_consistent(caller: Client) -> None:
    for headers in ({}, BAD_KEY):
        resp, _ = _status(caller, headers=headers)
        assert_no_rate_limit_headers(resp)


def _operational(caller: Client) -> dict[str, Any] | None:
    resp, data = _status(caller)
    return data if resp.status == 200 and data["status"] == "operational" else None


@pytest.mark.sim_only
@pytest.mark.spec(*STATUS)
def test_a_healthy_simulator_is_operational_with_every_chain_checked(
    target: Target, caller: Client
) -> None:
    data = wait_for(lambda: _operational(caller), what="/v1/status operational")
    chain_ids = sorted(int(c["chain_id"]) for c in target.chains())
    names = sorted(data["checks"])
    assert names == sorted(
        [f"chain:{c}" for c in chain_ids] + [f"fillIndex:{c}" for c in chain_ids]
    ), names
    for chain_id in chain_ids:
        chain = data["checks"][f"chain:{chain_id}"]
        index = data["checks"][f"fillIndex:{chain_id}"]
        assert (chain["critical"], index["critical"]) == (True, False)
        assert (chain["chainId"], index["chainId"]) == (chain_id, chain_id)
        assert isinstance(chain["blockNumber"], int), chain
        assert chain["blockNumber"] >= 0, chain


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(*STATUS)
def test_an_unreachable_chain_is_down_503(sim: SimControl, caller: Client) -> None:
    wait_for(lambda: _operational(caller), what="/v1/status operational")
    with faults(sim, chain_unreachable=[97]):
        resp, data = _status(caller)
        assert (resp.status, data["status"]) == (503, "down")
        chain = data["checks"]["chain:97"]
        assert chain == {
            "status": "down",
            "critical": True,
            "chainId": 97,
            "reason": "unreachable",
            "blockNumber": None,
        }
        assert data["checks"]["chain:56"]["status"] == "up"
    # Back once the switch is off (the index catches up within its next polls).
    wait_for(lambda: _operational(caller), what="/v1/status operational again")


@pytest.mark.sim_only(because="faults")
@pytest.mark.spec(*STATUS)
def test_a_paused_fill_index_is_degraded_200(sim: SimControl, caller: Client) -> None:
    wait_for(lambda: _operational(caller), what="/v1/status operational")
    with faults(sim, indexer_paused=[56]):
        resp, data = _status(caller)
        assert (resp.status, data["status"]) == (200, "degraded")
        index = data["checks"]["fillIndex:56"]
        assert (index["status"], index["critical"], index["reason"]) == ("down", False, "paused")
        down = sorted(name for name, c in data["checks"].items() if c["status"] == "down")
        assert down == ["fillIndex:56"], data
    wait_for(lambda: _operational(caller), what="/v1/status operational again")
