"""What a run lends from the QA team's wallet, and giving it back.

Tests fund fresh makers and takers from the last taker wallet given
(:func:`conformance.deployment.funding. fund_wallet`). Each such wallet is a loan: the process that
made it appends one line to its ledger (the chain, the lender's address, the borrower's throwaway
key and the chain's tokens) the moment it is funded, in a directory of the run's own under the
temporary directory (mode 0700, files 0600). At the end of the run, and on Ctrl-C, the controller
(the only process without xdist) gives everything back once every worker is done: each borrower
sends its whole balance of every token of the chain to the lender, then its native coin less the gas
of that transfer; a borrower without the gas for its token transfers gets it from the lender first.
The ledger is removed once paid back.

A run that was killed before it could pay back leaves its directory; the next run finds it
(its lock is free) and pays it back before it starts. Keys of the QA team's own wallets are
never written: a ledger holds the addresses of lenders and the keys of wallets the suite made.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from conformance.deployment.run_cost import COIN, amounts_text
from conformance.deployment.venue import Token
from conformance.wire.chain import Chain, TxFailed, erc20_transfer
from conformance.wire.inputs import parse_wallet
from rfqkit.json_rpc import RpcError
from rfqkit.wallets import Wallet

ROOT_NAME = "rfqsim-conformance-loans"
LOCK_NAME = ".lock"
TOKEN_TRANSFER_GAS = 100_000  # the gas a borrower is given per token it sends back
NATIVE_TRANSFER_GAS = 21_000
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def loans_root() -> Path:
    return Path(tempfile.gettempdir()) / ROOT_NAME


@dataclass(frozen=True)
class Loan:
    """One funded wallet: on which chain, from whom, which tokens the chain has."""

    chain_id: int
    rpc_url: str
    lender: str  # address
    borrower: Wallet
    tokens: tuple[Token, ...]  # every token of the chain, not only those lent
    lent: Mapping[str, int] = field(default_factory=dict)  # atomic amounts by token address
    native: int = 0  # wei lent
    test: str = ""  # the test that funded it (pytest's node id), for the cost per area

    def to_json(self) -> dict[str, Any]:
        return {
            "chain_id": self.chain_id,
            "rpc_url": self.rpc_url,
            "lender": self.lender,
            "borrower_key": self.borrower.private_key,
            "lent": {address: str(amount) for address, amount in self.lent.items()},
            "native": str(self.native),
            "test": self.test,
            "tokens": [
                {
                    "address": t.address,
                    "symbol": t.symbol,
                    "decimals": t.decimals,
                    "usdt_like": t.usdt_like,
                }
                for t in self.tokens
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Loan:
        return cls(
            chain_id=int(data["chain_id"]),
            rpc_url=str(data["rpc_url"]),
            lender=str(data["lender"]),
            borrower=parse_wallet(str(data["borrower_key"])),
            tokens=tuple(
                Token(str(t["symbol"]), str(t["address"]), int(t["decimals"]), t["usdt_like"])
                for t in data["tokens"]
            ),
            lent={str(a): int(v) for a, v in (data.get("lent") or {}).items()},
            native=int(data.get("native") or 0),
            test=str(data.get("test") or ""),
        )

    def lent_json(self) -> dict[str, Any]:
        """What was lent, for the report (no key)."""
        known = {t.address.lower(): t for t in self.tokens}
        tokens = {}
        for address, amount in self.lent.items():
            token = known.get(address.lower())
            if token is not None:
                tokens[token.symbol] = f"{Decimal(amount).scaleb(-token.decimals).normalize():f}"
        return {
            "test": self.test,
            "chain_id": self.chain_id,
            "borrower": self.borrower.address,
            "tokens": tokens,  # whole tokens
            "native": f"{Decimal(self.native).scaleb(-18).normalize():f}",  # whole coin
        }


@dataclass
class Repayment:
    """What one borrower sent back (atomic amounts by token address, native in wei), or why it
    could not."""

    chain_id: int
    lender: str
    borrower: str
    checked: tuple[Token, ...] = ()  # every token of the chain, each read before paying back
    tokens: dict[Token, int] = field(default_factory=dict)  # atomic amounts sent back
    native: int = 0
    gas_given: int = 0  # native the lender sent the borrower first, to pay its transfers
    error: str | None = None
    chain_gone: bool = False  # a simulator's own chain (loopback) that no longer answers

    def to_json(self) -> dict[str, Any]:
        return {
            "chain_id": self.chain_id,
            "lender": self.lender,
            "borrower": self.borrower,
            "tokens": {
                t.symbol: {"address": t.address, "amount": str(self.tokens.get(t, 0))}
                for t in self.checked
            },
            "native": str(self.native),
            "gas_given": str(self.gas_given),
            "error": self.error,
        }


class Ledger:
    """This process's ledger file in the run's directory; `lent()` appends and flushes one line
    per loan, so a process killed right after funding a wallet still left it written."""

    def __init__(self, directory: Path, name: str) -> None:
        self.path = directory / f"{name}.jsonl"
        self._file: IO[str] | None = None

    def lent(self, loan: Loan) -> None:
        if self._file is None:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._file = os.fdopen(descriptor, "a", encoding="utf-8")
        self._file.write(json.dumps(loan.to_json()) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


_LEDGER: Ledger | None = None


def open_ledger(directory: Path, name: str) -> None:
    """From here on, this process records its loans in ``directory`` (the run's)."""
    global _LEDGER
    close_ledger()
    _LEDGER = Ledger(directory, name)


def close_ledger() -> None:
    global _LEDGER
    if _LEDGER is not None:
        _LEDGER.close()
    _LEDGER = None


def record(
    chain: Chain,
    lender: Wallet,
    borrower: Wallet,
    tokens: tuple[Token, ...],
    lent: Mapping[str, int],
    native: int = 0,
) -> None:
    """A wallet the suite made is funded by ``lender`` with ``lent`` (atomic amounts by token
    address) and ``native`` wei: note it (nothing without a ledger, as in a helper used outside
    a pytest run)."""
    if _LEDGER is None or lender.address.lower() == borrower.address.lower():
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    loan = Loan(chain.chain_id, chain.url, lender.address, borrower, tokens, lent, native, test)
    _LEDGER.lent(loan)


# -- the run's directory ----------------------------------------------------------------------


class RunLoans:
    """The run's loans directory, locked for as long as the run lives."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock: IO[str] | None = None

    @classmethod
    def create(cls, root: Path | None = None) -> RunLoans:
        base = root or loans_root()
        base.mkdir(mode=0o700, exist_ok=True)
        directory = base / secrets.token_hex(8)
        directory.mkdir(mode=0o700)
        run = cls(directory)
        run._lock = (directory / LOCK_NAME).open("a")
        fcntl.flock(run._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return run

    def loans(self) -> list[Loan]:
        return read_loans(self.directory)

    def release(self) -> None:
        """Remove the directory (its loans are paid back) and drop the lock."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.close()

    def close(self) -> None:
        """Drop the lock and keep the directory: the next run pays back what is left."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def read_loans(directory: Path) -> list[Loan]:
    found: list[Loan] = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, KeyError, TypeError):
                found.append(Loan.from_json(json.loads(line)))
    return found


@contextlib.contextmanager
def _claimed(directory: Path) -> Iterator[bool]:
    """Whether no live run holds ``directory`` (its lock taken for the ``with`` block)."""
    try:
        lock = (directory / LOCK_NAME).open("a")
    except OSError:
        yield False
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True


def abandoned_runs(root: Path | None = None) -> list[Path]:
    """Directories of runs that ended without paying back (their lock is free)."""
    base = root or loans_root()
    if not base.is_dir():
        return []
    found = []
    for directory in sorted(p for p in base.iterdir() if p.is_dir()):
        with _claimed(directory) as free:
            if free:
                found.append(directory)
    return found


# -- paying back -------------------------------------------------------------------------------


def repay(
    loans: list[Loan],
    lender_wallet: Callable[[str], Wallet | None],
    *,
    chain_of: Callable[[Loan], Chain] | None = None,
) -> list[Repayment]:
    """Every borrower's balances back to its lender; never raises (a chain that is gone, a
    transfer that fails: the repayment says why). ``lender_wallet`` finds the given wallet by
    address, for the gas a borrower lacks."""
    make_chain = chain_of or (lambda loan: Chain(loan.rpc_url, loan.chain_id))
    done: list[Repayment] = []
    seen: set[tuple[int, str]] = set()
    for loan in loans:
        key = (loan.chain_id, loan.borrower.address.lower())
        if key in seen:
            continue
        seen.add(key)
        repayment = Repayment(loan.chain_id, loan.lender, loan.borrower.address, loan.tokens)
        try:
            _repay_one(make_chain(loan), loan, lender_wallet(loan.lender), repayment)
        except (OSError, RpcError, TxFailed, AssertionError, ValueError) as exc:
            repayment.error = f"{type(exc).__name__}: {exc}"[:300]
            host = urllib.parse.urlsplit(loan.rpc_url).hostname or ""
            unreachable = isinstance(exc, OSError) or (
                isinstance(exc, RpcError) and not exc.reachable
            )
            repayment.chain_gone = unreachable and host in LOOPBACK
        done.append(repayment)
    return done


def _repay_one(chain: Chain, loan: Loan, lender: Wallet | None, repayment: Repayment) -> None:
    """One price for every transaction here, the node's ``eth_gasPrice`` read once: the coin
    left is then known to the wei, and the borrower ends with none. Never more than the node
    asks: a node suggests a price from the tips recent blocks paid, so paying above it raises
    the next suggestion, for every sender of the chain."""
    borrower = loan.borrower
    held = {t: chain.balance_of(t.address, borrower.address) for t in loan.tokens}
    held = {t: amount for t, amount in held.items() if amount > 0}
    price = int(str(chain.rpc("eth_gasPrice")), 16)
    needed = len(held) * TOKEN_TRANSFER_GAS * price  # what is left after is sent back too
    native = chain.native_balance(borrower.address)
    if held and native < needed:
        if lender is None:
            raise ValueError(
                f"{borrower.address} holds tokens but no gas to send them back, and the lender "
                f"{loan.lender} is not among the given wallets"
            )
        chain.transact(
            lender,
            borrower.address,
            value=needed - native,
            gas=NATIVE_TRANSFER_GAS,
            gas_price=price,
        )
        repayment.gas_given = needed - native
    for token, amount in held.items():
        data = erc20_transfer(loan.lender, amount)
        chain.transact(borrower, token.address, data, gas=TOKEN_TRANSFER_GAS, gas_price=price)
        repayment.tokens[token] = amount
    left = chain.native_balance(borrower.address) - NATIVE_TRANSFER_GAS * price
    if left > 0:
        chain.transact(borrower, loan.lender, value=left, gas=NATIVE_TRANSFER_GAS, gas_price=price)
        repayment.native = left


# -- the run's side: start, finish, say what went back -----------------------------------------


class RunLender:
    """The controller's part (the only process without xdist): the run's directory, opened at
    the start (after paying back what killed runs left) and paid back at the end."""

    def __init__(self, run: RunLoans, wallets: Sequence[Wallet]) -> None:
        self.run = run
        self._wallets = {w.address.lower(): w for w in wallets}

    @classmethod
    def start(
        cls, wallets: Sequence[Wallet], root: Path | None = None
    ) -> tuple[RunLender, list[Repayment]]:
        """The run's lender and what earlier runs that were killed left, now paid back."""
        lender = cls(RunLoans.create(root), wallets)
        earlier: list[Repayment] = []
        for directory in abandoned_runs(root):
            if directory == lender.run.directory:
                continue
            repaid = repay(read_loans(directory), lender.wallet)
            earlier += repaid
            if all(r.error is None or r.chain_gone for r in repaid):
                shutil.rmtree(directory, ignore_errors=True)
        open_ledger(lender.run.directory, "main")
        return lender, earlier

    def wallet(self, address: str) -> Wallet | None:
        return self._wallets.get(address.lower())

    def finish(self) -> tuple[list[Loan], list[Repayment]]:
        """Everything the run lent, and given back once no process of the run lends any more.
        The directory stays (for the next run) when a borrower on a chain that still answers
        could not pay back."""
        close_ledger()
        lent = self.run.loans()
        repaid = repay(lent, self.wallet)
        if all(r.error is None or r.chain_gone for r in repaid):
            self.run.release()
        else:
            self.run.close()
        return lent, repaid


