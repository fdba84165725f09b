"""Status webhooks to the simulator: signed like Stripe (`t=<unix>,v1=<hex hmac-sha256 of
"<t>.<body>">`), sent one at a time in order by one worker, never retried (a lost webhook is
lost; the simulator's re-checks recover it). /sandbox/webhooks can drop them or hold them for
some clock seconds."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import Callable
from typing import Any

import aiohttp

from provider_sandbox.clock import SandboxClock
from provider_sandbox.state import SandboxState, WebhookRecord
from rfqkit.timestamps import isoformat_unix

SIGNATURE_HEADER = "X-Provider-Signature"
log = logging.getLogger("provider_sandbox.webhooks")


def signature(secret: str, timestamp: int, body: bytes) -> str:
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class WebhookSender:
    def __init__(
        self,
        clock: SandboxClock,
        state: Callable[[], SandboxState],
        url: str | None,
        secret: str,
        timeout_s: float,
    ) -> None:
        self._clock = clock  # event times and signature timestamps
        self._state = state  # the current state (reset replaces it)
        self.url = url  # target; None = nowhere
        self.secret = secret  # HMAC key
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._queue: asyncio.Queue[WebhookRecord] = asyncio.Queue()  # ready to send, in order
        self._held: list[WebhookRecord] = []  # delay mode: waiting for their send_at
        self._session: aiohttp.ClientSession | None = None  # opened by run()

    def emit(self, transfer_id: str, status: str, transfer: dict[str, Any]) -> None:
        """Called on every status change, synchronously, so events keep the order of changes."""
        state = self._state()
        now = self._clock.time()
        record = WebhookRecord(
            event_id=state.new_id("evt"), transfer_id=transfer_id, status=status, created=now
        )
        envelope = {
            "id": record.event_id,
            "type": "transfer.updated",
            "created": isoformat_unix(now),
            "data": {"transfer": transfer},
        }
        record.body = json.dumps(envelope, separators=(",", ":")).encode()
        state.webhooks.append(record)
        mode = state.settings.webhook_mode
        if mode == "drop":
            record.outcome = "dropped"
        elif self.url is None:
            record.outcome = "no_url"
        elif mode == "delay" and state.settings.webhook_delay_s > 0:
            record.send_at = now + state.settings.webhook_delay_s
            self._held.append(record)
        else:
            self._queue.put_nowait(record)

    def release_due(self) -> None:
        """Delay mode: hand over the held events whose time has come (the tick calls this)."""
        now = self._clock.time()
        due = [r for r in self._held if r.send_at is not None and r.send_at <= now]
        for record in due:
            self._held.remove(record)
            self._queue.put_nowait(record)

    def forget(self) -> None:
        """Reset: events of the old state are never sent."""
        self._held.clear()
        while not self._queue.empty():
            self._queue.get_nowait()

    @property
    def idle(self) -> bool:
        return self._queue.empty() and not self._held

    async def run(self) -> None:
        self._session = aiohttp.ClientSession(timeout=self._timeout)
        try:
            while True:
                record = await self._queue.get()
                await self._send(record)
        finally:
            await self._session.close()

    async def _send(self, record: WebhookRecord) -> None:
        assert self._session is not None
        url = self.url
        if url is None:
            record.outcome = "no_url"
            return
        timestamp = int(self._clock.time())
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(self.secret, timestamp, record.body),
        }
        try:
            async with self._session.post(url, data=record.body, headers=headers) as response:
                await response.read()
                record.response_status = response.status
                record.outcome = "delivered" if response.status < 300 else "failed"
        except (aiohttp.ClientError, TimeoutError) as exc:
            record.outcome = "failed"
            record.error = repr(exc)
            log.info("webhook %s to %s not delivered: %r", record.event_id, url, exc)
