"""A deployed copy of our contracts on one real Anvil node, plus helpers the tests share.

Every transaction is signed locally with eth-account keys and sent raw (Anvil runs with no
unlocked accounts). Failing transactions are sent with a fixed gas limit so they are mined
with status 0, which lets tests prove that a reverted transaction moved no balance.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils.abi import function_signature_to_4byte_selector
from eth_utils.crypto import keccak
from web3 import Web3
from web3.contract import Contract
from web3.contract.contract import ContractFunction
from web3.logs import DISCARD
from web3.types import Nonce, TxParams, TxReceipt, Wei

from contracts.artifacts import artifact_names, load_artifact
from contracts.orders import ZERO_ADDRESS, RfqOrder, encode_order, sign_order

DEFAULT_GAS = 2_000_000
MAX_UINT256 = 2**256 - 1
FUNDED_WEI = 10**24
TOKEN_FUNDING = 10**30  # plenty of every test token for every test account


def role_account(label: str) -> LocalAccount:
    """A deterministic key per role, so failures name the same addresses on every run."""
    account: LocalAccount = Account.from_key(keccak(text=f"rfqsim contracts test: {label}"))
    return account


def _error_table() -> dict[bytes, str]:
    table = {
        function_signature_to_4byte_selector("Error(string)"): "Error(string)",
        function_signature_to_4byte_selector("Panic(uint256)"): "Panic(uint256)",
    }
    for name in artifact_names():
        for item in load_artifact(name).abi:
            if item["type"] == "error":
                signature = f"{item['name']}({','.join(i['type'] for i in item['inputs'])})"
                table[function_signature_to_4byte_selector(signature)] = item["name"]
    return table


ERRORS_BY_SELECTOR = _error_table()


class CallDidNotRevert(AssertionError):
    pass


@dataclass
class Env:
    w3: Web3
    chain_id: int
    deployer: LocalAccount
    fee_recipient: LocalAccount
    makers: tuple[LocalAccount, ...]
    taker: LocalAccount
    user: LocalAccount
    stranger: LocalAccount
    wallet_owner: LocalAccount
    weth: Contract = field(init=False)  # TestERC20, 18 decimals
    usdc: Contract = field(init=False)  # TestERC20, 6 decimals
    usdt: Contract = field(init=False)  # TestUSDT, 6 decimals
    signature_transfer: Contract = field(init=False)
    reactor: Contract = field(init=False)
    router: Contract = field(init=False)
    factory: Contract = field(init=False)
    _nonces: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # ---- plumbing -------------------------------------------------------------------------

    def rpc(self, method: str, params: list[Any]) -> Any:
        response = self.w3.provider.make_request(method, params)  # type: ignore[arg-type]
        if "error" in response:
            raise RuntimeError(f"{method} failed: {response['error']}")
        return response["result"]

    def contract(self, name: str, address: str) -> Contract:
        return self.w3.eth.contract(
            address=Web3.to_checksum_address(address), abi=load_artifact(name).abi
        )

    def _tx_fields(self, sender: LocalAccount, gas: int) -> dict[str, Any]:
        return {
            "from": sender.address,
            "nonce": self.w3.eth.get_transaction_count(sender.address, "pending"),
            "gas": gas,
            "gasPrice": self.w3.eth.gas_price,
            "chainId": self.chain_id,
            "value": 0,
        }

    def send_raw(
        self, sender: LocalAccount, to: str | None, data: bytes, gas: int = DEFAULT_GAS
    ) -> TxReceipt:
        tx = self._tx_fields(sender, gas)
        tx["data"] = "0x" + data.hex()
        if to is not None:
            tx["to"] = to
        signed = sender.sign_transaction(tx)
        tx_hash = self.w3.eth.send_raw_transaction(signed.raw_transaction)
        return self.w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)

    def calldata(self, fn: ContractFunction) -> bytes:
        # Every field given, so web3 encodes without asking the node anything.
        params: TxParams = {
            "from": self.deployer.address,
            "gas": 1,
            "gasPrice": Wei(1),
            "nonce": Nonce(0),
            "chainId": self.chain_id,
        }
        tx = fn.build_transaction(params)
        return bytes.fromhex(str(tx["data"]).removeprefix("0x"))

    def send(self, sender: LocalAccount, fn: ContractFunction, gas: int = DEFAULT_GAS) -> TxReceipt:
        """Mine `fn` as a transaction from `sender`; returns the receipt whatever its status."""
        return self.send_raw(sender, fn.address, self.calldata(fn), gas)

    def transact(
        self, sender: LocalAccount, fn: ContractFunction, gas: int = DEFAULT_GAS
    ) -> TxReceipt:
        receipt = self.send(sender, fn, gas)
        if receipt["status"] != 1:
            reason = self.revert_error(sender, fn)
            raise AssertionError(f"{fn.fn_name} from {sender.address} reverted: {reason}")
        return receipt

    def deploy(self, name: str, *args: Any) -> Contract:
        factory = self.w3.eth.contract(
            abi=load_artifact(name).abi, bytecode=load_artifact(name).bytecode
        )
        data = bytes.fromhex(factory.constructor(*args).data_in_transaction.removeprefix("0x"))
        receipt = self.send_raw(self.deployer, None, data, gas=6_000_000)
        assert receipt["status"] == 1, f"deploying {name} failed"
        address = receipt["contractAddress"]
        assert address is not None
        return self.contract(name, address)

    def revert_data(self, sender: str, to: str, data: bytes) -> bytes:
        """Revert data of an eth_call; CallDidNotRevert if the call succeeds."""
        response = self.w3.provider.make_request(
            "eth_call",  # type: ignore[arg-type]
            [{"from": sender, "to": to, "data": "0x" + data.hex()}, "latest"],
        )
        if "error" not in response:
            raise CallDidNotRevert(f"call to {to} succeeded: {response.get('result')}")
        raw = response["error"].get("data") or "0x"
        return bytes.fromhex(raw.removeprefix("0x"))

    def revert_error(self, sender: LocalAccount, fn: ContractFunction) -> str:
        """Name of the custom error `fn` reverts with ("<empty>" for a bare revert)."""
        data = self.revert_data(sender.address, fn.address, self.calldata(fn))
        if not data:
            return "<empty>"
        return ERRORS_BY_SELECTOR.get(data[:4], "unknown 0x" + data[:4].hex())

    def expect_revert(
        self, sender: LocalAccount, fn: ContractFunction, error: str, gas: int = DEFAULT_GAS
    ) -> TxReceipt:
        """Assert `fn` reverts with `error` (by eth_call), then mine it and assert status 0."""
        assert self.revert_error(sender, fn) == error
        receipt = self.send(sender, fn, gas)
        assert receipt["status"] == 0
        return receipt

    def approve(
        self, owner: LocalAccount, token: Contract, spender: str, amount: int = MAX_UINT256
    ) -> TxReceipt:
        return self.transact(owner, token.functions.approve(spender, amount))

    def eth_call_deployless(self, data: bytes) -> bytes:
        """eth_call with no `to`: runs `data` as creation code and returns its "runtime code"."""
        result = self.rpc("eth_call", [{"data": "0x" + data.hex()}, "latest"])
        return bytes.fromhex(str(result).removeprefix("0x"))

    # ---- chain state ----------------------------------------------------------------------

    def now(self) -> int:
        return int(self.w3.eth.get_block("latest")["timestamp"])

    def set_next_timestamp(self, timestamp: int) -> None:
        self.rpc("evm_setNextBlockTimestamp", [timestamp])

    def balance(self, token: Contract, owner: str) -> int:
        return int(token.functions.balanceOf(owner).call())

    def balances(
        self, tokens: Sequence[Contract], owners: Sequence[str]
    ) -> dict[tuple[str, str], int]:
        return {(t.address, o): self.balance(t, o) for t in tokens for o in owners}

    def code(self, address: str) -> bytes:
        return bytes(self.w3.eth.get_code(Web3.to_checksum_address(address)))

    # ---- orders ---------------------------------------------------------------------------

    def next_nonce(self) -> int:
        # Spread nonces over several bitmap words so word/bit arithmetic is exercised.
        return next(self._nonces) * 97

    def order(
        self,
        maker: str,
        input_token: Contract,
        input_amount: int,
        output_token: Contract,
        output_amount: int,
        *,
        fee: int = 0,
        taker: str = ZERO_ADDRESS,
        nonce: int | None = None,
        deadline: int | None = None,
        reactor: str | None = None,
    ) -> RfqOrder:
        return RfqOrder(
            reactor=reactor or self.reactor.address,
            maker=maker,
            taker=taker,
            inputToken=input_token.address,
            inputAmount=input_amount,
            outputToken=output_token.address,
            outputAmount=output_amount,
            feeAmount=fee,
            nonce=self.next_nonce() if nonce is None else nonce,
            deadline=self.now() + 3600 if deadline is None else deadline,
        )

    def sign(self, key: LocalAccount, order: RfqOrder) -> bytes:
        return sign_order(key.key, order, self.chain_id, self.signature_transfer.address)

    def signed(self, key: LocalAccount, order: RfqOrder) -> tuple[bytes, bytes]:
        """The SignedOrder tuple (encoded order, signature) as the reactor takes it."""
        return (encode_order(order), self.sign(key, order))

    def fill_events(self, receipt: TxReceipt) -> list[dict[str, Any]]:
        return self.events(self.reactor, "Fill", receipt)

    def events(self, contract: Contract, name: str, receipt: TxReceipt) -> list[dict[str, Any]]:
        """Decoded `name` events emitted by `contract` (other logs in the receipt are skipped)."""
        logs = contract.events[name]().process_receipt(receipt, errors=DISCARD)
        return [dict(log["args"]) for log in logs if log["address"] == contract.address]


def deploy_env(w3: Web3, chain_id: int) -> Env:
    env = Env(
        w3=w3,
        chain_id=chain_id,
        deployer=role_account("deployer"),
        fee_recipient=role_account("fee recipient"),
        makers=tuple(role_account(f"maker {i}") for i in range(3)),
        taker=role_account("taker"),
        user=role_account("router user"),
        stranger=role_account("stranger"),
        wallet_owner=role_account("smart wallet owner"),
    )
    people = [env.deployer, *env.makers, env.taker, env.user, env.stranger, env.wallet_owner]
    for person in people:
        env.rpc("anvil_setBalance", [person.address, hex(FUNDED_WEI)])
    env.weth = env.deploy("TestERC20", "Wrapped Ether", "WETH", 18)
    env.usdc = env.deploy("TestERC20", "USD Coin", "USDC", 6)
    env.usdt = env.deploy("TestUSDT", "Tether USD", "USDT", 6)
    env.signature_transfer = env.deploy("SignatureTransfer")
    env.reactor = env.deploy(
        "RfqReactor", env.signature_transfer.address, env.fee_recipient.address
    )
    env.router = env.deploy("SampleRouter")
    env.factory = env.deploy("SmartWalletFactory")
    for token in (env.weth, env.usdc, env.usdt):
        for person in (*env.makers, env.taker, env.user, env.stranger, env.wallet_owner):
            env.transact(env.deployer, token.functions.mint(person.address, TOKEN_FUNDING))
    # Standing allowances every fill needs: makers -> signature-transfer contract (Permit2-style
    # one-time approval), taker -> reactor. USDT allowances of the taker, the router user and the
    # stranger are left at zero for the tests of USDT's approve quirk.
    for maker in env.makers:
        for token in (env.weth, env.usdc, env.usdt):
            env.approve(maker, token, env.signature_transfer.address)
    for token in (env.weth, env.usdc):
        env.approve(env.taker, token, env.reactor.address)
    return env