def summary(repaid: Sequence[Repayment], *, earlier: bool = False) -> list[str]:
    """Lines for the terminal: what went back to whom, and what could not."""
    if not repaid:
        return []
    what = "an earlier run's loans" if earlier else "loans"
    back: dict[tuple[str, str, int], int] = {}
    for r in repaid:
        for token, amount in r.tokens.items():
            key = (r.lender, token.symbol, token.decimals)
            back[key] = back.get(key, 0) + amount
    lenders = sorted({r.lender for r in repaid if r.error is None})
    lines = []
    for lender in lenders:
        paid = [r for r in repaid if r.lender == lender and r.error is None]
        amounts = {
            symbol: Decimal(amount).scaleb(-decimals)
            for (who, symbol, decimals), amount in back.items()
            if who == lender
        }
        amounts[COIN] = Decimal(sum(r.native - r.gas_given for r in paid)).scaleb(-18)
        lines.append(
            f"{what}: {len(paid)} wallet(s) gave back to {lender}: {amounts_text(amounts)} "
            "(coin net of the gas given)"
        )
    gone = [r for r in repaid if r.chain_gone]
    if gone:
        lines.append(f"{what}: {len(gone)} wallet(s) on chains that are gone, nothing given back")
    for r in repaid:
        if r.error is not None and not r.chain_gone:
            lines.append(f"{what}: {r.borrower} could not give back: {r.error}")
    return lines


def write_json(path: Path, lent: Sequence[Loan], repaid: Sequence[Repayment]) -> None:
    """``loans.json``: what each test lent (no keys) and what each wallet gave back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "lent": [loan.lent_json() for loan in lent],
        "given_back": [r.to_json() for r in repaid],
    }
    path.write_text(json.dumps(body, indent=2) + "\n")
