"""The simulator's clock (/_sim/clock): one time for the service and every chain."""

from __future__ import annotations

import pytest

from conformance.deployment.sim_control import SimControl
from conformance.deployment.target import Target
from conformance.wire.client import Client
from conformance.wire.response_checks import parse_iso_utc
from rfqkit.json_rpc import hex_to_int, rpc

pytestmark = pytest.mark.sim_only(because="simulator")

ADVANCE_SECONDS = 3600
TOLERANCE_SECONDS = 5.0


def _offset(data: dict[str, object]) -> float:
    offset = data.get("offset_seconds")
    assert isinstance(offset, int | float), f"offset_seconds is not a number: {offset!r}"
    assert not isinstance(offset, bool), "offset_seconds is a boolean"
    return float(offset)


def test_clock_shape(sim: SimControl) -> None:
    data = sim.clock()
    parse_iso_utc(data.get("now"))
    _offset(data)


def test_clock_answers_with_request_id_and_data(http: Client) -> None:
    resp = http.get("/_sim/clock")
    assert resp.status == 200, resp
    assert resp.request_id, "no X-Request-Id on /_sim/clock"
    body = resp.json()
    assert isinstance(body, dict), body
    assert set(body) == {"data"}, f"expected only 'data' at the top level: {body!r}"


def test_advance_moves_service_time_and_chain_time(sim: SimControl, target: Target) -> None:
    before = sim.clock()
    before_now = parse_iso_utc(before.get("now"))

    advanced = sim.advance(ADVANCE_SECONDS)
    new_now = parse_iso_utc(advanced.get("now"))
    moved = (new_now - before_now).total_seconds()
    assert abs(moved - ADVANCE_SECONDS) <= TOLERANCE_SECONDS, (
        f"clock moved {moved:.1f} s for an advance of {ADVANCE_SECONDS} s"
    )

    after = sim.clock()
    offset_moved = _offset(after) - _offset(before)
    assert abs(offset_moved - ADVANCE_SECONDS) <= TOLERANCE_SECONDS, (
        f"offset_seconds moved {offset_moved:.1f} s for an advance of {ADVANCE_SECONDS} s"
    )

    assert target.rpc_urls, "the simulator reports no chains"
    for chain_id, url in sorted(target.rpc_urls.items()):
        block = rpc(url, "eth_getBlockByNumber", ["latest", False])
        assert isinstance(block, dict), f"chain {chain_id}: no latest block: {block!r}"
        block_time = hex_to_int(block.get("timestamp"))
        assert block_time >= new_now.timestamp() - TOLERANCE_SECONDS, (
            f"chain {chain_id}: latest block time {block_time} is behind the service clock "
            f"{new_now.isoformat()} ({new_now.timestamp():.0f}) after the advance"
        )
