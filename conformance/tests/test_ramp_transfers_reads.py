"""Reading a ramp transfer back, each way the spec gives (spec 2 "Reading", "Masked views",
"Claim token"), from the side the first tests of test_ramp_transfers.py do not take: the views
held against the transfer as it was created (not against another read), a token per replay,
a claim token that opens its own transfer only, and a transfer made later heading its wallet's
list. Sells of a registered wallet only (no identity review, no money moved), so every test runs
on any deployment with the public API alone."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import ACCOUNT, Created, Transfers, check_transfer
from conformance.wire.response_checks import assert_error

# Fields a masked view shows as the full view does (spec 2 "Masked views": only the payout
# account is cut on a wallet's read and in the list).
IN_FULL = ("id", "side", "sourceAmount", "targetAmount", "rateLabel", "feeLabel", "payIn")


def _masked_read(transfers: Transfers, created: Created, wallet: str) -> dict[str, Any]:
    resp = transfers.get(created.id, wallet=wallet)
    assert resp.status == 200, resp.raw
    return check_transfer(resp.json()["transfer"])


def _assert_as_created(created: Created, view: dict[str, Any], what: str) -> None:
    for name in IN_FULL:
        assert view.get(name) == created.transfer.get(name), f"{what}: {name}"
    pay_out = view["payOut"]
    assert isinstance(pay_out, dict), view
    assert pay_out["accountNumber"] == ACCOUNT[-4:], f"{what}: the account cut to four digits"
    assert pay_out["accountName"] == created.transfer["payOut"]["accountName"], what


@pytest.mark.spec(
    "ramp/resources/transfer/masked-views",
    "ramp/endpoints/reading/get-wallet-address-list",
    "ramp/endpoints/post-v2-ramp-transfers-list",
)
def test_a_wallets_views_show_the_transfer_as_created_with_the_account_cut(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    created = transfers.create(transfers.body(wallet, "sell", "250"))
    assert created.transfer["payOut"]["accountNumber"] == ACCOUNT
    # Read on the wallet's behalf: its amounts are the ones it was made with, never priced again.
    _assert_as_created(created, _masked_read(transfers, created, wallet.address), "wallet view")
    (row,) = transfers.listed(wallet)["transfers"]
    _assert_as_created(created, check_transfer(row), "list row")


@pytest.mark.spec(
    "ramp/overview/properties-that-must-hold/creation-idempotent-per-intentkey",
    "ramp/resources/transfer/claim-token",
    "ramp/endpoints/reading/get-x-ramp-claim-returns-full",
)
def test_every_replay_hands_out_a_fresh_claim_token_that_reads_the_transfer(
    ramp: Ramp, transfers: Transfers
) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    body = transfers.body(wallet, "sell", "275")
    made = [transfers.create(body)]
    made += [transfers.create({**body, "proof": ramp.proof(wallet)}) for _ in range(2)]
    assert {m.id for m in made} == {made[0].id}, "one transfer, whatever the replays"
    tokens = [m.claim_token for m in made]
    assert len(set(tokens)) == len(tokens), "each answer's claim token is a fresh one"
    for token in tokens:
        assert transfers.read(Created(made[0].transfer, token))["id"] == made[0].id


@pytest.mark.spec(
    "ramp/endpoints/reading/get-x-ramp-claim-returns-full",
    "ramp/auth/item-3",
    "ramp/errors/404-not_found",
)
def test_a_claim_token_opens_its_own_transfer_and_no_other(
    ramp: Ramp, transfers: Transfers
) -> None:
    mine, theirs = fresh_wallet(), fresh_wallet()
    for wallet in (mine, theirs):
        ramp.registered(wallet)
    a = transfers.create(transfers.body(mine, "sell", "260"))
    b = transfers.create(transfers.body(theirs, "sell", "261"))
    for transfer in (a, b):
        assert transfers.read(transfer)["id"] == transfer.id
    # Another wallet's token, a token of the right shape that was never handed out, and a
    # token of no shape at all: each a wrong token, which answers as a wrong id does.
    for transfer, token in ((a, b.claim_token), (b, a.claim_token)):
        assert_error(transfers.get(transfer.id, claim=token), 404, "not_found")
    forged = a.claim_token[:-1] + ("B" if a.claim_token.endswith("A") else "A")
    assert_error(transfers.get(a.id, claim=forged), 404, "not_found")
    assert_error(transfers.get(a.id, claim="nonsense"), 404, "not_found")


@pytest.mark.spec(
    "ramp/endpoints/post-v2-ramp-transfers-list",
    "ramp/endpoints/reading/get-wallet-address-list",
)
def test_a_transfer_made_later_heads_its_wallets_list(ramp: Ramp, transfers: Transfers) -> None:
    wallet = fresh_wallet()
    ramp.registered(wallet)
    older = transfers.create(transfers.body(wallet, "sell", "270"))
    assert [t["id"] for t in transfers.listed(wallet)["transfers"]] == [older.id]
    # Made after the list showed the first, so it is the newer whatever the clock's grain.
    newer = transfers.create(transfers.body(wallet, "sell", "271"))
    listed = [t["id"] for t in transfers.listed(wallet)["transfers"]]
    assert listed == [newer.id, older.id], "newest first"
    assert [t["id"] for t in transfers.listed(wallet, first=1)["transfers"]] == [newer.id]
