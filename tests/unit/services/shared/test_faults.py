"""The /_sim/faults next-N 500 switch is for clients: the fleet's own calls never take it."""

from __future__ import annotations

from simulator.services.shared.faults import Faults


def test_each_client_request_takes_one_injected_fault_until_none_is_left() -> None:
    faults = Faults()
    faults.update(internal_errors=2)
    assert [faults.take_internal_error("client-key") for _ in range(3)] == [True, True, False]


def test_a_request_with_the_fleets_own_key_leaves_the_faults_to_the_clients() -> None:
    faults = Faults(own_keys={"fleet-key"})
    faults.update(internal_errors=1)
    assert faults.take_internal_error("fleet-key") is False
    assert faults.take_internal_error() is True
    assert faults.internal_errors == 0


def test_clearing_the_switches_keeps_the_fleets_keys() -> None:
    faults = Faults(own_keys={"fleet-key"})
    faults.update(internal_errors=5, venue_paused=True)
    faults.clear()
    assert (faults.internal_errors, faults.venue_paused, faults.own_keys) == (
        0,
        False,
        {"fleet-key"},
    )
