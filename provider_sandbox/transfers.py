"""The transfer state machine and its automatic progress.

Statuses only move forward (`can_move`). After the pay-in the transfer takes one step per step
delay of clock time; `refresh` catches up with the clock and is called on every read and by the
background tick, so advancing the clock is enough. A buy's step into `outgoing_payment_sent`
broadcasts the real NGNS payout, and `completed` waits for its receipt; a sell's deposit is
found by reading the deposit address's balance."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from decimal import Decimal

from provider_sandbox.chain import ChainUnavailable, SandboxChainAccess, to_units
from provider_sandbox.clock import SandboxClock
from provider_sandbox.config import SandboxConfig
from provider_sandbox.errors import SandboxConflict, SandboxUnavailable
from provider_sandbox.state import PROGRESSION, SETTLED, SandboxState, SandboxTransfer, StatusEntry
from provider_sandbox.views import transfer_view
from provider_sandbox.webhooks import WebhookSender

log = logging.getLogger("provider_sandbox.transfers")


def can_move(current: str, new: str) -> bool:
    """Forward only: along PROGRESSION, to failed/cancelled before completion (cancelled only
    before funds arrive), refunded only after failed; settled states never change."""
    if current in SETTLED or current == new:
        return False
    if current == "failed":
        return new == "refunded"
    if new == "cancelled":
        return current == "awaiting_funds"
    if new == "failed":
        return current in PROGRESSION
    if new in PROGRESSION and current in PROGRESSION:
        return PROGRESSION.index(new) > PROGRESSION.index(current)
    return False


def next_status(current: str) -> str | None:
    if current in PROGRESSION and current != PROGRESSION[-1]:
        return PROGRESSION[PROGRESSION.index(current) + 1]
    return None


class TransferEngine:
    def __init__(
        self,
        config: SandboxConfig,
        clock: SandboxClock,
        chains: dict[int, SandboxChainAccess],
        webhooks: WebhookSender,
        state: Callable[[], SandboxState],
    ) -> None:
        self._config = config
        self._clock = clock
        self._chains = chains  # chain id -> access (payouts, balances)
        self._webhooks = webhooks  # told of every status change
        self._state = state  # the current state (reset replaces it)
        # One lock per transfer: guards its read-modify-write across chain awaits (a payout
        # broadcast must happen once even when a read and the tick refresh together).
        self._locks: dict[str, asyncio.Lock] = {}

    def lock(self, transfer: SandboxTransfer) -> asyncio.Lock:
        return self._locks.setdefault(transfer.id, asyncio.Lock())

    def forget(self) -> None:
        self._locks.clear()

    def chain(self, chain_id: int) -> SandboxChainAccess:
        access = self._chains.get(chain_id)
        if access is None:
            raise SandboxUnavailable(f"The provider has no connection to chain {chain_id}")
        return access

    # -- status changes --------------------------------------------------------------------

    def move(self, transfer: SandboxTransfer, status: str, at: float | None = None) -> None:
        if not can_move(transfer.status, status):
            raise SandboxConflict(f"A transfer that is {transfer.status} cannot become {status}")
        now = self._clock.time()
        moment = min(at, now) if at is not None else now
        transfer.status = status
        transfer.history.append(StatusEntry(status, moment))
        transfer.updated_at = moment
        state = self._state()
        self._webhooks.emit(transfer.id, status, transfer_view(transfer, state, self._config))

    def funds_received(self, transfer: SandboxTransfer, at: float) -> None:
        transfer.late = at > transfer.expires_at
        self.move(transfer, "funds_received", at)
        transfer.next_step_at = at + self._state().settings.step_delay_s

    def park(self, transfer: SandboxTransfer) -> None:
        """A stalled buy's converted NGNS waits in the customer's balance for a retry."""
        customer = self._state().customers.get(transfer.customer_id or "")
        if transfer.side != "buy" or customer is None or transfer.parked or transfer.retry_of:
            return
        transfer.parked = transfer.target_amount
        customer.balance += transfer.parked

    def unpark(self, transfer: SandboxTransfer) -> None:
        customer = self._state().customers.get(transfer.customer_id or "")
        if customer is not None and transfer.parked:
            customer.balance = max(Decimal(0), customer.balance - transfer.parked)
        transfer.parked = Decimal(0)

    # -- catching up with the clock ----------------------------------------------------------

    async def refresh(self, transfer: SandboxTransfer) -> None:
        async with self.lock(transfer):
            await self.refresh_locked(transfer)

    async def refresh_locked(self, transfer: SandboxTransfer) -> None:
        now = self._clock.time()
        if transfer.status == "failed" and transfer.refund_due_at is not None:
            if now >= transfer.refund_due_at:
                await self._refund(transfer)
            return
        if transfer.status == "awaiting_funds" and transfer.side == "sell":
            await self.detect_deposit(transfer)
        while (
            transfer.next_step_at is not None
            and transfer.status in PROGRESSION
            and now >= transfer.next_step_at
        ):
            if not await self.step(transfer, transfer.next_step_at, forced=False):
                break

    async def step(self, transfer: SandboxTransfer, at: float, *, forced: bool) -> bool:
        """Take the next step after funds arrived; False when it cannot happen yet (stalled,
        chain unreachable; a payout not yet mined is awaited)."""
        new = next_status(transfer.status)
        if new is None or transfer.status == "awaiting_funds":
            return False
        if transfer.status == "funds_converted":
            if transfer.stalled and not forced:
                self.park(transfer)
                transfer.next_step_at = None  # progress stops here until advance/retry
                return False
            self.unpark(transfer)
        try:
            if new == "outgoing_payment_sent" and transfer.side == "buy":
                await self._send_payout(transfer)
            if new == "completed" and transfer.side == "buy":
                # Awaited, not read once: a payout broadcast a moment ago (the step before, in
                # the same tick) is mined within milliseconds, but not always by the time
                # eth_sendRawTransaction answers; a single read then left the transfer at
                # outgoing_payment_sent until the next tick, although its time had come.
                mined = await self._payout_mined(transfer)
                if not mined:
                    transfer.failure_reason = "The payout transaction reverted"
                    self.move(transfer, "failed", at)
                    transfer.next_step_at = None
                    return False
        except ChainUnavailable as exc:
            if forced:
                raise SandboxUnavailable(f"The chain did not answer: {exc}") from exc
            log.warning("transfer %s waits for chain %s: %s", transfer.id, transfer.chain_id, exc)
            return False
        self.move(transfer, new, at)
        step_delay = self._state().settings.step_delay_s
        transfer.next_step_at = None if new == "completed" else at + step_delay
        if new == "funds_converted" and transfer.stalled:
            self.park(transfer)
        return True

    async def _send_payout(self, transfer: SandboxTransfer) -> None:
        if transfer.payout_hash is not None or transfer.destination is None:
            return
        access = self.chain(transfer.chain_id)
        units = to_units(transfer.target_amount, access.chain.token_decimals)
        transfer.payout_hash = await access.send_token(transfer.destination, units)
        transfer.payout_units = units

    async def _payout_mined(self, transfer: SandboxTransfer) -> bool:
        if transfer.payout_hash is None:
            return True  # nothing was to be paid on chain
        return await self.chain(transfer.chain_id).wait_receipt(transfer.payout_hash)

    async def detect_deposit(self, transfer: SandboxTransfer) -> bool:
        """A sell is paid when the deposit address holds sourceAmount more NGNS than at
        creation (the baseline keeps leftovers of an earlier run from counting)."""
        if transfer.deposit_address is None:
            return False
        try:
            access = self.chain(transfer.chain_id)
            (balance,) = await access.balances([transfer.deposit_address])
        except (ChainUnavailable, SandboxUnavailable) as exc:
            log.debug("deposit check of %s failed: %s", transfer.id, exc)  # tick retries
            return False
        decimals = access.chain.token_decimals
        arrived = balance - transfer.deposit_baseline
        transfer.received = Decimal(max(arrived, 0)).scaleb(-decimals)
        if arrived < to_units(transfer.source_amount, decimals):
            return False
        self.funds_received(transfer, self._clock.time())
        return True

    async def _refund(self, transfer: SandboxTransfer) -> None:
        """A sell whose tokens arrived gets them back on chain from the treasury; a buy's
        refund is a (simulated) bank transfer."""
        if transfer.side == "sell" and transfer.received > 0 and transfer.refund_address:
            access = self.chain(transfer.chain_id)
            units = to_units(transfer.received, access.chain.token_decimals)
            try:
                if transfer.refund_hash is None:
                    transfer.refund_hash = await access.send_token(transfer.refund_address, units)
                if not await access.wait_receipt(transfer.refund_hash):
                    log.warning("refund of %s reverted", transfer.id)
                    return
            except ChainUnavailable as exc:
                log.warning("refund of %s waits for the chain: %s", transfer.id, exc)
                return
        assert transfer.refund_due_at is not None
        self.move(transfer, "refunded", transfer.refund_due_at)
        transfer.refund_due_at = None
