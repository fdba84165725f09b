"""Integrator-style helpers for trading against the venue: what a taker's own script does.

Everything here is black-box: the service's public HTTP API (plus the simulator's ``/_sim``
control API where a test needs it), and chain JSON-RPC with transactions signed locally by
``eth_account``. The simulator is never imported.

- :class:`Venue` / :class:`ChainInfo` / :class:`Token`: chains, contracts and tokens as the
  target describes them (``/_sim/info`` or the ready file);
- :class:`Chain`: raw JSON-RPC: ``eth_call`` reads (ERC-20 balances, allowances), signed
  transactions, bounded waits for receipts;
- :func:`fund_wallet`: a fresh wallet funded with tokens and native coin from a demo wallet;
- :func:`request_quote`, :func:`execute_quote`, :func:`wait_status`: request a firm quote,
  approve and broadcast ``transactions.swap``, poll ``GET /v2/rfq/{id}``;
- :class:`Fleet`: the simulated makers, reconfigured for a test and restored afterwards;
- :class:`Faults` / limits: switch simulator faults and always clear them again.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from conformance.client import (
    Client,
    Response,
    RpcError,
    SimControl,
    assert_data,
    fresh_loopback_address,
    hex_to_int,
    is_loopback_url,
    parse_iso_utc,
    rpc,
)
from conformance.signing import proof_json, sign_digest_raw, sign_taker_proof, taker_control_digest
from conformance.target import Target
from contracts.orders import RfqOrder, decode_order

T = TypeVar("T")

FEE_BPS = 5
BPS = 10_000
WAIT_TIMEOUT = 10.0  # seconds: the bound of every poll in this module unless told otherwise
POLL_INTERVAL = 0.1
NATIVE = 10**18  # one whole native coin (18 decimals)

# Fields of the RFQ record (GET /v2/rfq/{id}).
RECORD_FIELDS = frozenset(
    {
        "rfqId",
        "status",
        "chainId",
        "sellToken",
        "buyToken",
        "sellAmount",
        "buyAmount",
        "feeAmount",
        "taker",
        "quoteTtlMs",
        "replyBy",
        "expiresAt",
        "noQuoteReason",
        "txHash",
        "submittedAt",
        "filledAt",
        "failReason",
        "routing",
        "createdAt",
    }
)
ROUTING_FIELDS = frozenset(
    {
        "preferenceApplied",
        "restrictionApplied",
        "fallbackUsed",
        "targetMakerWallets",
        "preferredQuotesReceived",
        "openMarketQuotesReceived",
    }
)
QUOTE_FIELDS = frozenset(
    {
        "sellAmount",
        "buyAmount",
        "feeAmount",
        "takerPays",
        "rateRay",
        "expiresAt",
        "orderDeadline",
        "latestOrderDeadline",
        "reactor",
        "spender",
        "taker",
        "encodedOrder",
        "signature",
        "orders",
    }
)
ORDER_ENTRY_FIELDS = frozenset(
    {"encodedOrder", "signature", "sellAmount", "buyAmount", "feeAmount", "maker"}
)


def selector(signature: str) -> bytes:
    return keccak(text=signature)[:4]


def calldata(signature: str, types: Sequence[str], values: Sequence[Any]) -> bytes:
    """``selector(signature) ++ abi.encode(types, values)``."""
    return selector(signature) + abi_encode(list(types), list(values))


def fee_on(maker_receives: int) -> int:
    """The protocol fee on one order's maker output: 5 bps, rounded down."""
    return maker_receives * FEE_BPS // BPS


def whole(amount: str | int | Decimal, decimals: int) -> int:
    """``amount`` whole tokens in atomic units (``whole("1.5", 6) == 1_500_000``)."""
    return int(Decimal(str(amount)) * (Decimal(10) ** decimals))


