"""Setting a wallet's balance exactly (scenario files' `balances`): the native coin through
`anvil_setBalance`; a token by minting the shortfall from the deployer (the test tokens' `mint`)
or by moving the excess from the wallet, impersonated, to the burn address. Real transactions:
the token's events and totals stay consistent, as they would on a chain."""

from __future__ import annotations

from eth_abi.abi import encode
from eth_utils.abi import function_signature_to_4byte_selector

from rfqkit.chain import AnvilChain, ChainUnavailable
from rfqkit.wallets import DEPLOYER
from simulator.adapters.chain.deployment import CALL_GAS, MINT_SELECTOR

BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")
TRANSFER = function_signature_to_4byte_selector("transfer(address,uint256)")
BURN_ADDRESS = "0x000000000000000000000000000000000000dEaD"


async def set_native_balance(chain: AnvilChain, wallet: str, wei: int) -> None:
    await chain.set_balance(wallet, wei)


async def set_token_balance(chain: AnvilChain, token: str, wallet: str, units: int) -> None:
    raw = await chain.call(token, BALANCE_OF + encode(["address"], [wallet]))
    current = int.from_bytes(raw[-32:], "big") if raw else 0
    if current < units:
        data = MINT_SELECTOR + encode(["address", "uint256"], [wallet, units - current])
        tx_hash = await chain.send_transaction(
            DEPLOYER.private_key, to=token, data=data, gas=CALL_GAS
        )
    elif current > units:
        data = TRANSFER + encode(["address", "uint256"], [BURN_ADDRESS, current - units])
        await chain.rpc("anvil_impersonateAccount", [wallet])
        try:
            tx_hash = await chain.rpc(
                "eth_sendTransaction",
                [{"from": wallet, "to": token, "data": "0x" + data.hex(), "gas": hex(CALL_GAS)}],
            )
        finally:
            await chain.rpc("anvil_stopImpersonatingAccount", [wallet])
    else:
        return
    receipt = await chain.receipt(str(tx_hash))
    if receipt.get("status") != "0x1":
        raise ChainUnavailable(
            f"chain {chain.chain_id}: setting {wallet}'s {token} balance reverted"
        )
