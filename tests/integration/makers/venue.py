"""The deployed venue on a real Anvil chain, as the maker integration tests use it."""

from __future__ import annotations

from dataclasses import dataclass

from eth_abi.abi import decode, encode
from eth_utils.abi import function_signature_to_4byte_selector

from rfqkit.chain import AnvilChain
from rfqkit.maker_protocol import Welcome
from rfqkit.wallets import Wallet
from simulator.adapters.chain.deployment import Deployment
from tests.unit.makers.fake_stream import welcome

CHAIN_ID = 56
APPROVE = function_signature_to_4byte_selector("approve(address,uint256)")
BALANCE_OF = function_signature_to_4byte_selector("balanceOf(address)")
ALLOWANCE = function_signature_to_4byte_selector("allowance(address,address)")


@dataclass
class Venue:
    chain: AnvilChain
    deployment: Deployment
    rpc_url: str

    def token(self, symbol: str) -> str:
        return next(t.address for t in self.deployment.tokens if t.symbol == symbol)

    async def balance(self, token: str, owner: str) -> int:
        data = await self.chain.call(token, BALANCE_OF + encode(["address"], [owner]))
        return int(decode(["uint256"], data)[0])

    async def allowance(self, token: str, owner: str, spender: str) -> int:
        data = await self.chain.call(
            token, ALLOWANCE + encode(["address", "address"], [owner, spender])
        )
        return int(decode(["uint256"], data)[0])

    async def send(self, wallet: Wallet, to: str, data: bytes) -> None:
        tx_hash = await self.chain.send_transaction(
            wallet.private_key, to=to, data=data, gas=500_000
        )
        receipt = await self.chain.receipt(tx_hash)
        assert int(receipt["status"], 16) == 1, receipt

    async def approve(self, wallet: Wallet, token: str, spender: str, amount: int) -> None:
        await self.send(wallet, token, APPROVE + encode(["address", "uint256"], [spender, amount]))

    def welcome(self, wallet: str) -> Welcome:
        """What the venue's maker stream would say to `wallet`: this chain, USDT/NGNS."""
        contracts = self.deployment.contracts
        return welcome(
            wallet,
            chain_id=CHAIN_ID,
            addresses={
                "reactor": contracts.reactor,
                "signature_transfer": contracts.signature_transfer,
                "fee_recipient": contracts.fee_recipient,
                "USDT": self.token("USDT"),
                "NGNS": self.token("NGNS"),
            },
        )