def wait_for(
    probe: Callable[[], T | None],
    *,
    timeout: float = WAIT_TIMEOUT,
    interval: float = POLL_INTERVAL,
    what: str = "condition",
) -> T:
    """Call ``probe`` until it returns something other than None; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for {what}")
        time.sleep(interval)


# -- what the target offers ---------------------------------------------------------------


@dataclass(frozen=True)
class Wallet:
    address: str
    private_key: str

    @classmethod
    def create(cls) -> Wallet:
        account = Account.create()
        return cls(to_checksum_address(account.address), "0x" + bytes(account.key).hex())


@dataclass(frozen=True)
class Token:
    symbol: str
    address: str
    decimals: int
    usdt_like: bool

    def units(self, amount: str | int | Decimal) -> int:
        return whole(amount, self.decimals)


@dataclass(frozen=True)
class Corridor:
    base: str  # checksummed token address
    quote: str
    mode: str  # RFQ | BOOK


@dataclass(frozen=True)
class ChainInfo:
    chain_id: int
    environment: str  # live | test
    rpc_url: str
    contracts: Mapping[str, str]
    tokens: Mapping[str, Token]  # by symbol
    min_size: Decimal
    corridors: tuple[Corridor, ...] = ()

    def token(self, symbol: str) -> Token:
        return self.tokens[symbol]

    def token_at(self, address: str) -> Token:
        for token in self.tokens.values():
            if token.address.lower() == address.lower():
                return token
        raise KeyError(address)

    def rfq_directions(self) -> set[tuple[str, str]]:
        """Every (sellToken, buyToken) of the RFQ corridors, in both directions."""
        out: set[tuple[str, str]] = set()
        for corridor in self.corridors:
            if corridor.mode == "RFQ":
                out |= {(corridor.base, corridor.quote), (corridor.quote, corridor.base)}
        return out

    @property
    def reactor(self) -> str:
        return self.contracts["reactor"]

    @property
    def router(self) -> str:
        return self.contracts["router"]

    @property
    def fee_recipient(self) -> str:
        return self.contracts["fee_recipient"]

    @property
    def wallet_factory(self) -> str:
        return self.contracts["wallet_factory"]

    def rpc(self) -> Chain:
        return Chain(self.rpc_url, self.chain_id)


@dataclass(frozen=True)
class Venue:
    """The target's chains, tokens and demo wallets, read once from its info."""

    chains: Mapping[int, ChainInfo]
    demo_wallets: tuple[Wallet, ...]

    @classmethod
    def of(cls, target: Target) -> Venue:
        info = target.info or {}
        chains: dict[int, ChainInfo] = {}
        for chain in target.chains():
            chain_id = int(chain["chain_id"])
            tokens = {
                str(t["symbol"]): Token(
                    str(t["symbol"]),
                    to_checksum_address(str(t["address"])),
                    int(t["decimals"]),
                    bool(t.get("usdt_like")),
                )
                for t in chain.get("tokens") or []
            }
            chains[chain_id] = ChainInfo(
                chain_id=chain_id,
                environment=str(chain.get("environment")),
                rpc_url=target.rpc_url(chain_id),
                contracts={
                    k: to_checksum_address(str(v))
                    for k, v in (chain.get("contracts") or {}).items()
                },
                tokens=tokens,
                min_size=Decimal(str(chain.get("min_size", "1"))),
                corridors=tuple(
                    Corridor(
                        to_checksum_address(str(c["base"])),
                        to_checksum_address(str(c["quote"])),
                        str(c.get("mode")),
                    )
                    for c in chain.get("corridors") or []
                ),
            )
        wallets = tuple(
            Wallet(to_checksum_address(str(w["address"])), str(w["private_key"]))
            for w in info.get("demo_wallets") or []
        )
        return cls(chains, wallets)

    def chain(self, chain_id: int) -> ChainInfo:
        return self.chains[chain_id]


# -- chain JSON-RPC -----------------------------------------------------------------------


class TxFailed(AssertionError):
    """A transaction reverted (or could not be sent)."""


@dataclass(frozen=True)
class SignedTx:
    raw: bytes
    tx_hash: str  # lowercase 0x hex


class Chain:
    """One chain through raw JSON-RPC; transactions are signed locally."""

    def __init__(self, url: str, chain_id: int) -> None:
        self.url = url
        self.chain_id = chain_id

    def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        return rpc(self.url, method, params or [])

    def call(self, to: str, data: bytes, *, sender: str | None = None) -> bytes:
        tx: dict[str, str] = {"to": to, "data": "0x" + data.hex()}
        if sender is not None:
            tx["from"] = sender
        result = self.rpc("eth_call", [tx, "latest"])
        return bytes.fromhex(str(result).removeprefix("0x"))

    def balance_of(self, token: str, owner: str) -> int:
        out = self.call(token, calldata("balanceOf(address)", ["address"], [owner]))
        value: int = abi_decode(["uint256"], out)[0]
        return value

    def allowance(self, token: str, owner: str, spender: str) -> int:
        out = self.call(
            token,
            calldata("allowance(address,address)", ["address", "address"], [owner, spender]),
        )
        value: int = abi_decode(["uint256"], out)[0]
        return value

    def native_balance(self, owner: str) -> int:
        return hex_to_int(self.rpc("eth_getBalance", [owner, "latest"]))

    def code(self, address: str) -> bytes:
        return bytes.fromhex(str(self.rpc("eth_getCode", [address, "latest"]))[2:])

    def block_timestamp(self) -> int:
        block = self.rpc("eth_getBlockByNumber", ["latest", False])
        return hex_to_int(block["timestamp"])

    def send(
        self, wallet: Wallet, to: str, data: bytes = b"", *, value: int = 0, gas: int | None = None
    ) -> str:
        """Sign and broadcast one transaction; returns its hash (does not wait)."""
        return self.broadcast(self.sign(wallet, to, data, value=value, gas=gas))

    def broadcast(self, signed: SignedTx) -> str:
        tx_hash = self.rpc("eth_sendRawTransaction", ["0x" + signed.raw.hex()])
        assert str(tx_hash).lower() == signed.tx_hash, (tx_hash, signed.tx_hash)
        return signed.tx_hash

    def sign(
        self, wallet: Wallet, to: str, data: bytes = b"", *, value: int = 0, gas: int | None = None
    ) -> SignedTx:
        """Sign (not send) one legacy transaction with the next nonce; its hash is known before
        it is broadcast, so it can be reported to /submit first."""
        sender = wallet.address
        nonce = hex_to_int(self.rpc("eth_getTransactionCount", [sender, "pending"]))
        gas_price = hex_to_int(self.rpc("eth_gasPrice"))
        if gas is None:
            estimate_tx = {
                "from": sender,
                "to": to,
                "data": "0x" + data.hex(),
                "value": hex(value),
            }
            try:
                gas = hex_to_int(self.rpc("eth_estimateGas", [estimate_tx])) * 13 // 10 + 20_000
            except RpcError as exc:
                raise TxFailed(f"transaction to {to} would revert: {exc.error!r}") from exc
        tx = {
            "chainId": self.chain_id,
            "nonce": nonce,
            "to": to_checksum_address(to),
            "value": value,
            "data": data,
            "gas": gas,
            "gasPrice": gas_price,
        }
        signed = Account.sign_transaction(tx, wallet.private_key)
        return SignedTx(bytes(signed.raw_transaction), "0x" + bytes(signed.hash).hex())

    def wait_receipt(self, tx_hash: str, *, timeout: float = WAIT_TIMEOUT) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:
            receipt = self.rpc("eth_getTransactionReceipt", [tx_hash])
            return receipt if isinstance(receipt, dict) else None

        return wait_for(probe, timeout=timeout, what=f"the receipt of {tx_hash}")

    def transact(
        self,
        wallet: Wallet,
        to: str,
        data: bytes = b"",
        *,
        value: int = 0,
        gas: int | None = None,
    ) -> dict[str, Any]:
        """Send, wait for the receipt and require success; returns the receipt."""
        tx_hash = self.send(wallet, to, data, value=value, gas=gas)
        receipt = self.wait_receipt(tx_hash)
        if hex_to_int(receipt.get("status")) != 1:
            raise TxFailed(f"transaction {tx_hash} to {to} reverted: {receipt!r}")
        return receipt

    # ERC-20 writes
    def transfer(self, wallet: Wallet, token: str, to: str, amount: int) -> dict[str, Any]:
        return self.transact(wallet, token, erc20_transfer(to, amount))

    def approve(self, wallet: Wallet, token: str, spender: str, amount: int) -> dict[str, Any]:
        return self.transact(wallet, token, erc20_approve(spender, amount))


