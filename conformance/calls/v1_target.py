"""The v1 tests against a target they may not control: the integrator (:func:`integrator_for`),
the signature-transfer contract read from the service's own answers
(:func:`with_signature_transfer`), and what they may ask of a body's shape (:class:`Shapes`):
exactly rfqsim's answer on our simulator, what the spec allows on any other target.

The spec names the fields of each v1 body, writes addresses without fixing their case and calls
the reactor's fee a fee without giving its size. rfqsim answers exactly the named fields,
checksummed addresses and a 5 bps fee (docs/decisions.md, "v1 (closed API): the edge" and "v1
book"): the tests hold the simulator to that, and another target to the spec: the named fields
present (more allowed), an address equal whatever its case, the fee consistent with the amounts
it sits between rather than of a given size.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from conformance.calls.v1_book import (
    V1_SCOPES,
    Integrator,
    PlacedOrder,
    fee_of,
    funded_maker,
    place,
    prepare,
    prepare_body,
    v1_integrator,
    wait_order,
)
from conformance.deployment.funding import Balances
from conformance.deployment.service_clock import Clocked
from conformance.deployment.target import Target
from conformance.deployment.target_inputs import resolved_inputs
from conformance.deployment.venue import VenueChain
from conformance.wire.client import Client, Response
from conformance.wire.needs import skip_message
from conformance.wire.response_checks import assert_error, parse_iso_utc
from rfqkit.wallets import Wallet

RECORD_FIELDS = {
    "id",
    "chainId",
    "maker",
    "sellToken",
    "sellAmount",
    "buyToken",
    "buyAmount",
    "rateRay",
    "executionRateRay",
    "nonce",
    "deadline",
    "status",
    "statusVerified",
    "txHash",
    "filledAt",
    "createdAt",
}  # rfqsim's record (B23 adds maker)


class Shapes:
    def __init__(self, target: Target) -> None:
        self.exact = target.is_simulator

    def fields(self, data: Mapping[str, Any], named: Iterable[str]) -> None:
        wanted = set(named)
        if self.exact:
            assert set(data) == wanted, sorted(data)
        else:
            assert wanted <= set(data), f"missing {sorted(wanted - set(data))}"

    def address(self, got: Any, expected: str) -> None:
        if self.exact:
            assert got == expected, (got, expected)
        else:
            assert str(got).lower() == expected.lower(), (got, expected)

    def addresses(self, got: Iterable[Any], expected: Iterable[str]) -> None:
        got, expected = list(got), list(expected)
        if self.exact:
            assert got == expected, (got, expected)
        else:
            assert [str(a).lower() for a in got] == [a.lower() for a in expected], (got, expected)

    def error(self, resp: Response, status: int, code: str, reason: str) -> dict[str, Any]:
        """The spec's error envelope; ``details.reason`` (rfqsim's, docs/decisions.md) only on
        rfqsim."""
        return assert_error(resp, status, code, reason if self.exact else None)

    def fee(self, fee_amount: Any, on_amount: int) -> None:
        """The reactor fee charged on ``on_amount``: rfqsim's 5 bps, else a non-negative
        amount below it (its size is the venue's)."""
        if self.exact:
            assert fee_amount == str(fee_of(on_amount)), (fee_amount, on_amount)
        else:
            assert 0 <= int(fee_amount) < on_amount, (fee_amount, on_amount)


def integrator_for(target: Target, http: Client) -> Integrator:
    """The test's v1 integrator: on a simulator with its control API a fresh partner of its own
    (:func:`v1_integrator`); elsewhere the given test key with every v1 scope, shared by the
    tests, so its client paces itself (skips, naming ``key:v1``, without one)."""
    if target.controllable:
        return v1_integrator(target.sim(), http)
    given = resolved_inputs(target).key(V1_SCOPES, "test")
    if given is None:
        pytest.skip(skip_message("key:v1"))
    record = {"key": given.key, "scopes": sorted(given.scopes or ()), "environment": "test"}
    return Integrator(http.with_headers(given.headers).paced(), record)


_SIGNATURE_TRANSFER: dict[tuple[str, int], str] = {}


@pytest.fixture(name="chain")
def book_chain(chain: VenueChain, integrator: Integrator, clock: Clocked) -> VenueChain:
    """The test chain with the signature-transfer contract the makers approve: a v1 test module
    overrides ``chain`` with it by importing it."""
    return with_signature_transfer(chain, integrator.client, clock)


def with_signature_transfer(chain: VenueChain, client: Client, clock: Clocked) -> VenueChain:
    """``chain`` with ``contracts["signature_transfer"]``, the contract makers approve and sign
    for: the venue's info names it on a simulator; elsewhere it is the ``verifyingContract`` of a
    prepared order's typed data (spec 3, prepare response), read once per chain."""
    if "signature_transfer" in chain.contracts:
        return chain
    found = _SIGNATURE_TRANSFER.get((chain.rpc_url, chain.chain_id))
    if found is None:
        prepared = prepare(client, sample_order(chain, clock))
        found = str(prepared["typedData"]["domain"]["verifyingContract"])
        _SIGNATURE_TRANSFER[(chain.rpc_url, chain.chain_id)] = found
    return chain.with_contract("signature_transfer", found)


def sample_order(chain: VenueChain, clock: Clocked) -> dict[str, Any]:
    """A prepare body any key of the chain's environment may send: a fresh maker selling 1500
    NGNS for 1 USDC for ten minutes (preparing needs no funds)."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    return prepare_body(
        chain,
        Wallet.create(),
        ngns,
        ngns.units(1500),
        usdc,
        deadline=clock.now_ms() // 1000 + 600,
        buy_amount=usdc.units(1),
    )


FAST_FILL_WAIT_S = 20.0  # "typically fills within seconds"


def fast_filled(
    integrator: Integrator, clock: Clocked, chain: VenueChain, source: Wallet
) -> tuple[PlacedOrder, dict[str, Any]]:
    """A fresh maker's fastFill order selling 800 NGNS for USDC, filled by the filling operator
    within seconds: FILLED and verified, its transaction succeeded, and the maker paid exactly
    what the order asked for exactly its NGNS. The order and its FILLED record."""
    usdc, ngns = chain.token("USDC"), chain.token("NGNS")
    sell = ngns.units(800)
    maker = funded_maker(chain, source, {ngns: sell})
    before = Balances.read(chain.rpc(), [usdc.address, ngns.address], [maker.address])
    placed = place(integrator, clock, chain, maker, ngns, sell, usdc, pricing={"mode": "fastFill"})
    started = time.monotonic()
    paced = integrator.client.pacing is not None  # a 429's wait (up to 60 s) may come between
    timeout = FAST_FILL_WAIT_S + (70 if paced else 0)
    record = wait_order(integrator.client, placed.order_id, "FILLED", timeout=timeout)
    if paced:  # the service's own times: created, then filled within seconds
        took = parse_iso_utc(record["filledAt"]) - parse_iso_utc(record["createdAt"])
        assert took.total_seconds() < FAST_FILL_WAIT_S, record
    else:
        assert time.monotonic() - started < FAST_FILL_WAIT_S
    assert record["statusVerified"] is True
    receipt = chain.rpc().wait_receipt(str(record["txHash"]))
    assert int(receipt["status"], 16) == 1
    parse_iso_utc(record["filledAt"])
    # The proceeds went to the maker: exactly what the order named, nothing else moved.
    after = before.again()
    asked = int(placed.prepared["order"]["outputAmount"])
    assert before.delta(after, ngns.address, maker.address) == -sell
    assert before.delta(after, usdc.address, maker.address) == asked
    return placed, record
