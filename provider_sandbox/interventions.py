"""The /sandbox transfer controls: pay in, advance, stall, fail (and refund), cancel. Each runs
under the transfer's lock after catching it up with the clock, and only ever moves it forward."""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal

from provider_sandbox.chain import ChainUnavailable, to_units
from provider_sandbox.core import Sandbox
from provider_sandbox.errors import SandboxConflict, SandboxInvalid, SandboxUnavailable
from provider_sandbox.rates import source_places
from provider_sandbox.state import PROGRESSION, SETTLED, SandboxTransfer
from provider_sandbox.transfers import next_status


async def pay_in(
    sandbox: Sandbox, transfer: SandboxTransfer, mode: str, amount: str | None
) -> None:
    """buy: a bank transfer arrives. sell: the treasury sends the deposit on chain (a shortcut
    for the wallet's own transfer), then the normal on-chain detection sees it."""
    engine = sandbox.engine
    async with engine.lock(transfer):
        await engine.refresh_locked(transfer)
        if transfer.status != "awaiting_funds":
            raise SandboxConflict(f"The transfer is {transfer.status}; it is not waiting for funds")
        now = sandbox.clock.time()
        if mode == "late" and now <= transfer.expires_at:
            raise SandboxConflict(
                "The payment window is still open; advance the clock past expiresAt"
            )
        due = transfer.source_amount - transfer.received
        paid = _pay_in_amount(transfer, mode, amount, due)
        if transfer.side == "buy":
            transfer.received += paid
            if transfer.received >= transfer.source_amount:
                engine.funds_received(transfer, now)
            return
        access = engine.chain(transfer.chain_id)
        assert transfer.deposit_address is not None
        try:
            tx_hash = await access.send_token(
                transfer.deposit_address, to_units(paid, access.chain.token_decimals)
            )
            if not await access.wait_receipt(tx_hash):
                raise SandboxUnavailable(
                    "The deposit transaction reverted (is the treasury funded?)"
                )
        except ChainUnavailable as exc:
            raise SandboxUnavailable(f"The chain did not answer: {exc}") from exc
        await engine.detect_deposit(transfer)


def _pay_in_amount(
    transfer: SandboxTransfer, mode: str, amount: str | None, due: Decimal
) -> Decimal:
    places = source_places(transfer.side)
    if mode != "short":
        return due  # exact and late pay what is still due
    paid = Decimal(amount) if amount is not None else (due / 2).quantize(places, ROUND_DOWN)
    if paid != paid.quantize(places) or paid <= 0 or paid >= due:
        raise SandboxInvalid(f"amount: a short payment is positive and below the {due} still due")
    return paid


async def advance(sandbox: Sandbox, transfer: SandboxTransfer, to: str | None) -> None:
    """One step, or straight to `to` (along the happy path, forward only). Explicit, so it
    also moves a stalled transfer on (its parked balance goes out with it)."""
    engine = sandbox.engine
    async with engine.lock(transfer):
        await engine.refresh_locked(transfer)
        target = to if to is not None else next_status(transfer.status)
        if target is None or transfer.status not in PROGRESSION:
            raise SandboxConflict(f"A transfer that is {transfer.status} has no next step")
        if target not in PROGRESSION:
            raise SandboxInvalid(f"to: one of {', '.join(PROGRESSION[1:])}")
        if PROGRESSION.index(target) <= PROGRESSION.index(transfer.status):
            raise SandboxConflict(f"Statuses only move forward: {transfer.status} is past {target}")
        if transfer.retried_by is not None:
            raise SandboxConflict(f"The payout was retried as {transfer.retried_by}")
        while transfer.status != target:
            now = sandbox.clock.time()
            if transfer.status == "awaiting_funds":
                transfer.received = transfer.source_amount
                engine.funds_received(transfer, now)
            elif not await engine.step(transfer, now, forced=True):
                raise SandboxConflict(f"The transfer cannot leave {transfer.status} now")


async def stall(sandbox: Sandbox, transfer: SandboxTransfer) -> None:
    engine = sandbox.engine
    async with engine.lock(transfer):
        await engine.refresh_locked(transfer)
        if transfer.status not in PROGRESSION[:3]:
            raise SandboxConflict(f"A transfer that is {transfer.status} is past funds_converted")
        transfer.stalled = True
        if transfer.status == "funds_converted":
            engine.park(transfer)
            transfer.next_step_at = None


async def fail(sandbox: Sandbox, transfer: SandboxTransfer, refund: bool) -> None:
    engine = sandbox.engine
    async with engine.lock(transfer):
        await engine.refresh_locked(transfer)
        if transfer.status in SETTLED or transfer.status == "failed":
            raise SandboxConflict(f"A transfer that is {transfer.status} cannot fail")
        if transfer.retried_by is not None:
            raise SandboxConflict(f"The payout was retried as {transfer.retried_by}")
        now = sandbox.clock.time()
        engine.unpark(transfer)
        transfer.failure_reason = "The provider could not complete this transfer"
        transfer.next_step_at = None
        engine.move(transfer, "failed", now)
        if refund:
            transfer.refund_due_at = now + sandbox.state.settings.step_delay_s


async def cancel(sandbox: Sandbox, transfer: SandboxTransfer) -> None:
    engine = sandbox.engine
    async with engine.lock(transfer):
        await engine.refresh_locked(transfer)
        if transfer.status != "awaiting_funds" or transfer.received > 0:
            raise SandboxConflict("Only a transfer still waiting for funds can be cancelled")
        engine.move(transfer, "cancelled")