def erc20_transfer(to: str, amount: int) -> bytes:
    return calldata("transfer(address,uint256)", ["address", "uint256"], [to, amount])


def erc20_approve(spender: str, amount: int) -> bytes:
    return calldata("approve(address,uint256)", ["address", "uint256"], [spender, amount])


def hex_bytes(value: Any) -> bytes:
    assert isinstance(value, str), f"not 0x hex: {value!r}"
    assert value.startswith("0x"), f"not 0x hex: {value!r}"
    return bytes.fromhex(value[2:])


def fund_wallet(
    chain: ChainInfo,
    source: Wallet,
    tokens: Mapping[str, int],
    *,
    native: int = NATIVE,
    wallet: Wallet | None = None,
) -> Wallet:
    """A fresh (or the given) wallet holding ``tokens`` ({token address: atomic amount}) and
    ``native`` coin, transferred from ``source`` (a demo wallet)."""
    node = chain.rpc()
    target = wallet or Wallet.create()
    if native:
        node.transact(source, target.address, value=native, gas=21_000)
    for token, amount in tokens.items():
        if amount:
            node.transfer(source, token, target.address, amount)
    return target


# -- balances -----------------------------------------------------------------------------


@dataclass
class Balances:
    """ERC-20 balances of several holders, to compare before and after a trade."""

    chain: Chain
    tokens: tuple[str, ...]
    holders: tuple[str, ...]
    values: dict[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def read(cls, chain: Chain, tokens: Iterable[str], holders: Iterable[str]) -> Balances:
        snapshot = cls(
            chain,
            tuple(dict.fromkeys(to_checksum_address(t) for t in tokens)),
            tuple(dict.fromkeys(to_checksum_address(h) for h in holders)),
        )
        for token in snapshot.tokens:
            for holder in snapshot.holders:
                snapshot.values[(token, holder)] = chain.balance_of(token, holder)
        return snapshot

    def again(self) -> Balances:
        return Balances.read(self.chain, self.tokens, self.holders)

    def of(self, token: str, holder: str) -> int:
        return self.values[(to_checksum_address(token), to_checksum_address(holder))]

    def delta(self, later: Balances, token: str, holder: str) -> int:
        return later.of(token, holder) - self.of(token, holder)


# -- keys, callers, proofs ----------------------------------------------------------------


def new_key(
    sim: SimControl,
    environment: str,
    scopes: Iterable[str] = ("trades:write", "trades:read"),
    *,
    partner: str | None = None,
    tier: str = "unlimited",
) -> dict[str, Any]:
    """A fresh API key of a partner of its own (unless named); returns the record with ``key``."""
    name = partner or f"conformance-trading-{secrets.token_hex(6)}"
    return sim.create_key(name, environment, scopes, tier=tier)


def bearer(key: Mapping[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {key['key']}"}


def claim(token: str) -> dict[str, str]:
    return {"X-Rfq-Claim": token}


def keyed_client(http: Client, key: Mapping[str, Any]) -> Client:
    return http.with_headers(bearer(key))


def keyless_client(target: Target, http: Client) -> Client:
    """A keyless client seen by the service as a client IP no other test uses (on loopback)."""
    if not is_loopback_url(target.base_url):
        return http
    return http.from_address(fresh_loopback_address())


def service_now_ms(sim: SimControl | None) -> int:
    """The service clock (tests may have advanced it) in Unix ms; wall time without /_sim."""
    if sim is None:
        return int(time.time() * 1000)
    return sim.now_ms()


def eoa_proof(sim: SimControl | None, wallet: Wallet, chain_id: int) -> dict[str, Any]:
    """A fresh takerProof signed by an externally owned taker."""
    return sign_taker_proof(
        wallet.private_key, wallet.address, chain_id, issued_at_ms=service_now_ms(sim)
    )


def smart_account_proof(
    sim: SimControl | None, owner: Wallet, account: str, chain_id: int
) -> dict[str, Any]:
    """A fresh takerProof for a deployed ERC-1271 smart account owned by ``owner``."""
    nonce = secrets.token_bytes(32)
    issued = service_now_ms(sim)
    digest = taker_control_digest(account, chain_id, nonce, issued)
    return proof_json(nonce, issued, sign_digest_raw(owner.private_key, digest))


# -- smart accounts -----------------------------------------------------------------------


def create_smart_account(chain: ChainInfo, owner: Wallet, salt: int | None = None) -> str:
    """Deploy a SmartWallet for ``owner`` through the factory (owner pays gas); its address."""
    node = chain.rpc()
    salt = secrets.randbits(64) if salt is None else salt
    factory = chain.wallet_factory
    lookup = calldata("getAddress(address,uint256)", ["address", "uint256"], [owner.address, salt])
    (account,) = abi_decode(["address"], node.call(factory, lookup))
    node.transact(
        owner,
        factory,
        calldata("createAccount(address,uint256)", ["address", "uint256"], [owner.address, salt]),
    )
    assert node.code(account), f"no code at the smart account {account}"
    return to_checksum_address(account)


def smart_account_batch(calls: Sequence[tuple[str, int, bytes]]) -> bytes:
    """Calldata of ``SmartWallet.executeBatch((address,uint256,bytes)[])``."""
    return calldata(
        "executeBatch((address,uint256,bytes)[])",
        ["(address,uint256,bytes)[]"],
        [[(to_checksum_address(to), value, data) for to, value, data in calls]],
    )


# -- the RFQ API --------------------------------------------------------------------------


def rfq_body(
    chain: ChainInfo,
    sell: str,
    buy: str,
    *,
    sell_amount: int | None = None,
    buy_amount: int | None = None,
    taker: str | None = None,
    proof: Mapping[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A request body; ``sell``/``buy`` are token symbols of ``chain``."""
    body: dict[str, Any] = {
        "chainId": chain.chain_id,
        "sellToken": chain.token(sell).address,
        "buyToken": chain.token(buy).address,
    }
    if sell_amount is not None:
        body["sellAmount"] = str(sell_amount)
    if buy_amount is not None:
        body["buyAmount"] = str(buy_amount)
    if taker is not None:
        body["taker"] = taker
    if proof is not None:
        body["takerProof"] = dict(proof)
    body.update(extra)
    return body


def request_quote(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    """POST /v2/rfq/request expecting 200; returns data (quoted or no_quote)."""
    resp = client.post("/v2/rfq/request", json=dict(body), timeout=75)
    data: dict[str, Any] = assert_data(resp)
    assert isinstance(data, dict), data
    return data


def expect_quoted(data: Mapping[str, Any]) -> dict[str, Any]:
    assert data.get("status") == "quoted", f"expected a firm quote, got {data!r}"
    return dict(data)


def expect_no_quote(data: Mapping[str, Any], reason: str) -> dict[str, Any]:
    assert data.get("status") == "no_quote", f"expected no_quote {reason}, got {data!r}"
    assert data.get("reason") == reason, f"expected reason {reason!r}, got {data!r}"
    return dict(data)


def preview(client: Client, body: Mapping[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.post("/v2/rfq/preview", json=dict(body)))
    assert isinstance(data, dict), data
    return data


def get_record(client: Client, rfq_id: str, claim_token: str | None = None) -> dict[str, Any]:
    headers = claim(claim_token) if claim_token else None
    data: dict[str, Any] = assert_data(client.get(f"/v2/rfq/{rfq_id}", headers=headers))
    return data


def wait_status(
    client: Client,
    rfq_id: str,
    claim_token: str | None,
    statuses: str | Iterable[str],
    *,
    timeout: float = WAIT_TIMEOUT,
) -> dict[str, Any]:
    """Poll GET /v2/rfq/{id} until its status is one of ``statuses``; fail after ``timeout``
    with the last record seen."""
    wanted = {statuses} if isinstance(statuses, str) else set(statuses)
    last: list[dict[str, Any]] = []

    def probe() -> dict[str, Any] | None:
        record = get_record(client, rfq_id, claim_token)
        last[:] = [record]
        return record if record.get("status") in wanted else None

    try:
        return wait_for(probe, timeout=timeout, interval=0.15, what=f"{rfq_id} in {wanted}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last record: {last[0] if last else None!r}") from None


def submit(client: Client, rfq_id: str, claim_token: str | None, tx_hash: str) -> Response:
    headers = claim(claim_token) if claim_token else None
    return client.post(f"/v2/rfq/{rfq_id}/submit", json={"txHash": tx_hash}, headers=headers)


def cancel(client: Client, rfq_id: str, claim_token: str | None) -> Response:
    headers = claim(claim_token) if claim_token else None
    return client.post(f"/v2/rfq/{rfq_id}/cancel", headers=headers)


def random_tx_hash() -> str:
    return "0x" + secrets.token_hex(32)


def iso_seconds(value: Any) -> float:
    return parse_iso_utc(value).timestamp()


def approve_for_quote(chain: ChainInfo, wallet: Wallet, firm: Mapping[str, Any]) -> None:
    """Execution rule 1-2: approve takerPays to the reactor unless an allowance covers it
    (resetting a USDT-like token's nonzero allowance first), and wait for the receipt."""
    node = chain.rpc()
    quote = firm["quote"]
    approval = firm["transactions"]["approval"]
    token = to_checksum_address(approval["to"])
    needed = int(quote["takerPays"])
    current = node.allowance(token, wallet.address, quote["reactor"])
    if current >= needed:
        return
    usdt_like = any(t.usdt_like and t.address == token for t in chain.tokens.values())
    if current and usdt_like:
        node.approve(wallet, token, quote["reactor"], 0)
    assert approval["value"] == "0", approval
    assert approval["chainId"] == chain.chain_id, approval
    node.transact(wallet, token, hex_bytes(approval["data"]))


def broadcast_swap(chain: ChainInfo, wallet: Wallet, firm: Mapping[str, Any]) -> str:
    """Broadcast transactions.swap as it is and wait for a successful receipt; its hash."""
    swap = firm["transactions"]["swap"]
    assert swap["value"] == "0", swap
    assert swap["chainId"] == chain.chain_id, swap
    receipt = chain.rpc().transact(wallet, swap["to"], hex_bytes(swap["data"]))
    return str(receipt["transactionHash"])


def execute_quote(chain: ChainInfo, wallet: Wallet, firm: Mapping[str, Any]) -> str:
    """The integrator flow: approve, wait, broadcast the swap; returns the swap's tx hash."""
    approve_for_quote(chain, wallet, firm)
    return broadcast_swap(chain, wallet, firm)


def router_swap_calldata(firm: Mapping[str, Any], sell_token: str, buy_token: str) -> bytes:
    """``SampleRouter.swap(reactor, orders, tokenIn, amountIn=takerPays, tokenOut, minOut)``
    with minOut = the quoted buyAmount."""
    quote = firm["quote"]
    orders = [(hex_bytes(o["encodedOrder"]), hex_bytes(o["signature"])) for o in quote["orders"]]
    return calldata(
        "swap(address,(bytes,bytes)[],address,uint256,address,uint256)",
        ["address", "(bytes,bytes)[]", "address", "uint256", "address", "uint256"],
        [
            to_checksum_address(quote["reactor"]),
            orders,
            to_checksum_address(sell_token),
            int(quote["takerPays"]),
            to_checksum_address(buy_token),
            int(quote["buyAmount"]),
        ],
    )


# -- checking what the service returned ---------------------------------------------------

RAY = 10**27
EXECUTE = selector("execute((bytes,bytes))")
EXECUTE_BATCH = selector("executeBatch((bytes,bytes)[])")
_ATOMIC = re.compile(r"^(0|[1-9][0-9]*)$")


def atomic(value: Any, what: str = "amount") -> int:
    """An amount on the wire: a base-10 string of atomic units, no decimals; its int."""
    assert isinstance(value, str), f"{what} is not a string: {value!r}"
    assert _ATOMIC.match(value), f"{what} is not atomic: {value!r}"
    return int(value)


def rate_ray(sell: int, sell_decimals: int, buy: int, buy_decimals: int) -> int:
    """Decimal-normalized buy-per-sell rate, RAY-scaled, rounded down."""
    rate: int = buy * RAY * 10**sell_decimals // (sell * 10**buy_decimals)
    return rate


def decode_swap(data: bytes) -> list[tuple[bytes, bytes]]:
    """The signed orders inside transactions.swap (reactor execute or executeBatch)."""
    if data[:4] == EXECUTE:
        (single,) = abi_decode(["(bytes,bytes)"], data[4:])
        return [(bytes(single[0]), bytes(single[1]))]
    assert data[:4] == EXECUTE_BATCH, f"swap is neither execute nor executeBatch: {data[:4]!r}"
    (batch,) = abi_decode(["(bytes,bytes)[]"], data[4:])
    return [(bytes(order), bytes(sig)) for order, sig in batch]


@dataclass(frozen=True)
class CheckedQuote:
    """A firm quote after :func:`assert_firm_quote`: its orders decoded."""

    data: dict[str, Any]
    orders: list[RfqOrder]

    @property
    def quote(self) -> dict[str, Any]:
        quote: dict[str, Any] = self.data["quote"]
        return quote

    @property
    def taker_pays(self) -> int:
        return int(self.quote["takerPays"])

    @property
    def buy_amount(self) -> int:
        return int(self.quote["buyAmount"])

    @property
    def fee_amount(self) -> int:
        return int(self.quote["feeAmount"])

    @property
    def makers(self) -> list[str]:
        return [o.maker for o in self.orders]


def assert_firm_quote(
    chain: ChainInfo,
    data: Mapping[str, Any],
    *,
    sell: str,
    buy: str,
    taker: str,
    sell_amount: int | None = None,
    buy_amount: int | None = None,
) -> CheckedQuote:
    """Check a ``quoted`` answer of POST /v2/rfq/request against the spec, field by field, and
    against the signed orders it carries (decoded from encodedOrder). ``sell``/``buy`` are
    token symbols; exactly one of ``sell_amount`` / ``buy_amount`` is the request's size."""
    assert data.get("status") == "quoted", data
    assert set(data) == {"rfqId", "claimToken", "status", "quote", "transactions", "routing"}, (
        sorted(data)
    )
    assert str(data["rfqId"]).startswith("rfq_"), data["rfqId"]
    assert str(data["claimToken"]).startswith("rfqc_"), data["claimToken"]
    assert set(data["routing"]) == ROUTING_FIELDS, data["routing"]
    quote = data["quote"]
    assert set(quote) == QUOTE_FIELDS, sorted(set(quote) ^ QUOTE_FIELDS)
    sell_token, buy_token = chain.token(sell), chain.token(buy)
    reactor = chain.reactor
    for name in ("sellAmount", "buyAmount", "feeAmount", "takerPays", "rateRay"):
        atomic(quote[name], f"quote.{name}")
    assert quote["reactor"] == reactor, (quote["reactor"], reactor)
    assert quote["spender"] == reactor, "no vault orders here: the spender is the reactor"
    assert quote["taker"] == to_checksum_address(taker), (quote["taker"], taker)

    entries = quote["orders"]
    assert isinstance(entries, list), quote
    assert entries, quote
    orders: list[RfqOrder] = []
    for entry in entries:
        assert set(entry) == ORDER_ENTRY_FIELDS, sorted(entry)
        order = decode_order(hex_bytes(entry["encodedOrder"]))
        orders.append(order)
        assert order.reactor == reactor, order
        assert order.taker == to_checksum_address(taker), "the order is bound to the taker"
        assert order.maker == entry["maker"], (order.maker, entry["maker"])
        assert order.inputToken == buy_token.address, "the maker gives the buy token"
        assert order.outputToken == sell_token.address, "the maker receives the sell token"
        assert atomic(entry["buyAmount"]) == order.inputAmount, entry
        assert atomic(entry["feeAmount"]) == order.feeAmount == fee_on(order.outputAmount), (
            f"fee must be 5 bps of the maker output, rounded down: {entry!r} {order!r}"
        )
        assert atomic(entry["sellAmount"]) == order.outputAmount + order.feeAmount, entry
        assert len(hex_bytes(entry["signature"])) == 65, entry["signature"]
    assert quote["encodedOrder"] == entries[0]["encodedOrder"], "first order only"
    assert quote["signature"] == entries[0]["signature"], "first order only"

    taker_pays = int(quote["takerPays"])
    bought = int(quote["buyAmount"])
    assert bought == sum(o.inputAmount for o in orders), "buyAmount = what the makers give"
    assert int(quote["feeAmount"]) == sum(o.feeAmount for o in orders), "fee = sum of orders'"
    assert taker_pays == sum(o.outputAmount + o.feeAmount for o in orders), (
        "takerPays = every order's output plus its fee"
    )
    if sell_amount is not None:
        assert int(quote["sellAmount"]) == sell_amount, "exact input: sellAmount is the request"
        assert taker_pays <= sell_amount, "takerPays never exceeds the requested sellAmount"
        assert sell_amount - taker_pays <= 2 * len(orders) + 1, (
            f"takerPays {taker_pays} sits more than an atomic unit or so under {sell_amount}"
        )
    if buy_amount is not None:
        assert bought == buy_amount, "exact output: buyAmount is exactly the request"
        assert taker_pays <= int(quote["sellAmount"]), quote
    assert int(quote["rateRay"]) == rate_ray(
        taker_pays, sell_token.decimals, bought, buy_token.decimals
    ), "rateRay = buy per sell (decimal-normalized), RAY-scaled"

    expires = iso_seconds(quote["expiresAt"])
    deadline = iso_seconds(quote["orderDeadline"])
    latest = iso_seconds(quote["latestOrderDeadline"])
    assert deadline == min(o.deadline for o in orders), (quote["orderDeadline"], orders)
    assert latest == max(o.deadline for o in orders), (quote["latestOrderDeadline"], orders)
    assert expires <= deadline <= latest, quote
    if len({o.maker for o in orders}) == 1 and len(orders) == 1:
        assert quote["latestOrderDeadline"] == quote["orderDeadline"], quote

    transactions = data["transactions"]
    assert set(transactions) == {"approval", "swap"}, transactions
    for tx in transactions.values():
        assert set(tx) == {"to", "data", "value", "chainId"}, tx
        assert tx["value"] == "0", tx
        assert tx["chainId"] == chain.chain_id, tx
    approval = transactions["approval"]
    assert approval["to"] == sell_token.address, approval
    assert hex_bytes(approval["data"]) == erc20_approve(reactor, taker_pays), (
        "approval approves takerPays of the sell token to the reactor"
    )
    swap = transactions["swap"]
    assert swap["to"] == reactor, swap
    signed = decode_swap(hex_bytes(swap["data"]))
    assert signed == [(hex_bytes(e["encodedOrder"]), hex_bytes(e["signature"])) for e in entries], (
        "transactions.swap executes every order of the quote"
    )
    if len(orders) > 1:
        assert hex_bytes(swap["data"])[:4] == EXECUTE_BATCH, "a bundle is one batch execution"
    return CheckedQuote(dict(data), orders)


def assert_settled(
    before: Balances,
    after: Balances,
    chain: ChainInfo,
    checked: CheckedQuote,
    *,
    taker: str,
    sell: str,
    buy: str,
) -> None:
    """Exact on-chain movements of a filled quote: the taker paid takerPays and received
    buyAmount, each maker received its orders' outputs and gave their inputs, and the fee
    recipient received the fee."""
    sell_address, buy_address = chain.token(sell).address, chain.token(buy).address
    assert before.delta(after, sell_address, taker) == -checked.taker_pays, "taker paid"
    assert before.delta(after, buy_address, taker) == checked.buy_amount, "taker received"
    assert before.delta(after, sell_address, chain.fee_recipient) == checked.fee_amount, "fee"
    assert before.delta(after, buy_address, chain.fee_recipient) == 0, "fee is in the sell token"
    for maker in dict.fromkeys(checked.makers):
        mine = [o for o in checked.orders if o.maker == maker]
        assert before.delta(after, sell_address, maker) == sum(o.outputAmount for o in mine)
        assert before.delta(after, buy_address, maker) == -sum(o.inputAmount for o in mine)


def assert_filled_record(
    record: Mapping[str, Any], checked: CheckedQuote, *, tx_hash: str | None = None
) -> None:
    """GET /v2/rfq/{id} of a filled RFQ: the settled amounts, the fill's hash, no secrets."""
    assert set(record) == RECORD_FIELDS, sorted(set(record) ^ RECORD_FIELDS)
    assert record["status"] == "filled", record
    assert record["rfqId"] == checked.data["rfqId"], record
    assert record["sellAmount"] == str(checked.taker_pays), "sellAmount = what left the taker"
    assert record["buyAmount"] == str(checked.buy_amount), "buyAmount = what the taker received"
    assert record["feeAmount"] == str(checked.fee_amount), "feeAmount = what the fee took"
    assert record["failReason"] is None, record
    parse_iso_utc(record["filledAt"])
    if tx_hash is not None:
        assert str(record["txHash"]).lower() == tx_hash.lower(), (record["txHash"], tx_hash)


class Janitor:
    """Firm quotes a test leaves live, cancelled when it ends: their reservation on the makers'
    inventory would otherwise show up as ``reservedUntil`` in later tests' no-quotes."""

    def __init__(self) -> None:
        self.quotes: list[tuple[Client, dict[str, Any]]] = []

    def keep(self, client: Client, data: Mapping[str, Any]) -> dict[str, Any]:
        if data.get("status") == "quoted":
            self.quotes.append((client, dict(data)))
        return dict(data)

    def cleanup(self) -> None:
        for client, data in self.quotes:
            with contextlib.suppress(Exception):
                cancel(client, str(data["rfqId"]), str(data["claimToken"]))
        self.quotes.clear()


@contextlib.contextmanager
def janitor() -> Iterator[Janitor]:
    keeper = Janitor()
    try:
        yield keeper
    finally:
        keeper.cleanup()


# -- levels -------------------------------------------------------------------------------


def ladder(client: Client, chain_id: int) -> dict[str, Any]:
    data: dict[str, Any] = assert_data(client.get("/v2/rfq/levels", params={"chainId": chain_id}))
    return data


def ladder_pair(data: Mapping[str, Any], sell: str, buy: str) -> dict[str, Any]:
    for pair in data["pairs"]:
        if pair["sellToken"].lower() == sell.lower() and pair["buyToken"].lower() == buy.lower():
            return dict(pair)
    raise AssertionError(f"no ladder pair {sell} -> {buy}: {data!r}")


def wait_ladder(
    client: Client,
    chain_id: int,
    predicate: Callable[[dict[str, Any]], bool],
    *,
    timeout: float = WAIT_TIMEOUT,
    what: str = "the ladder to reflect the makers' change",
) -> dict[str, Any]:
    """Poll GET /v2/rfq/levels until ``predicate(data)``; returns that ladder."""

    def probe() -> dict[str, Any] | None:
        data = ladder(client, chain_id)
        return data if predicate(data) else None

    return wait_for(probe, timeout=timeout, interval=0.25, what=what)


# -- the simulated maker fleet ------------------------------------------------------------

# What PATCH /_sim/makers/{name} accepts, i.e. what a restore must put back.
_PATCHABLE = (
    "behaviour",
    "latency",
    "spread_bps",
    "impact_bps",
    "max_inventory_fraction",
    "flaky_decline_fraction",
    "mids",
    "quote_ttl_ms",
    "deadline_slack_s",
)
# Changes that move a maker's published levels (not just its replies).
_PRICING = frozenset({"spread_bps", "impact_bps", "max_inventory_fraction", "mids"})
REPUBLISH_S = 0.6
FAST = {"behaviour": "normal", "latency": {"kind": "fixed", "ms": 5}}


class Fleet:
    """The simulated makers (``/_sim/makers``): reconfigured by a test, restored after it."""

    def __init__(self, sim: SimControl) -> None:
        self.sim = sim
        self.saved: dict[str, dict[str, Any]] = {}
        self.wallets: dict[str, str] = {}
        self.touched: set[str] = set()
        self.repriced = False  # a change that moves published levels was made
        for member in self.members():
            name = str(member["name"])
            config = member["config"]
            self.saved[name] = {k: config[k] for k in _PATCHABLE if k in config}
            self.wallets[name] = to_checksum_address(member["wallet"])

    def members(self) -> list[dict[str, Any]]:
        data = self.sim.call("GET", "makers")
        fleet: list[dict[str, Any]] = data["fleet"]
        return fleet

    def online(self) -> list[dict[str, Any]]:
        data = self.sim.call("GET", "makers")
        online: list[dict[str, Any]] = data["online"]
        return online

    def member(self, name: str) -> dict[str, Any]:
        for member in self.members():
            if member["name"] == name:
                return member
        raise KeyError(name)

    def rfqs_seen(self) -> dict[str, int]:
        """How many firm requests each simulated maker has received so far."""
        return {str(m["name"]): int(m["stats"]["rfqs"]) for m in self.members()}

    def live_quotes(self) -> dict[str, int]:
        """How many of its signed quotes each simulated maker still holds inventory for."""
        return {str(m["name"]): int(m["live_quotes"]) for m in self.members()}

    @property
    def names(self) -> list[str]:
        return sorted(self.saved)

    def wallet(self, name: str) -> str:
        return self.wallets[name]

    def name_of(self, wallet: str) -> str:
        for name, address in self.wallets.items():
            if address.lower() == wallet.lower():
                return name
        raise KeyError(wallet)

    def patch(self, name: str, **changes: Any) -> None:
        self.touched.add(name)
        if _PRICING & changes.keys() or changes.get("behaviour") == "underfunded":
            self.repriced = True
        self.sim.call("PATCH", f"makers/{name}", changes)

    def only(self, config: Mapping[str, Mapping[str, Any]]) -> None:
        """Makers named in ``config`` get those changes (and go online); the rest go offline."""
        for name in self.names:
            if name in config:
                self.patch(name, **{**config[name], "online": True})
            else:
                self.patch(name, online=False)

    def wait_levels(self, names: Iterable[str], *, timeout: float = WAIT_TIMEOUT) -> None:
        """Wait until each named maker is connected with fresh levels on every pair."""
        wanted = {self.wallets[n].lower() for n in names}

        def probe() -> bool | None:
            by_wallet: dict[str, set[str]] = {}
            for entry in self.online():
                if entry["pairs_with_levels"] > 0:
                    by_wallet.setdefault(entry["wallet"].lower(), set()).add(entry["environment"])
            ready = all(by_wallet.get(w) == {"live", "test"} for w in wanted)
            return True if ready else None

        wait_for(probe, timeout=timeout, what=f"fresh levels from {sorted(names)}")

    def restore(self) -> None:
        for name in sorted(self.touched):
            self.sim.call("PATCH", f"makers/{name}", {**self.saved[name], "online": True})
        if self.touched:
            self.wait_levels(self.touched)
        if self.repriced:
            # A reconfigured maker republishes at once, but the server coalesces levels to one
            # update per 400 ms: let the restored levels land before the next test reads them.
            time.sleep(REPUBLISH_S)
        self.touched.clear()
        self.repriced = False


@contextlib.contextmanager
def controlled_fleet(sim: SimControl) -> Iterator[Fleet]:
    """The fleet for one test: its configs recorded first and restored (online) after. Waits
    for fresh levels from every online maker first (a clock advance by an earlier test makes
    all levels stale until the makers republish, about a second)."""
    fleet = Fleet(sim)
    try:
        fleet.wait_levels([str(m["name"]) for m in fleet.members() if m.get("online")])
        yield fleet
    finally:
        fleet.restore()


@contextlib.contextmanager
def faults(sim: SimControl, **switches: Any) -> Iterator[None]:
    """POST /_sim/faults with ``switches`` for the duration; DELETE /_sim/faults after."""
    try:
        sim.call("POST", "faults", switches)
        yield
    finally:
        sim.call("DELETE", "faults")


@contextlib.contextmanager
def limits(sim: SimControl, **values: Any) -> Iterator[dict[str, Any]]:
    """PUT /_sim/limits with ``values`` for the duration; the previous values after."""
    before = sim.limits()
    try:
        yield sim.set_limits(**values)
    finally:
        sim.set_limits(**{k: before[k] for k in values})
