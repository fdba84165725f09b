"""The ramp's three user emails (spec 2-ramp-v2 "Behaviour" 4; RA24), the outbox that keeps
every one of them (`/_sim/outbox`), and optional delivery to an SMTP server (`--smtp HOST:PORT`).

- `instructions` at creation, with the link reopening the transfer;
- `funds_received` the first time the provider says the money arrived;
- `result` once per outcome: COMPLETED, FAILED, REFUNDED, CANCELLED, EXPIRED.

A transfer without an email address gets none. SMTP runs in a worker thread through `smtplib`
so a slow mail server never holds up a transfer; a failed SMTP send is logged and recorded on
the outbox entry (the outbox copy is never lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import smtplib
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Literal

from rfqkit.timestamps import isoformat_unix
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.ramp.model import RESULT_STATUSES, TransferRecord
from simulator.services.shared.state import StateSchema

log = logging.getLogger("rfqsim.ramp.emails")

EmailKind = Literal["instructions", "funds_received", "result"]
SmtpState = Literal["not_configured", "queued", "sent", "failed"]
SENDER = "ramp@rfqsim.local"


@dataclass
class EmailRecord:
    id: str  # eml_...
    to: str
    kind: EmailKind
    transfer_id: str
    status: str  # the transfer status the email reports
    subject: str
    body: str
    at: float  # unix seconds, simulator clock
    smtp: SmtpState = "not_configured"  # delivery to the SMTP server, when one is configured
    smtp_error: str | None = None  # why the SMTP send failed


def _amounts(record: TransferRecord) -> str:
    source = record.fiat if record.side == "buy" else record.token
    target = record.token if record.side == "buy" else record.fiat
    return f"{record.source_amount} {source} -> {record.target_amount} {target}"


def _pay_in_lines(record: TransferRecord) -> list[str]:
    pay_in = record.pay_in
    if pay_in.get("type") == "temporary_bank_account":
        details = pay_in.get("recipient_details") or {}
        return [
            f"Pay {record.source_amount} {record.fiat} by bank transfer to:",
            f"  Bank: {details.get('bank_name', '')}",
            f"  Account number: {details.get('account_number', '')}",
            f"  Account name: {details.get('account_name', '')}",
        ]
    if pay_in.get("type") == "address":
        return [
            f"Send {record.source_amount} {record.token} from your wallet to:",
            f"  Address: {pay_in.get('address', '')} ({pay_in.get('network', '')})",
        ]
    return []


def compose_instructions(record: TransferRecord, reopen_link: str) -> tuple[str, str]:
    subject = f"Your {record.side} {record.id}: payment instructions"
    lines = [
        f"Transfer {record.id} ({_amounts(record)}).",
        *_pay_in_lines(record),
        f"Pay before {isoformat_unix(record.expires_at)}.",
        f"Reopen this transfer at any time: {reopen_link}",
        f"Provider reference: {record.provider_transfer_id}",
    ]
    return subject, "\n".join(lines) + "\n"


def compose_funds_received(record: TransferRecord) -> tuple[str, str]:
    subject = f"Your {record.side} {record.id}: funds received"
    body = (
        f"The provider received your funds for transfer {record.id} ({_amounts(record)}).\n"
        f"Provider reference: {record.provider_transfer_id}\n"
    )
    return subject, body


def compose_result(record: TransferRecord) -> tuple[str, str]:
    subject = f"Your {record.side} {record.id}: {record.status}"
    lines = [f"Transfer {record.id} ({_amounts(record)}) is {record.status}."]
    tx_hash = record.pay_out.get("blockchain_hash")
    if record.status == "COMPLETED" and isinstance(tx_hash, str):
        lines.append(f"Transaction: {tx_hash}")
    lines.append(f"Provider reference: {record.provider_transfer_id}")
    return subject, "\n".join(lines) + "\n"


@dataclass
class SmtpTarget:
    host: str
    port: int
    timeout_s: float = 10.0

    @classmethod
    def parse(cls, value: str) -> SmtpTarget:
        host, _, port = value.rpartition(":")
        return cls(host=host, port=int(port))


def _smtp_send(target: SmtpTarget, email: EmailRecord) -> None:
    message = EmailMessage()
    message["From"] = SENDER
    message["To"] = email.to
    message["Subject"] = email.subject
    message["X-Rfqsim-Transfer"] = email.transfer_id
    message.set_content(email.body, cte="8bit")  # readable as sent (no quoted-printable)
    with smtplib.SMTP(target.host, target.port, timeout=target.timeout_s) as smtp:
        smtp.send_message(message)


@dataclass
class Outbox:
    """Every email the ramp sent, oldest first, and the SMTP queue."""

    clock: Clock
    random: RandomSource
    reopen_url_base: str
    smtp: SmtpTarget | None = None
    emails: list[EmailRecord] = field(default_factory=list)  # everything sent
    _queue: asyncio.Queue[EmailRecord] = field(
        default_factory=asyncio.Queue
    )  # waiting for the SMTP worker

    def reopen_link(self, transfer_id: str, claim_token: str) -> str:
        """RA18: a front-end link; the claim token rides in the fragment, never sent to a server."""
        return (
            f"{self.reopen_url_base.rstrip('/')}/ramp/transfers/{transfer_id}#claim={claim_token}"
        )

    def _send(self, record: TransferRecord, kind: EmailKind, subject: str, body: str) -> None:
        assert record.email is not None
        email = EmailRecord(
            id=self.random.new_id("eml"),
            to=record.email,
            kind=kind,
            transfer_id=record.id,
            status=record.status,
            subject=subject,
            body=body,
            at=self.clock.time(),
            smtp="queued" if self.smtp is not None else "not_configured",
        )
        self.emails.append(email)
        if self.smtp is not None:
            self._queue.put_nowait(email)

    def instructions(self, record: TransferRecord, claim_token: str) -> None:
        if record.email is None or "instructions" in record.emails_sent:
            return
        record.emails_sent.add("instructions")
        link = self.reopen_link(record.id, claim_token)
        self._send(record, "instructions", *compose_instructions(record, link))

    def after_change(self, record: TransferRecord, funds_arrived: bool) -> None:
        """Called after every accepted change of a transfer: the funds note, then the result."""
        if record.email is None:
            return
        if funds_arrived and "funds_received" not in record.emails_sent:
            record.emails_sent.add("funds_received")
            self._send(record, "funds_received", *compose_funds_received(record))
        key = f"result:{record.status}"
        if record.status in RESULT_STATUSES and key not in record.emails_sent:
            record.emails_sent.add(key)
            self._send(record, "result", *compose_result(record))

    def find(self, *, to: str | None = None, transfer_id: str | None = None) -> list[EmailRecord]:
        return [
            e
            for e in self.emails
            if (to is None or e.to.lower() == to.lower())
            and (transfer_id is None or e.transfer_id == transfer_id)
        ]

    def clear(self) -> int:
        count = len(self.emails)
        self.emails.clear()
        return count

    async def deliver_forever(self) -> None:
        """The SMTP worker (started by the ramp background context when --smtp is set)."""
        while True:
            email = await self._queue.get()
            if self.smtp is None:
                self._queue.task_done()
                continue
            try:
                await asyncio.to_thread(_smtp_send, self.smtp, email)
                email.smtp = "sent"
            except (OSError, smtplib.SMTPException) as exc:
                email.smtp = "failed"
                email.smtp_error = f"{type(exc).__name__}: {exc}"
                log.warning("SMTP delivery of %s to %s failed: %s", email.id, email.to, exc)
            finally:
                self._queue.task_done()

    async def drain(self, timeout_s: float = 5.0) -> None:
        """Wait until every queued email was handed to the SMTP server (shutdown, tests)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self._queue.join()


class EmailsSaved(StateSchema):
    """What reset and snapshots put back of the outbox: every email sent."""

    emails: list[EmailRecord]
