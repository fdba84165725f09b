"""A simulator started with ``--environment production`` refuses the ramp's sandbox flag on
transfers (400 before anything else is looked at) and still books live transfers."""

from __future__ import annotations

import pytest

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers
from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client
from conformance.wire.response_checks import assert_error


@pytest.mark.sim_only(because="deployment")
@pytest.mark.spec(
    "ramp/overview/item-7",
    "ramp/errors/400-invalid_request",
    "ramp/resources/transfer/sandbox",
)
def test_production_refuses_the_sandbox_flag_on_transfers(production: Client) -> None:
    ramp = Ramp(production, SimControl(production))
    transfers = Transfers(ramp)
    wallet = fresh_wallet()
    ramp.registered(wallet)
    flagged = transfers.body(wallet, "sell", sandbox=True)
    assert_error(transfers.post(flagged), 400, "invalid_request", "sandbox_not_allowed")
    unsigned = {k: v for k, v in flagged.items() if k != "proof"}  # the flag is checked first
    assert_error(transfers.post(unsigned), 400, "invalid_request", "sandbox_not_allowed")
    assert transfers.listed(wallet)["transfers"] == []
    created = transfers.create(transfers.body(wallet, "sell"))
    assert created.transfer["sandbox"] is False
    check = ramp.post(
        f"transfers/{created.id}/retry-payout/check", transfers.retry_body(wallet, sandbox=True)
    )
    assert_error(check, 400, "invalid_request", "sandbox_not_allowed")
