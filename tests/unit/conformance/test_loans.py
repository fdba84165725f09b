"""conformance/deployment/loans.py: the ledger a run writes as it funds wallets, paying back through
a fake chain (balances in memory, transfers move them), and what a killed run left."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_utils.address import to_checksum_address

from conformance.deployment import loans
from conformance.deployment.venue import Token
from conformance.wire.chain import selector
from rfqkit.wallets import Wallet

USDT = Token("USDT", to_checksum_address("0x" + "11" * 20), 6, usdt_like=True)
NGNS = Token("NGNS", to_checksum_address("0x" + "22" * 20), 6, usdt_like=False)
GAS_PRICE = 10**9  # the node's eth_gasPrice


class FakeChain:
    """ERC-20 balances and native coin in memory; a transaction costs its gas limit."""

    def __init__(self, chain_id: int = 56, url: str = "http://chain.example:8545") -> None:
        self.chain_id = chain_id
        self.url = url
        self.tokens: dict[tuple[str, str], int] = {}
        self.native: dict[str, int] = {}
        self.sent: list[tuple[str, str, str, int]] = []  # (kind, from, to, amount)

    def rpc(self, method: str, params: list[Any] | None = None) -> Any:
        assert method == "eth_gasPrice", method
        return hex(GAS_PRICE)

    def balance_of(self, token: str, owner: str) -> int:
        return self.tokens.get((token, owner), 0)

    def native_balance(self, owner: str) -> int:
        return self.native.get(owner, 0)

    def _pay_gas(self, wallet: Wallet, gas: int, price: int) -> None:
        cost = gas * price
        assert self.native_balance(wallet.address) >= cost, f"{wallet.address} has no gas"
        self.native[wallet.address] -= cost

    def transact(
        self,
        wallet: Wallet,
        to: str | None,
        data: bytes = b"",
        *,
        value: int = 0,
        gas: int = 0,
        gas_price: int = GAS_PRICE,
    ) -> dict[str, Any]:
        assert to is not None
        self._pay_gas(wallet, gas, gas_price)
        if data:  # an ERC-20 transfer(to, amount)
            assert data[:4] == selector("transfer(address,uint256)")
            recipient, amount = abi_decode(["address", "uint256"], data[4:])
            recipient = to_checksum_address(recipient)
            assert self.balance_of(to, wallet.address) >= amount
            self.tokens[(to, wallet.address)] -= amount
            self.tokens[(to, recipient)] = self.balance_of(to, recipient) + amount
            self.sent.append(("token", wallet.address, recipient, amount))
            return {"status": "0x1"}
        assert self.native_balance(wallet.address) >= value
        self.native[wallet.address] -= value
        self.native[to] = self.native_balance(to) + value
        self.sent.append(("native", wallet.address, to, value))
        return {"status": "0x1"}


def _loan(chain: FakeChain, lender: Wallet, borrower: Wallet) -> loans.Loan:
    return loans.Loan(chain.chain_id, chain.url, lender.address, borrower, (USDT, NGNS))


def test_a_borrower_sends_every_token_and_its_coin_back_and_gets_gas_when_it_has_none() -> None:
    chain = FakeChain()
    lender, taker, maker = Wallet.create(), Wallet.create(), Wallet.create()
    chain.native[lender.address] = 10**18
    # The taker sold USDT for NGNS and has no coin; the maker kept some coin it was lent.
    chain.tokens[(USDT.address, taker.address)] = 2_000_000
    chain.tokens[(NGNS.address, taker.address)] = 3_100_000_000
    chain.tokens[(NGNS.address, maker.address)] = 500
    chain.native[maker.address] = 10**17
    repaid = loans.repay(
        [_loan(chain, lender, taker), _loan(chain, lender, maker), _loan(chain, lender, taker)],
        lambda address: lender if address == lender.address else None,
        chain_of=lambda loan: chain,  # type: ignore[arg-type,return-value]
    )
    assert [r.error for r in repaid] == [None, None]  # the taker once, though lent twice
    for borrower in (taker, maker):
        assert chain.balance_of(USDT.address, borrower.address) == 0
        assert chain.balance_of(NGNS.address, borrower.address) == 0
        assert chain.native_balance(borrower.address) == 0  # all of it, less the last gas
    assert chain.balance_of(USDT.address, lender.address) == 2_000_000
    assert chain.balance_of(NGNS.address, lender.address) == 3_100_000_500
    taker_back = repaid[0]
    assert taker_back.gas_given == 2 * loans.TOKEN_TRANSFER_GAS * GAS_PRICE  # none to spare
    assert taker_back.tokens == {USDT: 2_000_000, NGNS: 3_100_000_000}
    assert repaid[1].gas_given == 0  # the maker paid with its own coin
    assert repaid[1].native == 10**17 - (loans.TOKEN_TRANSFER_GAS + 21_000) * GAS_PRICE
    lines = loans.summary(repaid)
    assert lines[0].startswith(f"loans: 2 wallet(s) gave back to {lender.address}: ")
    assert lines[0].endswith(": NGNS 3,100, USDT 2, coin 0.1 (coin net of the gas given)")


def test_a_borrower_without_gas_whose_lender_was_not_given_says_so() -> None:
    chain = FakeChain()
    lender, taker = Wallet.create(), Wallet.create()
    chain.tokens[(USDT.address, taker.address)] = 5
    repaid = loans.repay(
        [_loan(chain, lender, taker)],
        lambda address: None,
        chain_of=lambda loan: chain,  # type: ignore[arg-type,return-value]
    )
    assert repaid[0].error is not None
    assert "no gas to send them back" in repaid[0].error
    assert not repaid[0].chain_gone
    assert chain.balance_of(USDT.address, taker.address) == 5
    assert any("could not give back" in line for line in loans.summary(repaid))


def test_a_chain_on_loopback_that_is_gone_is_not_an_error_to_keep() -> None:
    taker = Wallet.create()
    gone = loans.Loan(56, "http://127.0.0.1:9", Wallet.create().address, taker, (USDT,))
    repaid = loans.repay([gone], lambda address: None)
    assert repaid[0].chain_gone, repaid[0].error


def test_the_ledger_is_private_and_written_line_by_line(tmp_path: Path) -> None:
    run = loans.RunLoans.create(tmp_path)
    try:
        assert stat.S_IMODE(run.directory.stat().st_mode) == 0o700
        chain = FakeChain()
        lender, taker = Wallet.create(), Wallet.create()
        loans.open_ledger(run.directory, "gw0")
        lent = {USDT.address: 5_000_000}
        loans.record(chain, lender, taker, (USDT, NGNS), lent, 10**18)  # type: ignore[arg-type]
        loans.record(chain, lender, lender, (USDT,), lent)  # type: ignore[arg-type]  # not a loan
        # Read before the ledger is closed: each line is on disk as soon as it is written.
        (loan,) = run.loans()
        assert (loan.borrower, loan.lender, loan.tokens) == (taker, lender.address, (USDT, NGNS))
        assert (loan.lent, loan.native) == (lent, 10**18)
        assert loan.test == (
            "tests/unit/conformance/test_loans.py::"
            "test_the_ledger_is_private_and_written_line_by_line"
        )
        assert loan.lent_json()["tokens"] == {"USDT": "5"}
        assert loan.lent_json()["native"] == "1"
        path = run.directory / "gw0.jsonl"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert lender.private_key not in path.read_text()
    finally:
        loans.close_ledger()
        run.release()
    assert not run.directory.exists()


def test_a_run_that_died_is_found_by_the_next_one_and_a_live_one_is_not(tmp_path: Path) -> None:
    live = loans.RunLoans.create(tmp_path)
    # A run killed before it paid back: its process (and so its lock) is gone.
    code = (
        "import sys; from pathlib import Path; from conformance.deployment import loans; "
        "run = loans.RunLoans.create(Path(sys.argv[1])); print(run.directory); "
        "import os; os._exit(0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])},
    )
    dead = Path(done.stdout.strip())
    try:
        assert loans.abandoned_runs(tmp_path) == [dead]
    finally:
        live.release()
