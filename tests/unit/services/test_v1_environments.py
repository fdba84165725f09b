"""Which chains a v1 key may name (services/access/environments.py) and the corridor list
built on it (services/v1/corridors.py)."""

from __future__ import annotations

import pytest

from simulator.errors import InvalidRequest
from simulator.services.access.environments import require_v1_chain, v1_chains
from simulator.services.v1.corridors import list_corridors
from tests.unit.services.v1_fakes import caller, venue


def _refusal(environment: str | None, chain_id: int) -> tuple[str, dict[str, object] | None]:
    with pytest.raises(InvalidRequest) as raised:
        require_v1_chain(venue(), caller(environment), chain_id)  # type: ignore[arg-type]
    assert raised.value.status == 400
    return raised.value.message, raised.value.details


def test_a_key_reaches_the_deployed_chain_of_its_environment() -> None:
    directory = venue()
    assert require_v1_chain(directory, caller("test"), 97) is directory.chains[97]
    assert require_v1_chain(directory, caller("live"), 56) is directory.chains[56]


@pytest.mark.parametrize(("environment", "chain_id"), [("test", 56), ("live", 97)])
def test_the_other_environments_chain_is_400(environment: str, chain_id: int) -> None:
    _, details = _refusal(environment, chain_id)
    assert details == {"reason": "environment_mismatch", "chainId": chain_id}


def test_a_testnet_without_contracts_is_400_saying_so() -> None:
    message, details = _refusal("test", 11155111)
    assert message == "No settlement contract deployed on chain 11155111"
    assert details == {"reason": "no_settlement_contract", "chainId": 11155111}


def test_a_live_key_on_the_testnet_without_contracts_hears_about_its_environment_first() -> None:
    _, details = _refusal("live", 11155111)
    assert details == {"reason": "environment_mismatch", "chainId": 11155111}


@pytest.mark.parametrize("environment", ["test", "live", None])
def test_an_unknown_chain_is_400(environment: str | None) -> None:
    message, details = _refusal(environment, 5)
    assert message == "Chain 5 is not served"
    assert details == {"reason": "unknown_chain", "chainId": 5}


def test_keyless_callers_pass_the_environment_check() -> None:
    directory = venue()
    assert require_v1_chain(directory, caller(None), 56) is directory.chains[56]
    assert [c.chain_id for c in v1_chains(directory, caller(None))] == [56, 97]


def test_v1_chains_are_the_keys_environment_deployed_only() -> None:
    assert [c.chain_id for c in v1_chains(venue(), caller("test"))] == [97]
    assert [c.chain_id for c in v1_chains(venue(), caller("live"))] == [56]


def test_corridors_of_the_environment_or_of_one_chain() -> None:
    directory = venue()
    listed = list_corridors(directory, caller("test"), None)
    assert [(c.chain_id, c.pair) for c in listed] == [
        (97, "USDT_NGNS"),
        (97, "USDC_NGNS"),
    ]
    assert list_corridors(directory, caller("test"), 97) == listed
    with pytest.raises(InvalidRequest):
        list_corridors(directory, caller("test"), 56)
    with pytest.raises(InvalidRequest):
        list_corridors(directory, caller("test"), 11155111)
