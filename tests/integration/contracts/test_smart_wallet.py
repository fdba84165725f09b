"""SmartWallet (ERC-1271) as a maker, its owner-only execution, and the CREATE2 factory."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3.contract import Contract

from contracts.orders import permit_witness_digest
from contracts.signatures import ERC1271_MAGIC_VALUE, smart_wallet_address
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

WETH = 10**18
USDC = 10**6
SALT = 7


def _create_wallet(env: Env, owner: LocalAccount, salt: int = SALT) -> Contract:
    env.transact(env.stranger, env.factory.functions.createAccount(owner.address, salt))
    address = env.factory.functions.getAddress(owner.address, salt).call()
    return env.contract("SmartWallet", address)


def test_factory_address_is_counterfactual_and_creation_idempotent(env: Env) -> None:
    owner = env.wallet_owner
    predicted = env.factory.functions.getAddress(owner.address, SALT).call()
    assert predicted == smart_wallet_address(env.factory.address, owner.address, SALT)
    assert env.code(predicted) == b""

    receipt = env.transact(env.stranger, env.factory.functions.createAccount(owner.address, SALT))
    [created] = env.events(env.factory, "AccountCreated", receipt)
    assert created == {"account": predicted, "owner": owner.address, "salt": SALT}
    assert env.code(predicted) != b""
    assert env.contract("SmartWallet", predicted).functions.owner().call() == owner.address

    # A second call returns the same account and deploys nothing.
    again = env.factory.functions.createAccount(owner.address, SALT)
    assert again.call({"from": env.stranger.address}) == predicted
    receipt = env.transact(env.stranger, again)
    assert env.events(env.factory, "AccountCreated", receipt) == []
    # Other owners and salts give other addresses.
    assert env.factory.functions.getAddress(owner.address, SALT + 1).call() != predicted
    assert env.factory.functions.getAddress(env.stranger.address, SALT).call() != predicted


def test_is_valid_signature_checks_the_owner_over_the_raw_hash(env: Env) -> None:
    wallet = _create_wallet(env, env.wallet_owner)
    digest = bytes(range(32))
    good = bytes(Account.unsafe_sign_hash(digest, env.wallet_owner.key).signature)
    bad = bytes(Account.unsafe_sign_hash(digest, env.stranger.key).signature)
    check = wallet.functions.isValidSignature
    assert check(digest, good).call() == ERC1271_MAGIC_VALUE
    assert check(digest, bad).call() == b"\xff\xff\xff\xff"
    assert check(digest, good[:64]).call() == b"\xff\xff\xff\xff"
    assert check(digest, b"\x00" * 65).call() == b"\xff\xff\xff\xff"


def test_only_the_owner_can_execute(env: Env) -> None:
    wallet = _create_wallet(env, env.wallet_owner)
    call = wallet.functions.execute(
        env.usdc.address, 0, env.calldata(env.usdc.functions.approve(env.stranger.address, 1))
    )
    env.expect_revert(env.stranger, call, "NotOwner")
    env.expect_revert(env.stranger, wallet.functions.executeBatch([]), "NotOwner")
    env.transact(env.wallet_owner, call)
    assert env.usdc.functions.allowance(wallet.address, env.stranger.address).call() == 1


def test_execute_bubbles_the_inner_revert(env: Env) -> None:
    wallet = _create_wallet(env, env.wallet_owner)
    # The wallet holds no USDC, so the token's own error must surface.
    transfer = env.calldata(env.usdc.functions.transfer(env.stranger.address, 1))
    env.expect_revert(
        env.wallet_owner,
        wallet.functions.execute(env.usdc.address, 0, transfer),
        "ERC20InsufficientBalance",
    )


def test_order_signed_by_smart_wallet_fills(env: Env) -> None:
    owner, taker = env.wallet_owner, env.taker
    wallet = _create_wallet(env, owner)
    env.transact(env.deployer, env.weth.functions.mint(wallet.address, 5 * WETH))
    approve = env.calldata(env.weth.functions.approve(env.signature_transfer.address, 2**256 - 1))
    env.transact(owner, wallet.functions.executeBatch([(env.weth.address, 0, approve)]))

    order = env.order(wallet.address, env.weth, 2 * WETH, env.usdc, 4_000 * USDC, fee=4 * USDC)
    # The owner's key signs the Permit2 digest; SignatureTransfer asks the wallet (ERC-1271).
    signature = env.sign(owner, order)
    before = env.balances([env.weth, env.usdc], [wallet.address, taker.address])

    receipt = env.transact(
        taker, env.reactor.functions.execute((env.signed(owner, order)[0], signature))
    )

    after = env.balances([env.weth, env.usdc], [wallet.address, taker.address])
    assert (
        after[(env.weth.address, wallet.address)]
        == before[(env.weth.address, wallet.address)] - 2 * WETH
    )
    assert (
        after[(env.usdc.address, wallet.address)]
        == before[(env.usdc.address, wallet.address)] + 4_000 * USDC
    )
    assert (
        after[(env.weth.address, taker.address)]
        == before[(env.weth.address, taker.address)] + 2 * WETH
    )
    assert (
        after[(env.usdc.address, taker.address)]
        == before[(env.usdc.address, taker.address)] - 4_004 * USDC
    )
    assert env.fill_events(receipt)[0]["maker"] == wallet.address
    # Sanity: the digest the wallet was asked about is the Python one.
    digest = permit_witness_digest(order, env.chain_id, env.signature_transfer.address)
    assert wallet.functions.isValidSignature(digest, signature).call() == ERC1271_MAGIC_VALUE


def test_order_for_smart_wallet_signed_by_someone_else_reverts(env: Env) -> None:
    owner = env.wallet_owner
    wallet = _create_wallet(env, owner)
    env.transact(env.deployer, env.weth.functions.mint(wallet.address, 5 * WETH))
    approve = env.calldata(env.weth.functions.approve(env.signature_transfer.address, 2**256 - 1))
    env.transact(owner, wallet.functions.execute(env.weth.address, 0, approve))
    order = env.order(wallet.address, env.weth, WETH, env.usdc, 2_000 * USDC)
    env.expect_revert(
        env.taker,
        env.reactor.functions.execute(env.signed(env.stranger, order)),
        "InvalidContractSignature",
    )
