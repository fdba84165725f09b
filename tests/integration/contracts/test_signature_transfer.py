"""SignatureTransfer used directly, with permits signed by eth-account's own EIP-712 encoder
(independent of contracts.orders), as a wallet would sign Permit2 typed data."""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount

from contracts.orders import encode_order, permit2_domain_separator, permit_witness_typed_data
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

AMOUNT = 1_000 * 10**6


def _permit_typed_data(
    env: Env, token: str, amount: int, spender: str, nonce: int, deadline: int
) -> dict[str, Any]:
    return {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "PermitTransferFrom": [
                {"name": "permitted", "type": "TokenPermissions"},
                {"name": "spender", "type": "address"},
                {"name": "nonce", "type": "uint256"},
                {"name": "deadline", "type": "uint256"},
            ],
            "TokenPermissions": [
                {"name": "token", "type": "address"},
                {"name": "amount", "type": "uint256"},
            ],
        },
        "primaryType": "PermitTransferFrom",
        "domain": {
            "name": "Permit2",
            "chainId": env.chain_id,
            "verifyingContract": env.signature_transfer.address,
        },
        "message": {
            "permitted": {"token": token, "amount": amount},
            "spender": spender,
            "nonce": nonce,
            "deadline": deadline,
        },
    }


def _permit(
    env: Env,
    owner: LocalAccount,
    spender: LocalAccount,
    *,
    amount: int = AMOUNT,
    nonce: int | None = None,
    deadline: int | None = None,
) -> tuple[tuple[tuple[str, int], int, int], bytes]:
    nonce = env.next_nonce() if nonce is None else nonce
    deadline = env.now() + 600 if deadline is None else deadline
    typed = _permit_typed_data(env, env.usdc.address, amount, spender.address, nonce, deadline)
    signature = bytes(Account.sign_typed_data(owner.key, full_message=typed).signature)
    return ((env.usdc.address, amount), nonce, deadline), signature


def test_domain_separator(env: Env) -> None:
    assert env.signature_transfer.functions.DOMAIN_SEPARATOR().call() == permit2_domain_separator(
        env.chain_id, env.signature_transfer.address
    )


def test_permit_transfer_from_partial_amount(env: Env) -> None:
    owner, spender = env.makers[0], env.stranger
    permit, signature = _permit(env, owner, spender)
    before = env.balance(env.usdc, owner.address)
    user_before = env.balance(env.usdc, env.user.address)
    env.transact(
        spender,
        env.signature_transfer.functions.permitTransferFrom(
            permit, (env.user.address, AMOUNT - 1), owner.address, signature
        ),
    )
    assert env.balance(env.usdc, owner.address) == before - (AMOUNT - 1)
    assert env.balance(env.usdc, env.user.address) == user_before + AMOUNT - 1
    # One permit, one use.
    env.expect_revert(
        spender,
        env.signature_transfer.functions.permitTransferFrom(
            permit, (env.user.address, 1), owner.address, signature
        ),
        "InvalidNonce",
    )


def test_permit_errors(env: Env) -> None:
    owner, spender = env.makers[0], env.stranger
    st = env.signature_transfer.functions
    permit, signature = _permit(env, owner, spender)

    env.expect_revert(
        spender,
        st.permitTransferFrom(permit, (spender.address, AMOUNT + 1), owner.address, signature),
        "InvalidAmount",
    )
    # Another caller is another spender: the digest differs and recovers someone else.
    env.expect_revert(
        env.user,
        st.permitTransferFrom(permit, (env.user.address, AMOUNT), owner.address, signature),
        "InvalidSigner",
    )
    env.expect_revert(
        spender,
        st.permitTransferFrom(permit, (spender.address, AMOUNT), owner.address, signature[:63]),
        "InvalidSignatureLength",
    )
    env.expect_revert(
        spender,
        st.permitTransferFrom(
            permit, (spender.address, AMOUNT), owner.address, signature[:64] + b"\x1d"
        ),
        "InvalidSignature",
    )
    expired, expired_sig = _permit(env, owner, spender, deadline=env.now() - 1)
    env.expect_revert(
        spender,
        st.permitTransferFrom(expired, (spender.address, 1), owner.address, expired_sig),
        "SignatureExpired",
    )
    assert env.revert_data(
        spender.address,
        env.signature_transfer.address,
        env.calldata(
            st.permitTransferFrom(expired, (spender.address, 1), owner.address, expired_sig)
        ),
    )[4:] == expired[2].to_bytes(32, "big")


def test_compact_signature(env: Env) -> None:
    owner, spender = env.makers[1], env.stranger
    permit, signature = _permit(env, owner, spender)
    r, s, v = signature[:32], int.from_bytes(signature[32:64], "big"), signature[64]
    compact = r + ((v - 27) << 255 | s).to_bytes(32, "big")
    env.transact(
        spender,
        env.signature_transfer.functions.permitTransferFrom(
            permit, (spender.address, AMOUNT), owner.address, compact
        ),
    )


def test_invalidate_sets_bits_in_the_callers_bitmap_only(env: Env) -> None:
    maker = env.makers[0]
    mask = 0b1011 << 200
    receipt = env.transact(
        maker, env.signature_transfer.functions.invalidateUnorderedNonces(3, mask)
    )
    assert env.events(env.signature_transfer, "UnorderedNonceInvalidation", receipt) == [
        {"owner": maker.address, "word": 3, "mask": mask}
    ]
    env.transact(maker, env.signature_transfer.functions.invalidateUnorderedNonces(3, 1))
    assert env.signature_transfer.functions.nonceBitmap(maker.address, 3).call() == mask | 1
    assert env.signature_transfer.functions.nonceBitmap(env.makers[1].address, 3).call() == 0
    # Nonce 3*256+203 is bit 203 of word 3: cancelled.
    permit, signature = _permit(env, maker, env.stranger, nonce=3 * 256 + 203)
    env.expect_revert(
        env.stranger,
        env.signature_transfer.functions.permitTransferFrom(
            permit, (env.stranger.address, 1), maker.address, signature
        ),
        "InvalidNonce",
    )


def test_venue_typed_data_signed_by_a_wallet_fills(env: Env) -> None:
    """permit_witness_typed_data is what the venue hands to wallets (eth_signTypedData_v4)."""
    maker, taker = env.makers[2], env.taker
    order = env.order(maker.address, env.weth, 10**18, env.usdc, 2_000 * 10**6, fee=10**6)
    typed = permit_witness_typed_data(order, env.chain_id, env.signature_transfer.address)
    signature = bytes(Account.sign_typed_data(maker.key, full_message=typed).signature)
    receipt = env.transact(taker, env.reactor.functions.execute((encode_order(order), signature)))
    assert len(env.fill_events(receipt)) == 1
