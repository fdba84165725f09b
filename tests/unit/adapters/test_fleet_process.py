"""The fleet in its own process (adapters/rfq/fleet_process.py) over a real `python -m
makers.child` with no fleet started (no network): requests and replies over its pipes, the
refusals mapped as /_sim/makers answers them, and a child that dies, hangs or is closed."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator

import pytest

from makers.config import default_fleet
from makers.control import (
    FAILED,
    INVALID_CONFIG,
    INVALID_VALUE,
    NOT_FOUND,
    UNREACHABLE,
    ControlError,
    fleet_from_start,
    start_request,
)
from makers.fleet import MakerFleet
from simulator.adapters.rfq.fleet import fleet_error
from simulator.adapters.rfq.fleet_process import FleetProcess, ProcessFleetControl
from simulator.errors import (
    FleetProcessUnreachable,
    InvalidRequest,
    NotFound,
    ServiceError,
    UpstreamError,
)
from simulator.randomness import RandomSource


@pytest.fixture
async def process() -> AsyncIterator[FleetProcess]:
    child = await FleetProcess.spawn()
    yield child
    await child.close(timeout_s=2.0)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_child_without_a_fleet_answers_over_its_pipes(process: FleetProcess) -> None:
    control = ProcessFleetControl(lambda: process)
    assert await control.members() == []
    with pytest.raises(NotFound) as raised:
        await control.reconfigure("alpha", {"behaviour": "silent"})
    assert raised.value.message == "No simulated maker named alpha"
    with pytest.raises(ControlError) as refused:
        await process.call("start", {"url": "http://127.0.0.1:9"})  # no config: refused
    assert refused.value.kind == FAILED
    assert process.alive  # a refused request does not end the channel


async def test_no_fleet_running_means_no_members_and_no_maker() -> None:
    control = ProcessFleetControl(lambda: None)
    assert await control.members() == []
    with pytest.raises(NotFound):
        await control.reconfigure("alpha", {})


@pytest.mark.parametrize(
    ("refusal", "error", "details"),
    [
        (ControlError(NOT_FOUND, "x"), NotFound, None),
        (
            ControlError(INVALID_CONFIG, "x", [{"field": "latency.hi_ms"}]),
            InvalidRequest,
            {"reason": "invalid_maker_config", "issues": [{"field": "latency.hi_ms"}]},
        ),
        (ControlError(INVALID_VALUE, "x"), InvalidRequest, {"reason": "invalid_maker_config"}),
        (ControlError(UNREACHABLE, "refused"), UpstreamError, {"reason": "maker_unreachable"}),
        (ControlError(FAILED, "gone"), UpstreamError, {"reason": "maker_unreachable"}),
    ],
)
def test_refusals_map_to_the_errors_of_the_in_process_fleet(
    refusal: ControlError, error: type[ServiceError], details: dict[str, object] | None
) -> None:
    mapped = fleet_error("alpha", refusal)
    assert type(mapped) is error
    assert mapped.details == details


async def test_a_child_that_dies_is_logged_and_its_calls_fail_at_once(
    process: FleetProcess, caplog: pytest.LogCaptureFixture
) -> None:
    control = ProcessFleetControl(lambda: process)
    with caplog.at_level(logging.ERROR, logger="rfqsim.fleet"):
        os.kill(process.pid, signal.SIGKILL)
        with pytest.raises(FleetProcessUnreachable):
            await process.call("members")  # fails on the closed pipe or its end of output
        with pytest.raises(FleetProcessUnreachable):
            await process.call("members")  # and once known dead, without writing at all
        assert await control.members() == []
        with pytest.raises(UpstreamError) as raised:
            await control.reconfigure("alpha", {"online": True})
        await process.chain_restarted(97)  # logged, not raised: the other listeners run
    assert raised.value.details == {"reason": "maker_unreachable"}
    assert not process.alive
    assert process.exit_code == -signal.SIGKILL
    messages = [r.getMessage() for r in caplog.records]
    assert any(f"process {process.pid} exited with status -9" in m for m in messages), messages
    assert any("could not tell the maker fleet that chain 97 restarted" in m for m in messages)


async def test_members_right_after_the_child_died_are_none_not_an_error(
    process: FleetProcess,
) -> None:
    os.kill(process.pid, signal.SIGKILL)
    assert await ProcessFleetControl(lambda: process).members() == []
    assert not process.alive


async def test_a_child_that_does_not_answer_times_out_and_is_killed_on_close(
    process: FleetProcess,
) -> None:
    os.kill(process.pid, signal.SIGSTOP)
    with pytest.raises(FleetProcessUnreachable, match="did not answer members"):
        await process.call("members", timeout_s=0.2)
    await process.close(timeout_s=0.2)  # stop unanswered, stdin closed, no exit: killed
    assert process.exit_code == -signal.SIGKILL
    assert gone(process.pid)


async def test_close_ends_the_child_and_later_calls_fail(process: FleetProcess) -> None:
    await process.close()
    assert process.exit_code == 0
    assert gone(process.pid)
    await process.close()  # idempotent
    with pytest.raises(FleetProcessUnreachable):
        await process.call("members")


async def test_the_child_draws_what_the_in_process_fleet_would() -> None:
    """The simulator hands over RandomSource.fork(label).seed; the child's makers then get the
    streams an in-process fleet built with that fork gets (their Permit2 nonces among them)."""
    config = default_fleet()
    credentials = {m.name: [f"tx_test_{m.name}.s"] for m in config.makers}
    in_process = MakerFleet(
        config,
        url="http://127.0.0.1:9",
        credentials=credentials,
        rpc_urls={},
        rng=RandomSource(7).fork("makers#2"),
    )
    child = fleet_from_start(
        start_request(
            config,
            url="http://127.0.0.1:9",
            credentials=credentials,
            rpc_urls={},
            rng_seed=RandomSource(7).fork("makers#2").seed,
            v1_keys=None,
        )
    )
    other = fleet_from_start(
        start_request(
            config,
            url="http://127.0.0.1:9",
            credentials=credentials,
            rpc_urls={},
            rng_seed=RandomSource(7).fork("makers").seed,
            v1_keys=None,
        )
    )
    try:
        for maker in config.makers:
            draws = [in_process._makers_rng[maker.name].getrandbits(64) for _ in range(3)]
            assert [child._makers_rng[maker.name].getrandbits(64) for _ in range(3)] == draws
            assert [other._makers_rng[maker.name].getrandbits(64) for _ in range(3)] != draws
    finally:
        for fleet in (in_process, child, other):
            await fleet.close()
