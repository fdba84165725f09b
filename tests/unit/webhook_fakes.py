"""Fakes shared by the webhook unit tests: a frozen clock, a scripted transport and an archive
of finished deliveries in a dict."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from simulator.adapters.store.delivery_archive import DeliveryRow
from simulator.clock import Clock
from simulator.services.shared.events import Event
from simulator.services.webhooks.model import Delivery, DeliveryFilter, creation_key
from simulator.services.webhooks.ports import CertificateBundle, SendResult

START = 1_800_000_000.0
WALL = 1_800_000_000.75  # the fake's real clock: signatures' t


class FrozenClock(Clock):
    """Simulated time that moves only on advance(): attempt times are exact."""

    def __init__(self, start: float = START) -> None:
        super().__init__()
        self._start = start
        self.wall = WALL  # the real clock: moved only by a test, never by advance()

    def time(self) -> float:
        return self._start + self.offset_seconds

    def wall_time(self) -> float:
        return self.wall


@dataclass(frozen=True)
class Sent:
    url: str
    body: bytes
    headers: dict[str, str]
    at: float  # the fake clock's time when sent


@dataclass
class ScriptedTransport:
    """Answers from a script (a status, "timeout", "error" or "hang"), then `default`."""

    clock: Clock
    default: int | str = 200
    script: deque[int | str] = field(default_factory=deque)
    sent: list[Sent] = field(default_factory=list)
    in_flight: int = 0  # posts under way now
    max_in_flight: int = 0  # the most seen at once
    release: asyncio.Event = field(default_factory=asyncio.Event)  # ends "hang" answers
    hang_urls: set[str] = field(default_factory=set)  # these URLs always hang

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> SendResult:
        self.sent.append(Sent(url, body, dict(headers), self.clock.time()))
        answer = self.script.popleft() if self.script else self.default
        if url in self.hang_urls:
            answer = "hang"
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if answer == "hang":
                await self.release.wait()
                return SendResult(None, "timeout")
            await asyncio.sleep(0)
        finally:
            self.in_flight -= 1
        if answer == "timeout":
            return SendResult(None, "timeout")
        if answer == "error":
            return SendResult(None, "connection_error: refused")
        assert isinstance(answer, int)
        return SendResult(answer)


def rfq_event(
    event_type: str = "rfq.expired", rfq_id: str = "rfq_1", partner_id: str | None = "ptn_a"
) -> Event:
    body = {
        "id": f"{event_type}:{rfq_id}",
        "type": event_type,
        "created": "2027-01-15T08:00:00.000Z",
        "data": {"apiVersion": 2, "rfq": {"id": rfq_id, "late": False}},
    }
    return Event(
        id=str(body["id"]), type=event_type, created=START, partner_id=partner_id, body=body
    )


async def settle(predicate: Callable[[], bool], within_s: float = 2.0) -> None:
    """Let the event loop run until `predicate()` holds; fails after `within_s` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.001)


@dataclass
class RecordingCertificates:
    """A certificate authority port that hands out fixed PEM bytes and records the hostnames it
    was asked for (the worker tests never need a real CA; the HTTP tests use the real one)."""

    issued_for: list[tuple[str, ...]] = field(default_factory=list)

    async def ca_pem(self) -> bytes:
        return b"-----BEGIN CERTIFICATE-----\nfake-ca\n-----END CERTIFICATE-----\n"

    async def issue(self, hostnames: Sequence[str]) -> CertificateBundle:
        self.issued_for.append(tuple(hostnames))
        ca = await self.ca_pem()
        return CertificateBundle(cert_pem=b"leaf\n" + ca, key_pem=b"key\n", ca_pem=ca)


class MemoryDeliveryArchive:
    """The DeliveryArchive port (services/webhooks/ports.py) as rows in a dict, each written
    and read back through the history file's row schema, so what is read is a copy and never
    the object that was put."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}  # delivery id -> DeliveryRow as JSON

    def put(self, deliveries: list[Delivery]) -> None:
        for delivery in deliveries:
            self.rows[delivery.delivery_id] = DeliveryRow(delivery=delivery).model_dump_json()

    def get(self, delivery_id: str) -> Delivery | None:
        text = self.rows.get(delivery_id)
        return DeliveryRow.model_validate_json(text).delivery if text is not None else None

    def find(self, where: DeliveryFilter, limit: int | None, exclude: set[str]) -> list[Delivery]:
        kept = (self.get(i) for i in self.rows if i not in exclude)
        found = sorted((d for d in kept if d is not None and where.matches(d)), key=creation_key)
        return found[-limit:] if limit is not None else found

    def forget_finished_before(self, before: float) -> None:
        self.rows = {
            i: text
            for i, text in self.rows.items()
            if DeliveryRow.model_validate_json(text).delivery.ended_at >= before
        }

    def clear(self) -> None:
        self.rows = {}
