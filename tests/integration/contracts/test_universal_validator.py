"""The deployless UniversalSigValidator, run the way the service runs it: eth_call with no `to`."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from contracts.orders import permit_witness_digest
from contracts.signatures import (
    ERC6492_MAGIC_SUFFIX,
    create_account_calldata,
    decode_validator_result,
    smart_wallet_address,
    universal_validator_calldata,
    wrap_erc6492,
)
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

SALT = 42


def _digest(env: Env) -> bytes:
    order = env.order(env.makers[0].address, env.weth, 10**18, env.usdc, 2_000 * 10**6)
    return permit_witness_digest(order, env.chain_id, env.signature_transfer.address)


def _sign(account: LocalAccount, digest: bytes) -> bytes:
    return bytes(Account.unsafe_sign_hash(digest, account.key).signature)


def _validate(env: Env, signer: str, digest: bytes, signature: bytes) -> bool:
    return decode_validator_result(
        env.eth_call_deployless(universal_validator_calldata(signer, digest, signature))
    )


def test_eoa_signatures(env: Env) -> None:
    digest = _digest(env)
    maker = env.makers[0]
    good = _sign(maker, digest)
    assert _validate(env, maker.address, digest, good) is True
    assert _validate(env, maker.address, digest, _sign(env.stranger, digest)) is False
    assert _validate(env, maker.address, bytes(32), good) is False  # other hash
    assert _validate(env, maker.address, digest, good[:64]) is False  # not 65 bytes
    assert _validate(env, maker.address, digest, b"") is False
    assert _validate(env, maker.address, digest, good[:64] + b"\x05") is False  # bad v


def test_deployed_erc1271_wallet(env: Env) -> None:
    owner = env.wallet_owner
    env.transact(env.stranger, env.factory.functions.createAccount(owner.address, SALT))
    wallet = smart_wallet_address(env.factory.address, owner.address, SALT)
    digest = _digest(env)
    assert _validate(env, wallet, digest, _sign(owner, digest)) is True
    assert _validate(env, wallet, digest, _sign(env.stranger, digest)) is False
    # A 6492 wrapper around a deployed wallet is accepted too (the factory call is skipped).
    wrapped = wrap_erc6492(
        env.factory.address, create_account_calldata(owner.address, SALT), _sign(owner, digest)
    )
    assert _validate(env, wallet, digest, wrapped) is True


def test_undeployed_wallet_with_erc6492_signature(env: Env) -> None:
    owner = env.wallet_owner
    wallet = smart_wallet_address(env.factory.address, owner.address, SALT)
    assert env.code(wallet) == b""
    digest = _digest(env)
    deploy = create_account_calldata(owner.address, SALT)

    good = wrap_erc6492(env.factory.address, deploy, _sign(owner, digest))
    assert _validate(env, wallet, digest, good) is True
    wrong_signer = wrap_erc6492(env.factory.address, deploy, _sign(env.stranger, digest))
    assert _validate(env, wallet, digest, wrong_signer) is False
    # A factory call that deploys someone else's wallet does not vouch for this one.
    other_wallet = wrap_erc6492(
        env.factory.address,
        create_account_calldata(env.stranger.address, SALT),
        _sign(owner, digest),
    )
    assert _validate(env, wallet, digest, other_wallet) is False
    # Unwrapped, the signature of an undeployed wallet is checked by ecrecover and fails.
    assert _validate(env, wallet, digest, _sign(owner, digest)) is False

    # eth_call deployed nothing.
    assert env.code(wallet) == b""


def test_malformed_erc6492_wrappers_answer_invalid_without_reverting(env: Env) -> None:
    owner = env.wallet_owner
    wallet = smart_wallet_address(env.factory.address, owner.address, SALT)
    digest = _digest(env)
    good = wrap_erc6492(
        env.factory.address, create_account_calldata(owner.address, SALT), _sign(owner, digest)
    )
    body = good[:-32]
    huge_offset = (2**255).to_bytes(32, "big")
    for signature in (
        ERC6492_MAGIC_SUFFIX,  # nothing before the suffix
        b"\x01" * 95 + ERC6492_MAGIC_SUFFIX,  # head too short
        b"\xff" * 32 + body[32:] + ERC6492_MAGIC_SUFFIX,  # factory word not an address
        body[:32] + huge_offset + body[64:] + ERC6492_MAGIC_SUFFIX,  # offset out of range
        body[:-40] + ERC6492_MAGIC_SUFFIX,  # truncated inner signature
        wrap_erc6492(env.stranger.address, b"", _sign(owner, digest)),  # "factory" without code
        wrap_erc6492(
            env.factory.address, b"\xde\xad\xbe\xef", _sign(owner, digest)
        ),  # factory call fails
    ):
        assert _validate(env, wallet, digest, signature) is False, signature.hex()
    assert env.code(wallet) == b""


def test_counterfactual_wallet_signs_now_and_fills_after_deployment(env: Env) -> None:
    owner, taker = env.wallet_owner, env.taker
    wallet = smart_wallet_address(env.factory.address, owner.address, SALT)
    order = env.order(wallet, env.weth, 10**18, env.usdc, 2_000 * 10**6)
    inner = env.sign(owner, order)
    digest = permit_witness_digest(order, env.chain_id, env.signature_transfer.address)
    wrapped = wrap_erc6492(env.factory.address, create_account_calldata(owner.address, SALT), inner)
    assert _validate(env, wallet, digest, wrapped) is True

    # Later the wallet is deployed, funded and approves; the inner signature then fills as 1271.
    env.transact(env.stranger, env.factory.functions.createAccount(owner.address, SALT))
    env.transact(env.deployer, env.weth.functions.mint(wallet, 10**18))
    approve = env.calldata(env.weth.functions.approve(env.signature_transfer.address, 10**18))
    env.transact(
        owner, env.contract("SmartWallet", wallet).functions.execute(env.weth.address, 0, approve)
    )
    receipt = env.transact(
        taker, env.reactor.functions.execute((env.signed(owner, order)[0], inner))
    )
    assert env.fill_events(receipt)[0]["maker"] == wallet
    assert env.balance(env.weth, wallet) == 0
