"""Which chains a v1 caller may name (spec 3 "Authentication" item 3): `tx_live_` keys reach the
live chains, `tx_test_` keys the test and local ones; a test key on a testnet without a
settlement contract is refused with a sentence that says so.

Every v1 operation that takes a `chainId` calls `require_v1_chain` once, after its input
parsed and before anything else reads the chain; operations that default to "all chains of
the key's environment" call `v1_chains`."""

from __future__ import annotations

from simulator.errors import InvalidRequest
from simulator.services.access.callers import Caller
from simulator.services.shared.venue import ChainVenue, VenueDirectory


def require_v1_chain(venue: VenueDirectory, caller: Caller, chain_id: int) -> ChainVenue:
    """The deployed chain `chain_id`, if the caller's key may use it; else 400 `invalid_request`.

    Checked in this order, each a 400 with `details.reason` and `details.chainId`:

    1. `unknown_chain`: the venue knows no chain with this id.
    2. `environment_mismatch`: the chain belongs to the other environment than the key's
       (a test key on chain 56, a live key on chain 97 or on a testnet without contracts).
    3. `no_settlement_contract`: a testnet the venue knows (settings
       `chains_without_contracts`) but has no settlement contract on; message
       "No settlement contract deployed on chain N".

    A caller without a key (not possible on v1, whose chain-taking operations all need one)
    passes the environment check, as on v2."""
    deployed = venue.chain(chain_id)
    if deployed is not None:
        caller.require_chain_environment(chain_id, deployed.environment)
        return deployed
    known = venue.without_contracts.get(chain_id)
    if known is None:
        raise InvalidRequest(
            f"Chain {chain_id} is not served",
            details={"reason": "unknown_chain", "chainId": chain_id},
        )
    caller.require_chain_environment(chain_id, known.environment)
    raise InvalidRequest(
        f"No settlement contract deployed on chain {chain_id}",
        details={"reason": "no_settlement_contract", "chainId": chain_id},
    )


def v1_chains(venue: VenueDirectory, caller: Caller) -> list[ChainVenue]:
    """The deployed chains of the caller's environment, by chain id (every deployed chain for a
    caller without a key). Chains without contracts are not listed: nothing trades there."""
    environment = caller.key.environment if caller.key is not None else None
    return [
        chain
        for _, chain in sorted(venue.chains.items())
        if environment is None or chain.environment == environment
    ]
